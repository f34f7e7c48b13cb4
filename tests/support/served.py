"""An in-process proxy for one test or module: `with served(config) as server: ...`.

Every test that needs a proxy of its own (another config, a feature installed, a store of its
own) starts it the same way and must stop it the same way, server first and then the handler's
backend connections and store, even when the test fails.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from hmsproxy.app import build_handler
from hmsproxy.config.model import Config
from hmsproxy.downstream.server import ProxyServer
from hmsproxy.pipeline.handler import Handler


@contextmanager
def served(config_or_handler: Config | Handler, **server_kwargs) -> Iterator[ProxyServer]:
    """A proxy on 127.0.0.1 and a free port serving `config` (or a handler already built, e.g. with
    extra features), with the config's transport, TLS and SASL unless `server_kwargs` say otherwise;
    stopped and its handler closed when the block ends."""
    handler = build_handler(config_or_handler) if isinstance(config_or_handler, Config) else config_or_handler
    s = handler.config.server  # as `hmsproxy serve` starts it; a test's keywords win
    server_kwargs = {"transport": s.transport, "tls": s.tls, "sasl": s.sasl, **server_kwargs}
    server = ProxyServer(handler, "127.0.0.1", 0, **server_kwargs).start()
    try:
        yield server
    finally:
        server.stop()
        handler.close()


@contextmanager
def served_many(config: Config, count: int) -> Iterator[list[ProxyServer]]:
    """`count` proxies of one config (sharing its store), all stopped when the block ends."""
    with ExitStack() as stack:
        yield [stack.enter_context(served(config)) for _ in range(count)]

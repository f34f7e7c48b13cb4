"""Shortcut hits served in C: a client's repeated reads answered without the interpreter.

A read relayed moments ago is relayed again as the client sent it (pipeline/shortcuts.py). In
Python a hit still costs some thirty function calls, each paid with cold caches after the
metastore's wait, and that kept hmsproxy above a bare byte forwarder (docs/benchmark.md, #28).
`HitLoop.serve` (protocol/_hits.c) reads the client's calls itself and serves each hit whole: the
shortcut found as FastPath.shortcut finds it, the call admitted by the same Gate as Breaker.enter
admits the Python path's (protocol/_gate.c: a tripped or capped metastore, or a sleeping watchdog,
leave it to Python), the C exchange, the metastore counted as answering, the answer sent. It
returns here only for what a hit cannot do:

- a call that is not a hit (any other method, an expired or missing shortcut, a caller, a config
  snapshot or a connection that changed): its bytes go back to the server's reader and the call
  takes `_process_one` as ever;
- a hit whose round trip failed or did not end in a whole answer (the metastore closed, timed out,
  was cut by a trip; an answer over WHOLE_IN_C): `Call.replay` hands that result to the shortcut's
  Python relay, which finishes it exactly as when it made the exchange itself;
- the hits' on_complete hooks (metrics), run in batches (pipeline/answered_hits.py): after
  HIT_BATCH hits, when the client has been quiet for IDLE_MS, when the loop returns, or before a
  metrics scrape. A feature whose hooks must see a call before its answer (audit, while it is on)
  keeps the method off this loop.

It runs for a client on a plain socket (no TLS, no SASL: their bytes are not the socket's) with the
buffered transport; `ProxyServer.serving_path` says so for `hmsproxy status`. A method is served here when a shortcut may be kept
for it and no feature has an on_arrival hook for it (limits: their verdict is per call).
"""

from __future__ import annotations

import os
import socket
import time

from thriftpy2.transport import TCyBufferedTransport, TTransportException

from hmsproxy.pipeline.shortcuts import MAX_KEY_BYTES, is_read
from hmsproxy.protocol._thriftwalk import H_FAILED as FAILED
from hmsproxy.protocol._thriftwalk import H_FLUSH as FLUSH
from hmsproxy.protocol._thriftwalk import H_GONE as GONE
from hmsproxy.protocol._thriftwalk import HitLoop
from hmsproxy.routing.methods import METHOD_SPECS
from hmsproxy.upstream.wire import WHOLE_IN_C, ThriftConnection

#: Hits whose on_complete hooks wait at most this many...
HIT_BATCH = 64
#: ...or this long while the client sends nothing (so a scrape sees them soon).
IDLE_MS = 100


class Hits:
    """One handler's hit loop (the server makes one): which methods it serves, and serving a client."""

    def __init__(self, handler):
        self.handler = handler
        self._eligible: dict = {}
        self._decided_for: tuple | None = None
        shortcuts = handler.shortcuts
        self._loop = HitLoop(
            shortcuts.known, handler.backends.gate, shortcuts.used_tally, ThriftConnection.close, handler.answered_hits.pending,
            WHOLE_IN_C, MAX_KEY_BYTES, HIT_BATCH, IDLE_MS,
        )  # fmt: skip

    def serves(self, conn, transport_cls) -> bool:
        """Whether a client connected over `conn` (the server's socket object) may be served here."""
        clock = self.handler.backends.breaker.clock
        return conn.__class__ is socket.socket and transport_cls is TCyBufferedTransport and clock is time.monotonic

    def eligible(self) -> dict:
        """method -> MethodSpec: the methods a hit is served for in C, under the current config snapshot
        and feature hooks."""
        handler = self.handler
        now = (handler.router, handler.features.version)
        if now != self._decided_for:
            config, hooks = now[0].config, handler.features.hooks
            self._eligible = {
                name: spec
                for name, spec in METHOD_SPECS.items()
                if is_read(name)
                and not hooks("on_arrival", spec)
                and all(hook.__self__.completes_after_answer(config) for hook in hooks("on_complete", spec))
            }
            self._decided_for = now
        return self._eligible

    def serve(self, session, conn: socket.socket, messages, quiet=lambda: None) -> tuple | None:
        """Serve `session`'s calls while they are hits. Returns when one is not, its bytes put back into
        `messages` (the server's reader): None, or its Call.replay when the hit loop sent it already.
        `quiet()` runs when the client has sent nothing for IDLE_MS after a hit (or HIT_BATCH hits were
        served): the server's IdleUpstream.wait. Raises as the server's reader would when the client leaves."""
        handler, serve = self.handler, self._loop.serve
        answered = handler.answered_hits
        try:
            while True:
                eligible = self.eligible()  # also follows a reload: decided for the router it is given
                status, data, shortcut, exchanged = serve(
                    conn.fileno(), session, session.caller, handler.router, eligible, session.connections
                )
                if status == FLUSH:
                    answered.complete()
                    quiet()
                    continue
                if status == GONE:
                    if data == 0:
                        raise TTransportException(type=TTransportException.END_OF_FILE, message="TSocket read 0 bytes")
                    raise OSError(data, os.strerror(data))
                messages.push(data)
                return (shortcut, exchanged) if status == FAILED else None
        finally:
            answered.complete()

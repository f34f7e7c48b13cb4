"""Idle connections beside busy clients (the short version of `make bench-connections`).

IDLE connections make one call the proxy answers itself (getStatusDetails; every WITH_BACKEND-th
a get_database too, which opens its session's connection to the primary: a Hive 2.3 metastore
takes ~0.15 s to set up a new connection's first call here, too slow for 300) and stay open while BUSY
clients loop get_database and get_table_names; every busy answer is right, every idle connection
still answers afterwards, and once all are closed the proxy has no client thread or tracked socket
left. No timing is asserted: the figures are the benchmark's (docs/benchmark.md).

With `server.upstream-idle-s`, clients that go quiet give up their metastore connections (counted in
the kernel's table of TCP connections to the metastore's port) and get them back at their next call.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import pytest
import thriftpy2.rpc

from hmsproxy.protocol import idl
from hmsproxy.upstream.wire import parse_uri
from tests.support.client_holds import held, settled
from tests.support.federation import prefixed_config
from tests.support.served import served
from tests.support.tcp_connections import established_to

IDLE = 300
WITH_BACKEND = 10
BUSY = 4
CALLS_PER_BUSY = 50


def _client(port: int):
    return thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", port, timeout=60_000)


@pytest.fixture(scope="module")
def proxy(metastores):
    with served(prefixed_config(metastores[0].uri, metastores[1].uri)) as server:
        yield server


def _busy(port: int) -> int:
    client = _client(port)
    try:
        for _ in range(CALLS_PER_BUSY):
            assert client.get_database("default").name == "default"
            assert isinstance(client.get_all_tables("default"), list)
        return CALLS_PER_BUSY
    finally:
        client.close()


def test_idle_connections_beside_busy_clients_leave_nothing_behind(proxy):
    before = held(proxy)
    idle = []
    try:
        for i in range(IDLE):
            client = _client(proxy.port)
            idle.append(client)
            assert client.getStatusDetails().startswith("hmsproxy ")
            if i % WITH_BACKEND == 0:
                assert client.get_database("default").name == "default"
        assert held(proxy)[1] - before[1] == IDLE  # one tracked socket, one thread each
        with ThreadPoolExecutor(BUSY) as pool:
            assert sum(pool.map(_busy, [proxy.port] * BUSY)) == BUSY * CALLS_PER_BUSY
        assert all(c.getStatusDetails().startswith("hmsproxy ") for c in idle)  # still served after their idle time
        assert all(c.get_database("default").name == "default" for c in idle[::WITH_BACKEND])
    finally:
        for client in idle:
            client.close()
    assert settled(proxy, before) == before


QUIET_S = 3.0  # server.upstream-idle-s in the test below: longer than opening the clients takes
QUIET_CLIENTS = 20


def wait_for(predicate, timeout_s: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.05)
    return predicate()


def _start_and_go_quiet(client, user: str | None = None) -> None:
    """As a Hive client starts (set_ugi, if `user`), then a read three times (the first on the full
    path, then shortcut hits served in C, hits.py), then nothing."""
    if user is not None:
        client.set_ugi(user, [])
    assert [client.get_database("default").name for _ in range(3)] == ["default"] * 3


def test_quiet_clients_give_up_their_metastore_connections_and_get_them_back(metastores):
    config = prefixed_config(metastores[0].uri, metastores[1].uri)
    config = replace(config, server=replace(config.server, upstream_idle_s=QUIET_S))
    _, port = parse_uri(metastores[0].uri)
    base = established_to(port)
    with served(config) as server:
        clients = [_client(server.port) for _ in range(QUIET_CLIENTS)]
        try:
            with ThreadPoolExecutor(QUIET_CLIENTS) as pool:
                list(pool.map(_start_and_go_quiet, clients, [f"quiet{i}" for i in range(QUIET_CLIENTS)]))
            opened = established_to(port) - base
            closed_in = time.monotonic()
            assert opened > QUIET_CLIENTS // 2, f"{opened} metastore connections for {QUIET_CLIENTS} clients"
            assert wait_for(lambda: established_to(port) == base), f"metastore connections left: {established_to(port) - base}"
            closed_in = time.monotonic() - closed_in
            # Each gets one back at its next call (its set_ugi replayed on it), hits again after it.
            with ThreadPoolExecutor(5) as pool:
                list(pool.map(_start_and_go_quiet, clients[:5]))
            assert established_to(port) - base == 5
            assert wait_for(lambda: established_to(port) == base)
            assert all(c.getStatusDetails().startswith("hmsproxy ") for c in clients)  # the clients' own connections stay
        finally:
            for client in clients:
                client.close()
    print(
        f"\n{opened} metastore connections of {QUIET_CLIENTS} quiet clients all closed {closed_in:.1f} s after (upstream-idle-s {QUIET_S:g})"
    )

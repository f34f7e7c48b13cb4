"""Idle connections beside busy clients (the short version of `make bench-connections`).

IDLE connections make one call the proxy answers itself (getStatusDetails; every WITH_BACKEND-th
a get_database too, which opens its session's connection to the primary: a Hive 2.3 metastore
takes ~0.15 s to set up a new connection's first call here, too slow for 300) and stay open while BUSY
clients loop get_database and get_table_names; every busy answer is right, every idle connection
still answers afterwards, and once all are closed the proxy has no client thread or tracked socket
left. No timing is asserted: the figures are the benchmark's (docs/benchmark.md).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
import thriftpy2.rpc

from hmsproxy.protocol import idl
from tests.support.client_holds import held, settled
from tests.support.federation import prefixed_config
from tests.support.served import served

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

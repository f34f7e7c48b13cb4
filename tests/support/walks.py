"""The two walks docs/architecture.md writes down, run for real: a repeated `get_table` and a first
`get_partitions_by_filter`, each from a client on plain sockets (the buffered transport: the hit
loop in C) and on the framed transport (the Python path only), through a proxy to a fake
metastore on a loopback socket.

`python -m tests.support.walks` prints them (to write the doc); tests/contract/test_walks.py
checks the doc against them, measured in a fresh interpreter (`--json`): a "first" call is first
only in a process where no other test has warmed the caches it fills.
"""

from __future__ import annotations

import json
import sys
import time
from contextlib import contextmanager

import thriftpy2.rpc
from thriftpy2.transport import TFramedTransportFactory

from hmsproxy.config.model import Config, DatabaseResolution, MetastoreConfig, ServerConfig
from hmsproxy.downstream.server import ProxyServer
from hmsproxy.pipeline.handler import Handler
from hmsproxy.protocol import idl
from hmsproxy.testing import FakeMetastore, database, partition, table
from tests.support.package_walk import Walk, packages, watching
from tests.support.socket_metastore import SocketMetastore

#: Long enough for the proxy's thread to be back waiting for the next call after it answered.
SETTLE_S = 0.2
#: get_tables before the one recorded: the first learns the metastore (catalogs), the next is remembered.
WARM_UP = 3


@contextmanager
def proxied(transport: str = "buffered"):
    """(a client of a proxy on `transport`, its Walk) in front of a metastore with sales.orders,
    partitioned by day. "buffered": plain sockets, the hit loop in C; "framed": the Python path only."""
    fake = FakeMetastore("primary", version="3.0")
    fake.create_database(database("sales"))
    fake.create_table(table("sales", "orders", partition_keys=(("day", "string"),)))
    fake.add_partition(partition("sales", "orders", ["2026-01-01"]))
    metastore = SocketMetastore(fake)
    primary = MetastoreConfig("primary", (metastore.uri,), primary=True)
    handler = Handler(Config(ServerConfig(backend_timeout_s=30.0, transport=transport), DatabaseResolution.PREFIXED, primary))
    server = ProxyServer(handler, "127.0.0.1", 0, transport=transport).start()
    try:
        with watching() as walk:  # the connection's thread starts inside: it is traced
            framed = {"trans_factory": TFramedTransportFactory()} if transport == "framed" else {}
            client = thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", server.port, timeout=20_000, **framed)
            try:
                client.get_all_databases()  # the connection's set-up (set_ugi, version probe) is behind us
                yield client, walk
            finally:
                client.close()
    finally:
        server.stop()
        handler.close()
        metastore.close()


def walks(client, walk: Walk) -> dict[str, list[tuple[str, str]]]:
    """The crossings of each walk by its name (from the call's bytes read to its answer sent)."""
    for _ in range(WARM_UP):
        client.get_table("sales", "orders")
    with walk.recorded() as repeated:
        client.get_table("sales", "orders")
        time.sleep(SETTLE_S)
    with walk.recorded() as first:
        client.get_partitions_by_filter("sales", "orders", "day = '2026-01-01'", -1)
        time.sleep(SETTLE_S)
    return {"repeated get_table": _of_the_call(repeated), "first get_partitions_by_filter": _of_the_call(first)}


#: Where the connection's thread goes between calls (whether a recording catches it is a race):
#: waiting for the next call, and the hit loop's batch of on_complete hooks for hits served earlier.
_BETWEEN_CALLS = ("downstream/server.py:_serve_client", "downstream/idle_upstream.py:wait", "pipeline/answered_hits.py:complete")


def _of_the_call(crossings: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(a, b) for a, b in crossings if a not in _BETWEEN_CALLS and b not in _BETWEEN_CALLS]


def lines(crossings: list[tuple[str, str]]) -> list[str]:
    """One line per crossing, as docs/architecture.md lists them."""
    return [f"{p:28} {a} → {b}" for (a, b), p in zip(crossings, packages(crossings))]


def measured() -> dict[str, list[str]]:
    """Every walk's lines by "<walk>, <transport>"."""
    found = {}
    for transport in ("buffered", "framed"):
        with proxied(transport) as (client, walk):
            for name, crossings in walks(client, walk).items():
                found[f"{name}, {transport}"] = lines(crossings)
    return found


if __name__ == "__main__":
    if sys.argv[1:] == ["--json"]:
        print(json.dumps(measured()))
        sys.exit(0)
    for name, found in measured().items():
        print(f"## {name}: {len(found)} crossings")
        for line in found:
            print(f"  {line}")

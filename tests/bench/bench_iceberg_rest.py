"""Iceberg REST remotes (`make bench-iceberg`): what a Hive client pays to read an Iceberg REST table
through hmsproxy, beside pyiceberg's RestCatalog asking the REST server directly.

Everything is real and local: Apache Iceberg's own REST catalog server (hmsproxy.dev.iceberg_rest,
SQLite catalog, local warehouse), one Hive 2.3 metastore (the proxy's primary) and `hmsproxy serve` in a
process of its own with remote databases `lake` -> namespace `bench` (table `orders`, one snapshot)
and `wide` -> namespace `wide` (`--tables` tables, default 1,000), made with CREATE REMOTE DATABASE.

- **get_table**: a thriftpy2 client's get_table("lake", "orders") through the proxy vs
  RestCatalog.load_table("bench.orders") (one GET of the table's metadata and its parsing); the
  target is proxy p50 <= 1.2x direct p50. A plain HTTP GET of the same table is measured beside
  them: the REST server's own time, without any client's parsing.
- **listing**: get_all_tables("wide") through the proxy vs RestCatalog.list_tables("wide") (the same
  one listing); and get_table_objects_by_name of every table through the proxy (the proxy loads
  each table from the catalog) vs list_tables plus load_table of every table direct (the same
  answers a client would need the REST way).

The two paths run in turn in each repetition, their order rotated; the report is p50 and p95 over all
calls of each path, and the p50 ratio. Run with `make bench-iceberg` or
`.venv/bin/python -m tests.bench.bench_iceberg_rest [--tables 100 --calls 50 --repeats 1]` (a smoke run).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

TARGET_RATIO = 1.2


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * pct / 100))]


def timed(call: Callable[[], object], count: int) -> list[float]:
    times = []
    for _ in range(count):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return times


def compare(name: str, paths: dict[str, Callable[[], object]], calls: int, repeats: int, warmup: int, log) -> dict:
    """p50/p95 in ms of each path over `repeats` rounds of `calls` calls, after `warmup` calls each;
    `ratio_p50` is the first path's p50 over the second's (any further path is context)."""
    for call in paths.values():
        timed(call, warmup)
    samples: dict[str, list[float]] = {path: [] for path in paths}
    order = list(paths)
    for rep in range(repeats):
        for path in order[rep % len(order) :] + order[: rep % len(order)]:
            samples[path].extend(timed(paths[path], calls))
    stats = {path: {"p50_ms": percentile(t, 50) * 1000, "p95_ms": percentile(t, 95) * 1000, "n": len(t)} for path, t in samples.items()}
    proxy, direct = (stats[path]["p50_ms"] for path in list(paths)[:2])
    stats["ratio_p50"] = proxy / direct
    for path in paths:
        log(f"{name:>24} {path:>34}: p50 {stats[path]['p50_ms']:8.2f} ms  p95 {stats[path]['p95_ms']:8.2f} ms  ({stats[path]['n']} calls)")
    return stats


def fill_catalog(catalog, tables: int, log) -> None:
    """Namespace `bench` with `orders` (three rows, one snapshot) and namespace `wide` with `tables` tables."""
    import pyarrow as pa
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType

    schema = Schema(NestedField(1, "order_id", LongType(), required=True), NestedField(2, "customer", StringType()))
    catalog.create_namespace("bench")
    orders = catalog.create_table("bench.orders", schema=schema)
    rows = pa.table({"order_id": pa.array([1, 2, 3], pa.int64()), "customer": ["ann", "bob", "cy"]})
    orders.append(rows.cast(pa.schema([pa.field("order_id", pa.int64(), nullable=False), ("customer", pa.string())])))
    catalog.create_namespace("wide")
    t0 = time.monotonic()
    for i in range(tables):
        catalog.create_table(f"wide.t{i:04d}", schema=schema)
    log(f"made {tables} tables in namespace wide in {time.monotonic() - t0:.1f}s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=1000, help="tables in the listed namespace")
    parser.add_argument("--calls", type=int, default=200, help="get_table calls per path per repetition")
    parser.add_argument("--list-calls", type=int, default=20, help="listings per path per repetition")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args(argv)
    log = lambda m: print(m, flush=True)  # noqa: E731

    import requests
    from pyiceberg.catalog.rest import RestCatalog

    from hmsproxy.clients.proxy import HmsProxyClient
    from hmsproxy.dev.iceberg_rest import IcebergRestServer, classpath
    from hmsproxy.dev.metastore import start_metastores
    from hmsproxy.dev.ports import free_port
    from tests.bench.bench_proxy import ProxyProcess, make_client, write_proxy_config

    tmp = Path(tempfile.mkdtemp(prefix="hmsproxy-bench-iceberg-"))
    rest = metastore = proxy = None
    try:
        log(f"starting Iceberg's REST catalog server, a Hive 2.3 metastore and the proxy (state in {tmp}) ...")
        rest = IcebergRestServer(tmp / "rest", free_port("0.0.0.0"), classpath(say=log)).start()
        (metastore,) = start_metastores(1, tmp / "hms", log=lambda m: None, log_level="WARN")
        port = free_port()
        write_proxy_config(tmp / "proxy.yml", port, metastore.uri, store_url=f"sqlite:///{tmp}/store.db")
        proxy = ProxyProcess(tmp / "proxy.yml", tmp / "proxy.log")
        proxy.wait_ready("127.0.0.1", port)

        direct = RestCatalog("direct", uri=rest.uri, warehouse=rest.warehouse)
        fill_catalog(direct, args.tables, log)
        props = f"'uri' = '{rest.uri}', 'warehouse' = '{rest.warehouse}'"
        with HmsProxyClient(f"thrift://127.0.0.1:{port}") as sql:
            sql.execute(f"CREATE REMOTE DATABASE lake CONNECTED TO bench VIA 'iceberg-rest' WITH DBPROPERTIES ({props})")
            sql.execute(f"CREATE REMOTE DATABASE wide CONNECTED TO wide VIA 'iceberg-rest' WITH DBPROPERTIES ({props})")
        client = make_client("127.0.0.1", port)
        http = requests.Session()
        table_url = f"{rest.uri}/v1/namespaces/bench/tables/orders"  # Iceberg's server answers /v1/config with no prefix
        try:
            described = client.get_table("lake", "orders")
            assert described.parameters["metadata_location"] == direct.load_table("bench.orders").metadata_location
            names = client.get_all_tables("wide")
            assert len(names) == args.tables == len(direct.list_tables("wide")), (len(names), args.tables)

            results = {
                "get_table": compare(
                    "get_table",
                    {
                        "proxy get_table": lambda: client.get_table("lake", "orders"),
                        "RestCatalog.load_table direct": lambda: direct.load_table("bench.orders"),
                        # the REST server's own floor: the same GET without pyiceberg's parsing
                        "HTTP GET of the table direct": lambda: http.get(table_url).raise_for_status(),
                    },
                    args.calls,
                    args.repeats,
                    min(args.calls, 50),
                    log,
                ),
                "list": compare(
                    f"list {args.tables} tables",
                    {
                        "proxy get_all_tables": lambda: client.get_all_tables("wide"),
                        "RestCatalog.list_tables direct": lambda: direct.list_tables("wide"),
                    },
                    args.list_calls,
                    args.repeats,
                    2,
                    log,
                ),
                "objects": compare(
                    f"describe {args.tables} tables",
                    {
                        "proxy get_table_objects_by_name": lambda: client.get_table_objects_by_name("wide", names),
                        "list_tables + load_table each direct": lambda: [direct.load_table(t) for t in direct.list_tables("wide")],
                    },
                    1,
                    args.repeats,
                    1,
                    log,
                ),
            }
        finally:
            client.close()
        print()
        print(f"Iceberg REST through hmsproxy vs pyiceberg RestCatalog direct; {args.repeats} repetitions, order rotated")
        print(f"{'':>24} | {'proxy p50 / p95 ms':>20} | {'direct p50 / p95 ms':>20} | p50 ratio (target <= {TARGET_RATIO})")
        for key, label in (("get_table", "get_table"), ("list", f"list {args.tables}"), ("objects", f"describe {args.tables}")):
            stats = results[key]
            proxy_path, direct_path = [p for p in stats if p != "ratio_p50"][:2]
            a, b = stats[proxy_path], stats[direct_path]
            print(
                f"{label:>24} | {a['p50_ms']:>9.2f} / {a['p95_ms']:>8.2f} | {b['p50_ms']:>9.2f} / {b['p95_ms']:>8.2f} | {stats['ratio_p50']:.2f}"
            )
        if args.json:
            Path(args.json).write_text(json.dumps(results, indent=2))
        return 0
    finally:
        if proxy is not None:
            proxy.stop()
        if metastore is not None:
            metastore.stop()
        if rest is not None:
            rest.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

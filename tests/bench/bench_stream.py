"""Streaming ingest: rows/s per writer and commit latency, through the proxy and straight to the metastore.

Run with ``make bench-stream`` or ``.venv/bin/python -m tests.bench.bench_stream [--quick]``
(docs/benchmark.md). Not a pytest test: the file name does not match ``test_*.py``.

In one run, against one Hive 2.3 metastore (default JVM flags, WARN logging: as fast per call as a
production one) and `hmsproxy serve` in front of it in a process of its own:

1. **rows/s per writer**: one writer streams CSV, then JSON, records of five columns (int, bigint,
   string, double, timestamp) into a Parquet table through the proxy, at 1,000 and at 100,000 rows
   per transaction; rows/s counts parsing, bucketing, writing the files and committing (targets:
   >= 50,000 rows/s at 100,000 rows per transaction);
2. **commit latency**: transactions of 1,000 rows, committed through the proxy and straight to the
   metastore, alternated; p50 and p99 of `commit()` each, and their ratio (target: p50 <= 100 ms
   through the proxy).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

COLUMNS = (("id", "int"), ("user_id", "bigint"), ("name", "string"), ("score", "double"), ("ts", "timestamp"))


def log(msg: str) -> None:
    print(f"[bench-stream] {msg}", file=sys.stderr, flush=True)


def records(fmt: str, count: int, start: int = 0) -> list[bytes]:
    out = []
    for i in range(start, start + count):
        ts = f"2026-11-25 10:{(i // 60) % 60:02d}:{i % 60:02d}.{i % 1000:03d}"
        if fmt == "csv":
            out.append(f"{i},{i * 7919},user {i},{i / 7:.4f},{ts}".encode())
        else:
            out.append(json.dumps({"id": i, "user_id": i * 7919, "name": f"user {i}", "score": i / 7, "ts": ts}).encode())
    return out


def stream_rate(uri: str, table: str, fmt: str, rows_per_txn: int, txns: int) -> float:
    """Rows per second of one writer: parse, write and commit `txns` transactions of `rows_per_txn` rows."""
    from hmsproxy.streaming import DelimitedInputWriter, HiveEndPoint, StrictJsonWriter

    ep = HiveEndPoint(uri, "default", table)
    writer = DelimitedInputWriter([c for c, _ in COLUMNS], ",", ep) if fmt == "csv" else StrictJsonWriter(ep)
    data = records(fmt, rows_per_txn)
    with ep.new_connection() as conn:
        batch = conn.fetch_transaction_batch(txns, writer)
        started = time.perf_counter()
        for _ in range(txns):
            batch.begin_next_transaction()
            rejected = batch.write_many(data)
            assert not rejected, rejected[:1]
            batch.commit()
        elapsed = time.perf_counter() - started
        batch.close()
    return rows_per_txn * txns / elapsed


def commit_latencies(targets: dict[str, tuple[str, str]], rounds: int) -> dict[str, list[float]]:
    """Seconds each commit() of a 1,000-row transaction took, per way (name -> (metastore URI, table in
    `default`)), alternated round by round."""
    from hmsproxy.streaming import DelimitedInputWriter, HiveEndPoint

    data = records("csv", 1000)
    opened = {}
    for way, (uri, table) in targets.items():
        ep = HiveEndPoint(uri, "default", table)
        conn = ep.new_connection()
        opened[way] = (conn, conn.fetch_transaction_batch(rounds + 1, DelimitedInputWriter([c for c, _ in COLUMNS], ",", ep)))
    times: dict[str, list[float]] = {way: [] for way in targets}
    try:
        for n in range(rounds + 1):
            order = list(opened) if n % 2 == 0 else list(reversed(opened))
            for way in order:
                batch = opened[way][1]
                batch.begin_next_transaction()
                batch.write_many(data)
                started = time.perf_counter()
                batch.commit()
                if n:  # the first round warms up
                    times[way].append(time.perf_counter() - started)
    finally:
        for conn, batch in opened.values():
            batch.close()
            conn.close()
    return times


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer transactions (a smoke run)")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args(argv)

    from hmsproxy.dev.metastore import start_metastores
    from hmsproxy.dev.ports import free_port
    from hmsproxy.testing.builders import parquet_table
    from tests.bench.bench_proxy import ProxyProcess, write_proxy_config

    tmp = Path(tempfile.mkdtemp(prefix="hmsproxy-bench-stream-"))
    log(f"starting a Hive 2.3 metastore (state in {tmp}) ...")
    (metastore,) = start_metastores(1, tmp / "hms", log=lambda m: None, timeout_s=180, fast_start=False, log_level="WARN")
    proxy = None
    try:
        port = free_port()
        write_proxy_config(tmp / "proxy.yml", port, metastore.uri, store_url=f"sqlite:///{tmp}/store.db")
        proxy = ProxyProcess(tmp / "proxy.yml", tmp / "proxy.log")
        proxy.wait_ready("127.0.0.1", port)
        uris = {"proxy": f"thrift://127.0.0.1:{port}", "direct": metastore.uri}
        client = metastore.client()
        try:
            for name in ("rates", "commits"):
                client.create_table(parquet_table("default", name, (tmp / "warehouse" / name).as_uri(), columns=COLUMNS))
        finally:
            client.close()
        results: dict = {"rows_per_s": {}, "commit_s": {}}
        quick = args.quick
        for fmt in ("csv", "json"):
            for rows_per_txn, txns in ((1000, 10 if quick else 60), (100_000, 1 if quick else 4)):
                rate = stream_rate(uris["proxy"], "rates", fmt, rows_per_txn, txns)
                results["rows_per_s"][f"{fmt}@{rows_per_txn}"] = rate
                log(f"{fmt:4} {rows_per_txn:>7,} rows/txn: {rate:>9,.0f} rows/s")
        times = commit_latencies({way: (uri, "commits") for way, uri in uris.items()}, 10 if quick else 100)
        for way, values in times.items():
            results["commit_s"][way] = {"p50": statistics.median(values), "p99": percentile(values, 0.99), "n": len(values)}
        print()
        print("rows/s per writer (through the proxy):")
        for key, rate in results["rows_per_s"].items():
            fmt, rows = key.split("@")
            target = "  (target >= 50,000)" if rows == "100000" else ""
            print(f"  {fmt:4} at {int(rows):>7,} rows/txn: {rate:>9,.0f}{target}")
        print("commit() of 1,000 rows:")
        proxy_p50, direct_p50 = results["commit_s"]["proxy"]["p50"], results["commit_s"]["direct"]["p50"]
        for way, figures in results["commit_s"].items():
            print(f"  {way:6} p50 {figures['p50'] * 1000:6.1f} ms  p99 {figures['p99'] * 1000:6.1f} ms  ({figures['n']} commits)")
        print(f"  proxy/direct p50: {proxy_p50 / direct_p50:.2f}x  (target: proxy p50 <= 100 ms)")
        if args.json:
            Path(args.json).write_text(json.dumps(results, indent=2))
    finally:
        if proxy is not None:
            proxy.stop()
        metastore.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

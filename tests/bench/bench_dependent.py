"""Dependent tables: what reading through the view the proxy writes costs Spark, against reading the
underlying table directly.

Run with ``make bench-dependent`` or ``.venv/bin/python -m tests.bench.bench_dependent [--days N]``
(see docs/benchmark.md). Not a pytest test: the file name does not match ``test_*.py``.

In one run:

1. a Hive 2.3 metastore, hmsproxy in front of it, a local SparkSession through the proxy
   (tests/bench/stack.py);
2. ``bench.events`` (Parquet, partitioned by ds, hr) with ``--days`` x 24 hourly partitions
   (8,760 at the default 365 days), each holding one small Parquet file, added over Thrift in
   batches; ``bench.events_daily``, a dependent table on it with every day published;
3. ``SELECT count(1), sum(value) ... WHERE ds = <a day in the middle>`` on each, alternated,
   ``--repeats`` times after a warm-up (30 by default: the differences are tens of milliseconds and the noise as large): the planning time (analysis with the view's text,
   partition pruning in the metastore, the physical plan) and the whole query's time, medians;
4. the ratios (target: at most 1.2x) and the view text's size.
"""

from __future__ import annotations

import argparse
import datetime
import statistics
import sys
import time

DB, TABLE, DAILY = "bench", "events", "events_daily"
ROWS_PER_FILE = 4


def log(msg: str) -> None:
    print(f"[bench-dependent] {msg}", file=sys.stderr, flush=True)


def days(count: int) -> list[str]:
    first = datetime.date(2025, 1, 1)
    return [(first + datetime.timedelta(days=n)).isoformat() for n in range(count)]


def generate(stack, day_names: list[str]) -> int:
    """The hourly table: one Parquet file per partition, partitions added straight to the metastore. Returns their count."""
    from pathlib import Path
    from urllib.parse import urlparse

    import pyarrow as pa
    import pyarrow.parquet as pq

    from hmsproxy.protocol import idl

    spark = stack.spark
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {DB}")
    spark.sql(f"CREATE TABLE {DB}.{TABLE} (key STRING, value INT) PARTITIONED BY (ds STRING, hr STRING) STORED AS PARQUET")
    client = stack.metastore.client()
    try:
        table = client.get_table(DB, TABLE)
        root = Path(urlparse(table.sd.location).path)
        parts, n = [], 0
        for ds in day_names:
            for hr in range(24):
                where = root / f"ds={ds}" / f"hr={hr:02d}"
                where.mkdir(parents=True)
                values = list(range(n, n + ROWS_PER_FILE))
                pq.write_table(
                    pa.table({"key": [f"k{v}" for v in values], "value": pa.array(values, pa.int32())}), where / "part-0.parquet"
                )
                n += ROWS_PER_FILE
                sd = idl.hive.StorageDescriptor(**{**vars(table.sd), "location": f"file://{where}"})  # as_uri() would escape the =
                parts.append(idl.hive.Partition(dbName=DB, tableName=TABLE, values=[ds, f"{hr:02d}"], sd=sd, parameters={}))
        for i in range(0, len(parts), 500):
            client.add_partitions(parts[i : i + 500])
        return len(parts)
    finally:
        client.close()


def timed(spark, query: str) -> tuple[float, float, tuple]:
    """(planning seconds, whole query seconds, answer)."""
    t0 = time.perf_counter()
    frame = spark.sql(query)
    frame._jdf.queryExecution().executedPlan()  # analysis, optimisation, partition pruning, physical plan
    planned = time.perf_counter() - t0
    answer = tuple(frame.collect()[0])
    return planned, time.perf_counter() - t0, answer


def run(args: argparse.Namespace) -> int:
    import thriftpy2.rpc

    from hmsproxy.clients.proxy import HmsProxyClient
    from hmsproxy.protocol import idl
    from tests.bench.stack import spark_through_proxy

    with spark_through_proxy("bench-dependent", log, keep_state=args.keep_state) as stack:
        spark = stack.spark
        day_names = days(args.days)
        t0 = time.perf_counter()
        count = generate(stack, day_names)
        log(f"{count:,} hourly partitions in {time.perf_counter() - t0:.1f}s")
        t0 = time.perf_counter()
        with HmsProxyClient(stack.server.uri) as client:
            client.execute(f"CREATE DEPENDENT TABLE {DB}.{DAILY} PARTITIONED BY (ds string) DEPENDS ON TABLE {DB}.{TABLE}")
            specs = " ".join(f"PARTITION (ds='{d}')" for d in day_names)
            client.execute(f"ALTER TABLE {DB}.{DAILY} ADD {specs}")
        log(f"{len(day_names)} days published in {time.perf_counter() - t0:.1f}s")
        proxy = thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", stack.server.port, timeout=60000)
        try:  # the view text is the proxy's own
            text = proxy.get_table(DB, DAILY).viewExpandedText
        finally:
            proxy.close()

        day = day_names[len(day_names) // 2]
        queries = {
            "direct": f"SELECT count(1), sum(value) FROM {DB}.{TABLE} WHERE ds = '{day}'",
            "dependent": f"SELECT count(1), sum(value) FROM {DB}.{DAILY} WHERE ds = '{day}'",
        }
        samples: dict[str, list[tuple[float, float]]] = {k: [] for k in queries}
        answers = {}
        for n in range(args.repeats + 1):
            for label, query in queries.items():
                planned, total, answers[label] = timed(spark, query)
                if n:  # the first round warms both up
                    samples[label].append((planned, total))
        report(samples, answers, count, len(day_names), len(text))
        return 0 if answers["direct"] == answers["dependent"] and answers["direct"][0] == 24 * ROWS_PER_FILE else 1


def report(samples, answers, partitions: int, published: int, text_bytes: int) -> None:
    med = {k: (statistics.median(p for p, _ in v), statistics.median(t for _, t in v)) for k, v in samples.items()}
    print(f"\nDependent table over {partitions:,} hourly partitions, {published} days published; view text {text_bytes:,} bytes")
    print(f"{'query':<12}{'planning (s)':>14}{'whole query (s)':>18}   answer")
    for label, (planned, total) in med.items():
        print(f"{label:<12}{planned:>14.3f}{total:>18.3f}   {answers[label]}")
    (plan_d, total_d), (plan_v, total_v) = med["direct"], med["dependent"]
    print(
        f"dependent / direct: planning {plan_v / plan_d:.2f}x ({(plan_v - plan_d) * 1000:+.0f} ms), "
        f"whole query {total_v / total_d:.2f}x ({(total_v - total_d) * 1000:+.0f} ms) (target <= 1.2x)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=365, help="published days, 24 hourly partitions each (default 365)")
    parser.add_argument("--repeats", type=int, default=30, help="timed rounds after one warm-up (default 30)")
    parser.add_argument("--keep-state", action="store_true", help="keep the temp dir (metastore, files) for a look afterwards")
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())

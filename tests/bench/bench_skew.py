"""Skewed partitions: a full partition scan against hmsproxy's pruned read, and the layout job's throughput.

Run with ``make bench-skew`` or ``.venv/bin/python -m tests.bench.bench_skew [--rows N]`` (see
docs/benchmark.md). Not a pytest test: the file name does not match ``test_*.py``.

What it does, in one run (a few minutes on 2 cores at the default 10 M rows):

1. starts one real Hive 2.3 metastore (state in a temp dir), ``hmsproxy serve`` in its own process in
   front of it, and a local[2] SparkSession whose metastore is the proxy;
2. generates ``bench.events`` partition ``ds=2026-11-01`` with Spark: ``--rows`` rows, 10
   heavy countries holding ``--heavy-share`` of them (equal shares) and 990 light countries
   sharing the rest, in Spark's own files (as an ordinary INSERT leaves them);
3. queries one heavy and one light country as a FULL scan (plain Spark SQL on the
   partition as written), runs ``skew-layout --detect`` on it (timed: rows/s), then queries
   again as a PRUNED read (``hmsproxy.clients.spark.read``), as plain Spark SQL on the
   laid-out files and, where the Spark extension is built, as plain Spark SQL with it on (the
   layout's groups pruned in the plan); each query counts the matching rows and XORs a hash of
   all their columns (so every column is read, as for a query returning whole rows), ``--repeats``
   times after one warm-up, medians;
4. prints wall time, files and bytes each query opens, and the ratios.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

DB, TABLE, DAY = "bench", "events", "2026-11-01"
HEAVY, LIGHT = "H3", "L123"


def log(msg: str) -> None:
    print(f"[bench-skew] {msg}", file=sys.stderr, flush=True)


#: --wide: what a clickstream row also carries (a URL and a session id that don't compress away).
WIDE_COLUMNS = ", url STRING, session STRING"


def generate(spark, rows: int, heavy_share: float, wide: bool = False) -> None:
    from pyspark.sql import functions as F

    spark.sql(f"CREATE DATABASE IF NOT EXISTS {DB}")
    spark.sql(f"DROP TABLE IF EXISTS {DB}.{TABLE}")
    spark.sql(
        f"CREATE TABLE {DB}.{TABLE} (id BIGINT, country STRING, amount INT, item STRING, ts BIGINT{WIDE_COLUMNS if wide else ''}) "
        "PARTITIONED BY (ds STRING) STORED AS PARQUET"
    )
    # u in [0, 1): below heavy_share one of 10 heavy values (equal shares), else one of 990 light ones.
    u = F.pmod(F.xxhash64("id"), F.lit(1_000_000)) / F.lit(1_000_000.0)
    light = F.concat(F.lit("L"), F.pmod(F.xxhash64("id", F.lit(7)), F.lit(990)).cast("string"))
    heavy = F.concat(F.lit("H"), F.floor(u / F.lit(heavy_share / 10)).cast("string"))
    frame = spark.range(0, rows, numPartitions=8).select(
        F.col("id"),
        F.when(u < heavy_share, heavy).otherwise(light).alias("country"),
        (F.col("id") % 1000).cast("int").alias("amount"),
        F.concat(F.lit("item-"), (F.col("id") % 100_000).cast("string")).alias("item"),
        (F.col("id") * 7).alias("ts"),
    )
    if wide:
        url = F.concat(
            F.lit("https://shop.example.com/p/"), (F.col("id") % 50_000).cast("string"), F.lit("?ref="), F.sha1(F.col("id").cast("string"))
        )
        frame = frame.withColumn("url", url).withColumn("session", F.md5((F.col("id") / 20).cast("bigint").cast("string")))
    frame.createOrReplaceTempView("bench_src")
    spark.sql(f"INSERT INTO {DB}.{TABLE} PARTITION (ds='{DAY}') SELECT * FROM bench_src")
    spark.catalog.dropTempView("bench_src")


@dataclasses.dataclass
class Measured:
    label: str
    seconds: float
    files: int
    bytes: int
    answer: tuple


def opened(frame) -> tuple[int, int]:
    """Files (and their bytes) the query's scan opens."""
    paths = [Path(urlparse(f).path) for f in frame.inputFiles() if f"ds={DAY}" in f]
    return len(paths), sum(p.stat().st_size for p in paths)


def measure(label: str, make, repeats: int) -> Measured:
    from pyspark.sql import functions as F

    def once():
        t0 = time.perf_counter()
        frame = make()  # the pruned reader's metastore calls and file listing count too
        # Every column is read (as a query returning whole rows would), not just country and amount.
        # XOR of the rows' hashes: cheap per row, so the measure is the reading, not arithmetic
        # (a decimal sum of the hashes cost more per matching row than reading the row did).
        every = F.xxhash64(*[F.col(c) for c in frame.columns])
        answer = tuple(frame.agg(F.count(F.lit(1)), F.bit_xor(every)).first())
        return time.perf_counter() - t0, answer, frame

    once()  # warm-up: JIT, file system caches
    runs = [once() for _ in range(repeats)]
    files, size = opened(runs[-1][2])
    return Measured(label, statistics.median(r[0] for r in runs), files, size, runs[-1][1])


def full_scan(spark, country: str):
    def make():
        spark.catalog.refreshTable(f"{DB}.{TABLE}")
        return spark.table(f"{DB}.{TABLE}").where(f"ds = '{DAY}' AND country = '{country}'")

    return make


def run(args: argparse.Namespace) -> int:
    import io

    from hmsproxy.clients.spark import read
    from hmsproxy.jobs.cli import build_parser, run_job_command
    from hmsproxy.jobs.context import JobContext
    from hmsproxy.jobs.spark_extension import ENABLED_CONF, EXTENSION_CLASS
    from tests.bench.stack import spark_through_proxy

    with spark_through_proxy(
        "bench-skew", log, driver_memory="3g", keep_state=args.keep_state, proxy_process=not args.proxy_in_process
    ) as stack:
        spark, server = stack.spark, stack.server
        log(f"generating {args.rows:,} rows ({args.heavy_share:.0%} in 10 heavy values) ...")
        t0 = time.perf_counter()
        generate(spark, args.rows, args.heavy_share, args.wide)
        log(f"generated in {time.perf_counter() - t0:.1f}s")

        results = [measure(f"full scan, heavy {HEAVY}", full_scan(spark, HEAVY), args.repeats)]
        results.append(measure(f"full scan, light {LIGHT}", full_scan(spark, LIGHT), args.repeats))

        log("running skew-layout --detect ...")
        ctx = JobContext(server.uri, spark=spark, stdout=io.StringIO(), stderr=io.StringIO())
        argv = ["skew-layout", f"{DB}.{TABLE}", "--detect", "--columns", "country", "--top", "10", "--min-share", "0.01"]
        t0 = time.perf_counter()
        status = run_job_command(build_parser().parse_args(argv), ctx)
        job_seconds = time.perf_counter() - t0
        if status != 0:
            log(f"the job failed:\n{ctx.stderr.getvalue()}")
            return 1
        log(ctx.stdout.getvalue().strip())

        for country, kind in ((HEAVY, "heavy"), (LIGHT, "light")):
            results.append(
                measure(f"pruned read, {kind} {country}", lambda c=country: read(spark, f"{DB}.{TABLE}", ds=DAY, country=c), args.repeats)
            )
        for country, kind in ((HEAVY, "heavy"), (LIGHT, "light")):
            results.append(measure(f"plain SQL after layout, {kind} {country}", full_scan(spark, country), args.repeats))
        if spark.conf.get("spark.sql.extensions", "") == EXTENSION_CLASS:  # built (make install with mvn)
            spark.conf.set(ENABLED_CONF, "true")
            for country, kind in ((HEAVY, "heavy"), (LIGHT, "light")):
                results.append(measure(f"plain SQL + extension, {kind} {country}", full_scan(spark, country), args.repeats))
            spark.conf.set(ENABLED_CONF, "false")
        else:
            log("the Spark extension is not built (make install needs mvn): plain Spark SQL with it is not measured")

        report(results, args, job_seconds)
        return 0 if all(r.answer == results[i % 2].answer for i, r in enumerate(results)) else 1


def report(results: list[Measured], args, job_seconds: float) -> None:
    shape = "7 columns (--wide: with url and session)" if args.wide else "5 columns"
    print(
        f"\n{args.rows:,} rows of {shape} in one partition; 10 heavy values hold {args.heavy_share:.0%}; medians of {args.repeats} runs\n"
    )
    print(f"{'query':42} {'wall s':>8} {'files':>6} {'MiB':>9} {'rows':>10}")
    for r in results:
        print(f"{r.label:42} {r.seconds:8.2f} {r.files:6d} {r.bytes / 2**20:9.1f} {r.answer[0]:10,}")
    full_heavy, full_light, pruned_heavy, pruned_light = results[:4]
    print()
    for kind, full, pruned in (("heavy", full_heavy, pruned_heavy), ("light", full_light, pruned_light)):
        speedup = full.seconds / pruned.seconds
        print(
            f"{kind}: pruned read {speedup:.1f}x faster than the full scan, "
            f"{full.files / max(pruned.files, 1):.1f}x fewer files, {full.bytes / max(pruned.bytes, 1):.1f}x fewer bytes; "
            f"same answer: {full.answer == pruned.answer}"
        )
    print(f"skew-layout: {args.rows:,} rows in {job_seconds:.1f}s = {args.rows / job_seconds:,.0f} rows/s")
    print(
        f"targets: heavy >= 5x faster: {full_heavy.seconds / pruned_heavy.seconds >= 5}; light no slower: {pruned_light.seconds <= full_light.seconds}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.bench_skew", description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000, help="rows in the partition (default 10,000,000)")
    parser.add_argument("--heavy-share", type=float, default=0.8, help="share of the rows in the 10 heavy values (default 0.8)")
    parser.add_argument("--proxy-in-process", action="store_true", help="run hmsproxy in the bench's process (default: hmsproxy serve)")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per query after one warm-up (default 5)")
    parser.add_argument("--wide", action="store_true", help="rows with a URL and a session id too (about 110 more bytes each)")
    parser.add_argument("--keep-state", action="store_true", help="keep the temporary directory")
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())

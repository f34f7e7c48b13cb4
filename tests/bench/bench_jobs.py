"""Maintenance jobs over many small partitions: what each partition costs, beside one plain Spark pass.

Run with ``make bench-jobs`` or ``.venv/bin/python -m tests.bench.bench_jobs [--partitions 24,1000,10000]``
(see docs/benchmark.md). Not a pytest test: the file name does not match ``test_*.py``.

For each partition count N, on one real Hive 2.3 metastore behind hmsproxy and a local[2] SparkSession
whose metastore is the proxy (tests/bench/stack.py):

1. the table ``bench.jobs_<N>`` (``user_id BIGINT, action STRING`` by ``ds``): two small Parquet files
   per partition (so compact has work), written once by pyarrow into ``--table-cache`` and hard-linked
   into the table's location on each run, the partitions added with ``add_partitions`` in batches of
   500, not N statements;
2. the plain pass: ``SELECT input_file_name(), count(*) … GROUP BY input_file_name()`` written to
   Parquet, reading every row once, as the floor the jobs are measured against;
3. ``rebuild-index`` of a COMPACT index on ``user_id``, ``compact --files 1`` and ``skew-layout`` on
   ``action`` (skewed value ``view``, declared on the table), each run in this process as
   ``hmsproxy job`` runs it (each a Spark pass per batch of partitions, docs/jobs.md);

and prints, per job: seconds, the ratio to the plain pass, seconds per extra partition (the slope from
the smallest N), and the driver's peak resident memory above what it was before the job (this process
and its Spark JVM by pid, sampled every 0.2 s; not the metastore, the proxy or PySpark's workers),
and the Spark JVM's live heap: after a full collection before the job, and the highest during the
job after a full collection forced every ``--heap-collect-s`` seconds (LiveHeap), which RSS cannot
show (a JVM keeps the heap it grew to). ``--jobs`` picks the jobs, ``--rows`` the rows per partition.
``--profile DIR`` also keeps a cProfile of the driver per job (``DIR/<N>-<job>.prof``) and prints where its seconds
went: the top functions by cumulative time, and the Spark jobs it ran with their durations (from Spark's UI API).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import dataclasses
import datetime
import io
import os
import sys
import threading
import time
from collections.abc import Callable

DB = "bench"
ADD_BATCH = 500
JOBS = ("rebuild-index", "compact", "skew-layout")


def log(msg: str) -> None:
    print(f"[bench-jobs] {msg}", file=sys.stderr, flush=True)


def days(n: int) -> list[str]:
    start = datetime.date(2000, 1, 1)
    return [(start + datetime.timedelta(days=i)).isoformat() for i in range(n)]


def driver_pids(spark) -> list[int]:
    """The driver's processes: this Python process and its Spark JVM (local mode: the executors' too),
    not the metastore, the proxy or PySpark's forked Python workers (whose shared pages a sum counts
    once per fork)."""
    return [os.getpid(), int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())]


def driver_rss_bytes(pids: list[int]) -> int:
    from tests.bench.process_tree import resident_bytes

    return sum(resident_bytes(pid) for pid in pids)


#: How often a job's live heap is read after a forced full collection (LiveHeap.sample).
DEFAULT_HEAP_COLLECT_S = 5.0


class LiveHeap:
    """The Spark JVM's heap as its garbage collections left it: per heap pool, what was in use after
    the pool's latest collection (MemoryPoolMXBean.getCollectionUsage), summed. Unlike RSS (a JVM
    keeps the heap it grew to) this falls again when the job lets go of what it held."""

    def __init__(self, spark, collect_every_s: float = 0.0):
        self._jvm = spark._jvm
        factory = self._jvm.java.lang.management.ManagementFactory
        self._pools = [p for p in factory.getMemoryPoolMXBeans() if p.getType().toString() == "Heap memory"]
        self.collect_every_s = collect_every_s
        self._collected_at = 0.0

    def collect(self) -> int:
        """After a full collection: the live set now."""
        self._jvm.java.lang.System.gc()
        self._collected_at = time.monotonic()
        return self.bytes()

    def sample(self) -> int:
        """The live heap during a job: after a forced full collection every `collect_every_s` (G1 may
        not collect its old generation in a whole job, so what its own collections left can miss the
        job's live set: two runs of one job read +30 and +334 MiB that way); between those, or with
        0, what the JVM's own collections left."""
        if self.collect_every_s and time.monotonic() - self._collected_at >= self.collect_every_s:
            return self.collect()
        return self.bytes()

    def bytes(self) -> int:
        used = 0
        for pool in self._pools:
            usage = pool.getCollectionUsage()
            used += usage.getUsed() if usage is not None else 0
        return used


class PeakRss:
    """The highest resident size of the driver's processes while the block runs, above its start; and,
    given a LiveHeap, the highest live heap of its JVM above the live set at the start."""

    def __init__(self, pids: list[int], heap: LiveHeap | None = None):
        self.pids = pids
        self.heap = heap
        self.heap_start = self.heap_peak = 0

    def __enter__(self) -> PeakRss:
        if self.heap is not None:
            self.heap_start = self.heap_peak = self.heap.collect()
        self.start = self.peak = driver_rss_bytes(self.pids)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(0.2):
            self._take()

    def _take(self) -> None:
        self.peak = max(self.peak, driver_rss_bytes(self.pids))
        if self.heap is not None:
            self.heap_peak = max(self.heap_peak, self.heap.sample())

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(5)
        self._take()

    @property
    def heap_growth_mib(self) -> float:
        return (self.heap_peak - self.heap_start) / 2**20

    @property
    def growth_mib(self) -> float:
        return (self.peak - self.start) / 2**20

    @property
    def peak_mib(self) -> float:
        return self.peak / 2**20


@dataclasses.dataclass
class Measured:
    partitions: int
    label: str
    seconds: float
    rss_growth_mib: float
    rss_peak_mib: float
    output: str = ""
    #: The JVM's live heap (LiveHeap): at the start (after a full collection) and its highest above that.
    heap_start_mib: float = 0.0
    heap_growth_mib: float = 0.0


def cached_files(cache: str, n: int, rows: int) -> str:
    """The table's data files, written once per (n, rows) into `cache` and kept between runs.

    Written with pyarrow, not Spark: 2n files from one Python loop take seconds where Spark's
    partitionBy commit renames each file (minutes at 10,000 partitions). Partition i holds the ids
    i, i + n, i + 2n, ... in two files of rows/2 rows each (two files, so compact has work).
    A marker written last tells a complete copy from one a killed run left behind.
    """
    import shutil

    import pyarrow as pa
    import pyarrow.parquet as pq

    root = os.path.join(cache, f"jobs_{n}x{rows}")
    if os.path.exists(os.path.join(root, ".complete")):
        return root
    shutil.rmtree(root, ignore_errors=True)
    half = rows // 2
    for i, ds in enumerate(days(n)):
        directory = os.path.join(root, f"ds={ds}")
        os.makedirs(directory)
        for part, (first, last) in enumerate(((0, half), (half, rows))):
            ids = pa.array(range(i + first * n, i + last * n, n), pa.int64())
            actions = pa.array(["buy" if x % 3 == 0 else "view" for x in ids.to_pylist()])
            pq.write_table(pa.table({"user_id": ids, "action": actions}), os.path.join(directory, f"part-{part}.parquet"))
    open(os.path.join(root, ".complete"), "w").close()
    return root


def link_tree(source: str, target: str) -> None:
    """Hard links of the cached files (jobs replace files, never write into them), a copy across devices."""
    import shutil

    def link_or_copy(src: str, dst: str) -> None:
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)

    shutil.copytree(source, target, copy_function=link_or_copy, ignore=shutil.ignore_patterns(".complete"))


def make_table(spark, uri: str, n: int, rows: int, root: str, cache: str) -> str:
    """bench.jobs_<n>: n partitions of `rows` rows in two files each, from the cache, added in batches."""
    from hmsproxy.jobs.metastore import MetastoreClient
    from hmsproxy.protocol import idl

    table, location = f"jobs_{n}", f"{root}/jobs_{n}"
    link_tree(cached_files(cache, n, rows), location)
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {DB}")
    spark.sql(
        f"CREATE EXTERNAL TABLE {DB}.{table} (user_id BIGINT, action STRING) PARTITIONED BY (ds STRING) "
        f"STORED AS PARQUET LOCATION 'file://{location}'"
    )
    names = days(n)
    with MetastoreClient(uri) as ms:
        t = ms.get_table(DB, table)
        for first in range(0, n, ADD_BATCH):
            batch = []
            for ds in names[first : first + ADD_BATCH]:
                sd = copy.deepcopy(t.sd)
                sd.location = f"file://{location}/ds={ds}"
                batch.append(idl.hive.Partition(values=[ds], dbName=DB, tableName=table, sd=sd, parameters={}))
            ms._client.add_partitions(batch)
    return f"{DB}.{table}"


def plain_pass(spark, table: str, out: str) -> None:
    """Every row read once, one aggregate per file written to Parquet: the floor the jobs are held to.
    Its partitions listed with a task per core as the jobs list theirs: Spark's default, a task per
    partition directory, spends most of a pass over 10,000 partitions starting listing tasks."""
    from hmsproxy.jobs.staged_pass import few_listing_tasks

    spark.catalog.refreshTable(table)
    with few_listing_tasks(spark):
        query = spark.sql(f"SELECT input_file_name() AS file, count(*) AS n FROM {table} GROUP BY input_file_name()")
        query.write.mode("overwrite").parquet(out)


def run_job(spark, uri: str, argv: list[str]) -> str:
    from hmsproxy.jobs.cli import build_parser, run_job_command
    from hmsproxy.jobs.context import JobContext

    ctx = JobContext(uri, spark=spark, stdout=io.StringIO(), stderr=io.StringIO())
    status = run_job_command(build_parser().parse_args([*argv, "--uri", uri]), ctx)
    if status != 0:
        raise SystemExit(f"[bench-jobs] {argv[0]} failed ({status}):\n{ctx.stderr.getvalue()}")
    return ctx.stdout.getvalue().strip().splitlines()[-1] if ctx.stdout.getvalue().strip() else ""


def timed(
    n: int, label: str, pids: list[int], work: Callable[[], str | None], profile: Profiler | None = None, heap: LiveHeap | None = None
) -> Measured:
    with PeakRss(pids, heap) as rss, profile.of(n, label) if profile else contextlib.nullcontext():
        t0 = time.perf_counter()
        output = work() or ""
        seconds = time.perf_counter() - t0
    measured = Measured(n, label, seconds, rss.growth_mib, rss.peak_mib, output, rss.heap_start / 2**20, rss.heap_growth_mib)
    log(
        f"N={n} {label}: {seconds:.1f} s, driver RSS +{rss.growth_mib:.0f} MiB (peak {rss.peak_mib:.0f} MiB), "
        f"JVM live heap {measured.heap_start_mib:.0f} MiB +{measured.heap_growth_mib:.0f} MiB {output}"
    )
    return measured


class Profiler:
    """--profile: the driver's Python under cProfile per job, and the Spark jobs it ran (UI REST API)."""

    def __init__(self, directory: str, spark):
        self.directory, self.spark = directory, spark
        os.makedirs(directory, exist_ok=True)

    def _spark_jobs(self) -> list[dict]:
        import json
        import urllib.request

        sc = self.spark.sparkContext
        with urllib.request.urlopen(f"{sc.uiWebUrl}/api/v1/applications/{sc.applicationId}/jobs", timeout=30) as answer:
            return json.load(answer)

    @contextlib.contextmanager
    def of(self, n: int, label: str):
        import cProfile
        import pstats

        before = {j["jobId"] for j in self._spark_jobs()}
        profiler = cProfile.Profile()
        profiler.enable()
        try:
            yield
        finally:
            profiler.disable()
            path = os.path.join(self.directory, f"{n}-{label.split()[0]}.prof")
            profiler.dump_stats(path)
            text = io.StringIO()
            pstats.Stats(profiler, stream=text).sort_stats("cumulative").print_stats(r"hmsproxy/jobs|staged_pass|py4j.*send_command", 40)
            log(f"N={n} {label}: cProfile ({path}):\n{text.getvalue()}")
            ran = sorted((j for j in self._spark_jobs() if j["jobId"] not in before), key=lambda j: j["jobId"])
            lines = [f"  job {j['jobId']}: {_job_seconds(j):.1f} s, {j['numTasks']} tasks, {j['name'][:80]}" for j in ran]
            total = sum(_job_seconds(j) for j in ran)
            log(f"N={n} {label}: {len(ran)} Spark jobs, {total:.1f} s in all:\n" + "\n".join(lines))


def _job_seconds(job: dict) -> float:
    def at(text: str) -> float:
        return datetime.datetime.strptime(text.replace("GMT", "+0000"), "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()

    return at(job["completionTime"]) - at(job["submissionTime"]) if job.get("completionTime") else 0.0


def measure(
    stack, n: int, rows: int, jobs: list[str], cache: str, profile: Profiler | None = None, heap_collect_s: float = DEFAULT_HEAP_COLLECT_S
) -> list[Measured]:
    from hmsproxy.clients.proxy import HmsProxyClient

    spark, uri = stack.spark, stack.server.uri
    log(f"N={n}: writing {n} partitions of {rows} rows ...")
    t0 = time.perf_counter()
    table = make_table(spark, uri, n, rows, str(stack.tmp / "tables"), cache)
    log(f"N={n}: table ready in {time.perf_counter() - t0:.1f} s")
    pids, heap = driver_pids(spark), LiveHeap(spark, heap_collect_s)
    results = [timed(n, "plain pass", pids, lambda: plain_pass(spark, table, f"file://{stack.tmp}/plain_{n}"), heap=heap)]
    if "rebuild-index" in jobs:
        with HmsProxyClient(uri) as client:
            client.execute(f"CREATE INDEX user_idx ON TABLE {table} (user_id) AS 'COMPACT' WITH DEFERRED REBUILD")
        results.append(timed(n, "rebuild-index", pids, lambda: run_job(spark, uri, ["rebuild-index", f"{table}.user_idx"]), profile, heap))
    if "compact" in jobs:
        results.append(timed(n, "compact --files 1", pids, lambda: run_job(spark, uri, ["compact", table, "--files", "1"]), profile, heap))
    if "skew-layout" in jobs:
        declare_skew(uri, table, "action", "view")
        results.append(timed(n, "skew-layout", pids, lambda: run_job(spark, uri, ["skew-layout", table]), profile, heap))
    return results


def declare_skew(uri: str, table: str, column: str, value: str) -> None:
    """SKEWED BY (column) ON (value) on the table, as Hive keeps it (a plain alter_table)."""
    from hmsproxy.jobs.metastore import MetastoreClient
    from hmsproxy.protocol import idl

    db, name = table.split(".")
    with MetastoreClient(uri) as ms:
        t = ms.get_table(db, name)
        t.sd.skewedInfo = idl.hive.SkewedInfo([column], [[value]], {})
        ms.alter_table(db, name, t)


def report(results: list[Measured]) -> str:
    smallest = min(r.partitions for r in results)
    base = {r.label: r for r in results if r.partitions == smallest}
    plain = {r.partitions: r.seconds for r in results if r.label == "plain pass"}
    lines = [
        "| partitions | what | seconds | × plain pass | s per extra partition | driver RSS growth in the run | driver peak RSS (vs smallest N) | JVM live heap at start + growth in the run (growth vs smallest N) |",
        "|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        first = base[r.label]
        slope = "" if r.partitions == smallest else f"{(r.seconds - first.seconds) / (r.partitions - smallest):.4f}"
        ratio = "" if r.label == "plain pass" else f"{r.seconds / plain[r.partitions]:.1f}"
        versus = "" if r.partitions == smallest else f" ({r.rss_peak_mib - first.rss_peak_mib:+.0f})"
        heap_versus = "" if r.partitions == smallest else f" ({r.heap_growth_mib - first.heap_growth_mib:+.0f})"
        lines.append(
            f"| {r.partitions:,} | {r.label} | {r.seconds:.1f} | {ratio} | {slope} | {r.rss_growth_mib:.0f} MiB | {r.rss_peak_mib:.0f} MiB{versus} "
            f"| {r.heap_start_mib:.0f} + {r.heap_growth_mib:.0f} MiB{heap_versus} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", default="24,1000", help="partition counts, comma-separated (default 24,1000)")
    parser.add_argument("--rows", type=int, default=200, help="rows per partition (default 200)")
    parser.add_argument("--jobs", default=",".join(JOBS), help=f"jobs to run, comma-separated (default {','.join(JOBS)})")
    parser.add_argument("--profile", metavar="DIR", help="keep a cProfile per job in DIR and print where the seconds went")
    parser.add_argument(
        "--table-cache",
        default=os.path.expanduser("~/.cache/hmsproxy/bench-jobs"),
        help="where the tables' data files are kept between runs (default ~/.cache/hmsproxy/bench-jobs)",
    )
    parser.add_argument(
        "--heap-collect-s",
        type=float,
        default=DEFAULT_HEAP_COLLECT_S,
        help=f"force a full collection of the Spark JVM every S seconds during a job, to read its live heap (default {DEFAULT_HEAP_COLLECT_S:g}; 0: only the JVM's own collections)",
    )
    args = parser.parse_args(argv)
    counts = sorted({int(x) for x in args.partitions.split(",") if x.strip()})
    jobs = [j.strip() for j in args.jobs.split(",") if j.strip()]
    if not counts or min(counts) < 1 or args.rows < 2 or any(j not in JOBS for j in jobs):
        parser.error(f"--partitions needs counts above 0, --rows at least 2, --jobs among {', '.join(JOBS)}")
    from tests.bench.stack import spark_through_proxy

    results: list[Measured] = []
    ui = {"spark.ui.enabled": "true", "spark.ui.port": "0"} if args.profile else None
    with spark_through_proxy("bench-jobs", log, driver_memory="2g", proxy_process=True, production_jvm=True, spark_conf=ui) as stack:
        profile = Profiler(args.profile, stack.spark) if args.profile else None
        for n in counts:
            results += measure(stack, n, args.rows, jobs, args.table_cache, profile, args.heap_collect_s)
    print(report(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

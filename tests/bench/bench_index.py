"""Indexes: one point lookup on a large table, four ways, and the rebuild's throughput.

Run with ``make bench-index`` or ``.venv/bin/python -m tests.bench.bench_index [--rows N] [--files N]``
(see docs/benchmark.md). Not a pytest test: the file name does not match ``test_*.py``.

What it does, in one run (a few minutes on 2 cores at the default 20 M rows):

1. starts one real Hive 2.3 metastore (state in a temp dir), ``hmsproxy serve`` in its own process in
   front of it, and a local[2] SparkSession whose metastore is the proxy (tests/bench/stack.py);
2. generates ``bench.events`` partition ``ds=2026-11-01`` with Spark: ``--rows`` rows in
   ``--files`` Parquet files (one Spark task each), written with a bloom filter on ``user_id``
   and 8 MiB row groups; every user's rows are in one file (user ``k * files + file``), so
   ``user_id``'s min/max statistics span the whole range in every file and prune nothing;
3. creates index ``user_idx`` on it with hmsproxy's ``CREATE INDEX ... WITH DEFERRED REBUILD``
   and runs ``hmsproxy job rebuild-index bench.events.user_idx`` in this process (timed);
4. looks up one user four ways (five with the Spark extension built, six with the proxy's cache):
   Spark's full scan (Parquet pushdown, bloom filters not read),
   Spark reading the bloom filters, Spark on the index-listed files
   (``hmsproxy.clients.spark.lookup``), plain ``spark.sql`` with the index extension on
   (``spark.hmsproxy.index.enabled``), and ``hmsproxy lookup`` without Spark
   (``hmsproxy.clients.index_lookup.arrow_lookup``); one warm-up each, then ``--repeat`` rounds
   of the four in turn (so all see the same load), medians; every answer must equal the full
   scan's (the run fails otherwise);
5. prints wall time, files and bytes read per path, the CPU other processes took meanwhile,
   the rebuild's rows/s per core, and the targets (PASS/MISS).

``--store s3`` puts the table (and its index) on S3: an s3proxy on loopback (in memory), the
metastore and the SparkSession with S3A (``hmsproxy dev fetch`` fetched its jars), and the S3A keys
in a HADOOP_CONF_DIR that the proxy and ``hmsproxy lookup``'s storage door read (docs/storage.md).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime
import decimal
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

DB, TABLE, INDEX, DAY = "bench", "events", "user_idx", "2026-11-01"
UNINDEXED_TABLE = "events_unindexed"
COLUMNS = ("user_id", "action", "ts", "amount")
ACTIONS = ("view", "click", "search", "add_to_cart", "remove_from_cart", "checkout", "purchase", "login")
ROW_GROUP_BYTES = 8 * 2**20
EXTENSION_CLASS = "io.hmsproxy.spark.HmsProxyExtensions"
EXTENSION_PATH = "plain Spark SQL + index extension"

#: Spark settings of the generating INSERT only: a bloom filter on user_id sized for a file's
#: users (without expected.ndv every filter would take its maximum, 1 MiB), smallish row groups,
#: and user_id not dictionary-encoded. parquet-java writes no bloom filter for a column chunk it
#: dictionary-encoded whole (its dictionary filter answers instead), and at this scale every chunk
#: would be: a file holds a few thousand users. At production row-group sizes (128 MiB, millions
#: of users) the dictionary outgrows its 1 MiB page and the writer falls back to plain encoding,
#: which this setting reproduces.
WRITE_CONF = {
    "parquet.bloom.filter.enabled#user_id": "true",
    "parquet.enable.dictionary#user_id": "false",
    "parquet.block.size": str(ROW_GROUP_BYTES),
}

#: Reading: whether parquet-java reads the bloom filters to skip row groups (it does by default).
BLOOM_READ = "parquet.filter.bloom.enabled"


def log(msg: str) -> None:
    print(f"[bench-index] {msg}", file=sys.stderr, flush=True)


def _busy_s() -> float:
    """CPU seconds all processes spent busy since boot (/proc/stat)."""
    with open("/proc/stat") as fh:
        user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in fh.readline().split()[1:9])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def _own_s() -> float:
    """CPU seconds of this process and every process below it (the metastore's and Spark's JVMs)."""
    from tests.bench.process_tree import own_stats

    return sum(int(f[11]) + int(f[12]) for f in own_stats()) / os.sysconf("SC_CLK_TCK")


class OtherLoad:
    """CPU seconds other processes spent while a path ran (and the wall time): what skews a run on 2 cores."""

    def __enter__(self) -> OtherLoad:
        self.t0, self.busy0, self.own0 = time.perf_counter(), _busy_s(), _own_s()
        return self

    def __exit__(self, *exc) -> None:
        self.wall_s = time.perf_counter() - self.t0
        self.cpu_s = max(0.0, (_busy_s() - self.busy0) - (_own_s() - self.own0))


def user_of(file_no: int, k: int, files: int) -> int:
    return k * files + file_no


def generate(spark, rows: int, files: int, users_per_file: int, db_location: str | None = None) -> None:
    """``rows`` rows in ``files`` files of partition ``ds=DAY``: Spark's range in ``files`` partitions,
    written without a shuffle, so partition ``p`` becomes one file holding users ``k * files + p``."""
    from pyspark.sql import functions as F

    spark.sql(f"CREATE DATABASE IF NOT EXISTS {DB}" + (f" LOCATION '{db_location}'" if db_location else ""))
    spark.sql(f"DROP TABLE IF EXISTS {DB}.{TABLE}")
    spark.sql(
        f"CREATE TABLE {DB}.{TABLE} (user_id BIGINT, action STRING, ts TIMESTAMP, amount DECIMAL(10,2)) "
        "PARTITIONED BY (ds STRING) STORED AS PARQUET"
    )
    start = int(datetime.datetime(2026, 11, 1, tzinfo=datetime.UTC).timestamp())
    frame = spark.range(0, rows, numPartitions=files).select(
        (F.pmod(F.xxhash64("id"), F.lit(users_per_file)) * F.lit(files) + F.spark_partition_id()).alias("user_id"),
        F.element_at(
            F.array(*[F.lit(a) for a in ACTIONS]), (F.pmod(F.xxhash64("id", F.lit(1)), F.lit(len(ACTIONS))) + 1).cast("int")
        ).alias("action"),
        F.timestamp_seconds(F.lit(start) + F.pmod(F.xxhash64("id", F.lit(2)), F.lit(86_400))).alias("ts"),
        (F.pmod(F.xxhash64("id", F.lit(3)), F.lit(100_000)) / F.lit(100)).cast("decimal(10,2)").alias("amount"),
    )
    frame.createOrReplaceTempView("bench_src")
    conf = {**WRITE_CONF, "parquet.bloom.filter.expected.ndv#user_id": str(users_per_file)}
    for key, value in conf.items():
        spark.conf.set(key, value)  # Spark copies its session conf into each write's Hadoop configuration
    try:
        spark.sql(f"INSERT INTO {DB}.{TABLE} PARTITION (ds='{DAY}') SELECT * FROM bench_src")
    finally:
        for key in conf:
            spark.conf.unset(key)
        spark.catalog.dropTempView("bench_src")


@dataclasses.dataclass
class Measured:
    label: str
    seconds: float
    files: int
    bytes: int
    rows: list[tuple]
    other_load: float = 0.0


def normalized(rows) -> list[tuple]:
    """Rows as comparable tuples, sorted: pyarrow and Spark agree on ints and strings; timestamps to
    naive UTC datetimes, decimals to Decimal."""

    def value(v):
        if isinstance(v, datetime.datetime) and v.tzinfo is not None:
            return v.astimezone(datetime.UTC).replace(tzinfo=None)
        if isinstance(v, float):
            return decimal.Decimal(str(v))
        return v

    return sorted(tuple(value(v) for v in row) for row in rows)


class SparkInput:
    """Bytes Spark's tasks read (their input metrics), per job group: from Spark's status store, the
    one its UI and REST API read (the UI is off in the bench's session)."""

    def __init__(self, spark):
        self.sc = spark.sparkContext
        self.store = self.sc._jsc.sc().statusStore()
        self.bus = self.sc._jsc.sc().listenerBus()
        self.groups = 0

    def new_group(self, label: str) -> str:
        self.groups += 1
        group = f"bench-index-{self.groups}"
        self.sc.setJobGroup(group, label)
        return group

    def clear(self) -> None:
        self.sc.setLocalProperty("spark.jobGroup.id", None)

    def bytes_read(self, group: str) -> int:
        self.bus.waitUntilEmpty(60_000)  # the status store is fed by the listener bus, asynchronously
        gateway = self.sc._gateway
        no_status, no_quantiles = gateway.jvm.java.util.ArrayList(), gateway.new_array(gateway.jvm.double, 0)
        tracker, total = self.sc.statusTracker(), 0
        for job_id in tracker.getJobIdsForGroup(group):
            info = tracker.getJobInfo(job_id)
            for stage_id in info.stageIds if info else ():
                try:
                    attempts = self.store.stageData(stage_id, False, no_status, False, no_quantiles)
                except Exception:  # a stage skipped (its output reused) has no data
                    continue
                total += sum(attempts.apply(i).inputBytes() for i in range(attempts.size()))
        return total


@dataclasses.dataclass
class Way:
    """One way to look the user up: ``run()`` times one lookup and returns (seconds, what it left);
    ``counted(last)`` gives (files, bytes read, rows) from the last run's leftovers."""

    label: str
    run: Callable[[], tuple[float, Any]]
    counted: Callable[[Any], tuple[int, int, list[tuple]]]


def spark_path(spark, label: str, make, metrics: SparkInput) -> Way:
    """``make()`` a DataFrame and collect its rows: the wall time of both, in a job group of its own."""

    def run():
        group = metrics.new_group(label)
        try:
            t0 = time.perf_counter()
            frame = make()
            rows = frame.select(*COLUMNS).collect()
            seconds = time.perf_counter() - t0
            # Now, untimed: planned later, the frame would see the next path's settings (the extension's switch).
            return seconds, (len(frame.inputFiles()), rows, group)
        finally:
            metrics.clear()

    def counted(last):
        files, rows, group = last
        return files, metrics.bytes_read(group), normalized(rows)

    return Way(label, run, counted)


def arrow_path(uri: str, user_id: int, label: str = "hmsproxy lookup (pyarrow, no Spark)") -> Way:
    from hmsproxy.clients.index_lookup import arrow_lookup

    def run():
        t0 = time.perf_counter()
        result = arrow_lookup(uri, f"{DB}.{TABLE}", {"user_id": user_id}, user=None)
        return time.perf_counter() - t0, result

    def counted(result):
        return result.files_opened, result.bytes_read, normalized(zip(*[result.table.column(c).to_pylist() for c in COLUMNS]))

    return Way(label, run, counted)


def paths(spark, uri: str, user_id: int, metrics: SparkInput, with_index: bool, cached_uri: str | None) -> list[Way]:
    from pyspark.sql import functions as F

    from hmsproxy.jobs.spark_extension import ENABLED_CONF

    def scan(bloom: bool):
        def make():
            spark.conf.set(ENABLED_CONF, "false")  # Spark's own plan (the extension, if loaded, is off)
            spark.conf.set(BLOOM_READ, str(bloom).lower())
            return spark.table(f"{DB}.{TABLE}").where(F.col("user_id") == F.lit(user_id))

        return make

    found = [
        spark_path(spark, "Spark full scan (pushdown, no bloom)", scan(False), metrics),
        spark_path(spark, "Spark + bloom filters", scan(True), metrics),
    ]
    if with_index:
        from hmsproxy.clients.spark import lookup

        def indexed():
            spark.conf.set(ENABLED_CONF, "false")
            spark.conf.unset(BLOOM_READ)  # parquet-java's default (on); it reads one file's filter
            return lookup(spark, f"{DB}.{TABLE}", user_id=user_id)

        found += [spark_path(spark, "Spark on index-listed files", indexed, metrics), arrow_path(uri, user_id)]
        if cached_uri:
            found.append(arrow_path(cached_uri, user_id, "hmsproxy lookup, proxy cache on"))
        if spark.conf.get("spark.sql.extensions", "") == EXTENSION_CLASS:

            def plain_sql():
                spark.conf.set(ENABLED_CONF, "true")
                spark.conf.unset(BLOOM_READ)
                return spark.sql(f"SELECT * FROM {DB}.{TABLE} WHERE user_id = {user_id}")

            found.append(spark_path(spark, EXTENSION_PATH, plain_sql, metrics))
        else:
            log("the Spark extension is not built (make install needs mvn): plain Spark SQL with it is not measured")
    return found


def extension_jar() -> tuple[str, ...]:
    """The Spark extension's jar for this pyspark, where it is built."""
    from hmsproxy.jobs.spark_extension import index_extension_jar

    try:
        return (str(index_extension_jar()),)
    except FileNotFoundError:
        return ()


@dataclasses.dataclass
class Planning:
    """Seconds to plan (analyse and optimise, no job) a point query, medians of ``rounds`` each."""

    rounds: int
    unindexed_on: float
    unindexed_off: float
    unindexed_first_on: float
    indexed_on: float | None = None

    @property
    def overhead(self) -> float:
        return self.unindexed_on - self.unindexed_off


def planning(spark, user_id: int, rounds: int, indexed: bool) -> Planning:
    """What the extension adds to planning: a point query on an unindexed table (UNINDEXED_TABLE, one
    row), the switch on and off in turn, and (``indexed``) on the indexed table. The first plan with
    the switch on asks the proxy for the table's indexes; later ones within the TTL do not."""
    from hmsproxy.jobs.spark_extension import ENABLED_CONF

    spark.sql(f"DROP TABLE IF EXISTS {DB}.{UNINDEXED_TABLE}")
    spark.sql(f"CREATE TABLE {DB}.{UNINDEXED_TABLE} (user_id BIGINT, action STRING) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {DB}.{UNINDEXED_TABLE} PARTITION (ds='{DAY}') VALUES ({user_id}, 'view')")

    def plan_s(table: str, on: bool) -> float:
        spark.conf.set(ENABLED_CONF, str(on).lower())
        t0 = time.perf_counter()
        spark.sql(f"SELECT * FROM {DB}.{table} WHERE user_id = {user_id}")._jdf.queryExecution().optimizedPlan()
        return time.perf_counter() - t0

    plan_s(UNINDEXED_TABLE, False)  # Spark's own first plan of the table (its relation cached)
    first_on = plan_s(UNINDEXED_TABLE, True)
    on, off, with_index = [], [], []
    for _ in range(rounds):
        off.append(plan_s(UNINDEXED_TABLE, False))
        on.append(plan_s(UNINDEXED_TABLE, True))
        if indexed:
            with_index.append(plan_s(TABLE, True))
    spark.conf.set(ENABLED_CONF, "false")
    return Planning(
        rounds,
        statistics.median(on),
        statistics.median(off),
        first_on,
        statistics.median(with_index) if with_index else None,
    )


def measure(ways: list[Way], repeat: int, settle_s: float) -> list[Measured]:
    """One warm-up run of each path (JIT, page cache, Spark's cached table metadata), then ``repeat``
    rounds running each path once in turn, so every path sees the same load; medians. Each run
    starts ``settle_s`` after the one before it: a Spark job leaves its JVM busy for a while after
    it answers (listener bus, clean-up, GC), and on two cores the next path would pay for it."""
    for way in ways:
        way.run()
    times: dict[str, list[float]] = {w.label: [] for w in ways}
    other: dict[str, list[float]] = {w.label: [0.0, 0.0] for w in ways}  # other processes' CPU s, wall s
    last: dict[str, Any] = {}
    for _ in range(repeat):
        for way in ways:
            time.sleep(settle_s)
            with OtherLoad() as load:
                seconds, last[way.label] = way.run()
            times[way.label].append(seconds)
            other[way.label][0] += load.cpu_s
            other[way.label][1] += load.wall_s
    results = []
    for way in ways:
        files, size, rows = way.counted(last[way.label])
        cpu, wall = other[way.label]
        results.append(Measured(way.label, statistics.median(times[way.label]), files, size, rows, cpu / wall))
    return results


def rebuild(spark, uri: str) -> tuple[float, str]:
    """CREATE INDEX through the proxy, then the rebuild job in this process; (seconds, its output)."""
    import io

    from hmsproxy.clients.proxy import HmsProxyClient
    from hmsproxy.jobs.cli import build_parser, run_job_command
    from hmsproxy.jobs.context import JobContext

    with HmsProxyClient(uri) as client:
        client.execute(f"CREATE INDEX {INDEX} ON TABLE {DB}.{TABLE} (user_id) AS 'COMPACT' WITH DEFERRED REBUILD")
    ctx = JobContext(uri, spark=spark, stdout=io.StringIO(), stderr=io.StringIO())
    t0 = time.perf_counter()
    status = run_job_command(build_parser().parse_args(["rebuild-index", f"{DB}.{TABLE}.{INDEX}", "--uri", uri]), ctx)
    seconds = time.perf_counter() - t0
    if status != 0:
        raise SystemExit(f"[bench-index] rebuild-index failed ({status}):\n{ctx.stderr.getvalue()}")
    return seconds, ctx.stdout.getvalue().strip()


@dataclasses.dataclass
class IndexFacts:
    table: str
    files: int
    bytes: int
    rows: int


def index_facts(uri: str) -> IndexFacts:
    """The index table as the rebuild left it: its data files (not the build manifest), their size and rows."""
    import pyarrow.parquet as pq

    from hmsproxy.jobs.metastore import MetastoreClient

    with MetastoreClient(uri) as ms:
        name = ms.get_index(DB, TABLE, INDEX).indexTableName
        db, _, table = name.rpartition(".")
        location = ms.get_table(db or DB, table).sd.location
    from pyarrow import fs

    from hmsproxy.files.storage import arrow_filesystem

    filesystem, root = arrow_filesystem(location)
    root = root.rstrip("/")
    files = [
        info
        for info in filesystem.get_file_info(fs.FileSelector(root, recursive=True))
        if info.type == fs.FileType.File and not any(p.startswith(("_", ".")) for p in info.path[len(root) + 1 :].split("/"))
    ]
    rows = 0
    for info in files:
        with filesystem.open_input_file(info.path) as handle:
            rows += pq.ParquetFile(handle).metadata.num_rows
    return IndexFacts(name, len(files), sum(info.size for info in files), rows)


def file_sizes(locations: list[str]) -> list[int]:
    """The sizes of these files, on whatever store they are (the storage door)."""
    from hmsproxy.files.storage import arrow_filesystem

    sizes = []
    for location in locations:
        filesystem, path = arrow_filesystem(location)
        sizes.append(filesystem.get_file_info(path).size)
    return sizes


@dataclasses.dataclass
class Store:
    """Where the table lives: `db_location` (None: the metastore's local warehouse) and what the
    metastore and the SparkSession need to reach it."""

    name: str = "local"
    db_location: str | None = None
    hive_conf: dict[str, str] = dataclasses.field(default_factory=dict)
    extra_classpath: tuple = ()
    spark_conf: dict[str, str] = dataclasses.field(default_factory=dict)


@contextlib.contextmanager
def store_for(name: str) -> Iterator[Store]:
    if name == "local":
        yield Store()
        return
    from hmsproxy.dev import storage_jars
    from hmsproxy.dev.dev_storage import site_xml
    from hmsproxy.dev.ports import free_port
    from hmsproxy.dev.s3proxy import S3Server
    from hmsproxy.files import filesystems
    from hmsproxy.files.hadoop_conf import SITE_FILES

    tmp = Path(tempfile.mkdtemp(prefix="hmsproxy-bench-index-s3-"))
    log(f"starting s3proxy (in memory; state in {tmp}) ...")
    s3 = S3Server(tmp, free_port(), storage_jars.s3proxy_jar()).start()
    before = os.environ.get("HADOOP_CONF_DIR")
    try:
        bucket = s3.make_bucket("bench")
        s3a = s3.s3a_conf()
        (tmp / SITE_FILES[0]).write_text(site_xml(s3a))
        os.environ["HADOOP_CONF_DIR"] = str(tmp)  # the proxy's and lookup's storage door read it
        filesystems.forget()
        jars = tuple(str(j) for j in storage_jars.s3a_jars()) + extension_jar()  # this spark.jars replaces the one make_spark set
        yield Store(
            "s3",
            f"s3a://{bucket}/warehouse/{DB}.db",
            hive_conf=s3a,
            extra_classpath=jars,
            spark_conf={"spark.jars": ",".join(jars), **{f"spark.hadoop.{k}": v for k, v in s3a.items()}},
        )
    finally:
        if before is None:
            os.environ.pop("HADOOP_CONF_DIR", None)
        else:
            os.environ["HADOOP_CONF_DIR"] = before
        filesystems.forget()
        s3.stop()


def run(args: argparse.Namespace) -> int:
    from tests.bench.stack import spark_through_proxy

    users_per_file = args.users_per_file or max(1, args.rows // args.files // 100)  # about 100 rows a user
    user_id = user_of(args.files // 2, users_per_file // 3, args.files)
    with (
        store_for(args.store) as store,
        spark_through_proxy(
            "bench-index",
            log,
            driver_memory="3g",
            keep_state=args.keep_state,
            production_jvm=True,
            proxy_process=not args.proxy_in_process,
            hive_conf=store.hive_conf,
            extra_classpath=store.extra_classpath,
            spark_conf=store.spark_conf,
        ) as stack,
    ):
        spark, server = stack.spark, stack.server
        log(f"generating {args.rows:,} rows in {args.files} files ({users_per_file:,} users a file) on {store.name} ...")
        t0 = time.perf_counter()
        generate(spark, args.rows, args.files, users_per_file, store.db_location)
        log(f"generated in {time.perf_counter() - t0:.1f}s")
        sizes = file_sizes(spark.table(f"{DB}.{TABLE}").inputFiles())
        setup = Setup(args.rows, len(sizes), sum(sizes), users_per_file, user_id, store=store.name)

        if not args.no_index:
            log("CREATE INDEX and rebuild-index ...")
            setup.job_seconds, job_out = rebuild(spark, server.uri)
            log(job_out or f"rebuilt in {setup.job_seconds:.1f}s")
            setup.index = index_facts(server.uri)
        setup.cores = spark.sparkContext.defaultParallelism

        cached = None
        if not args.no_index and not args.no_cache:
            log("starting a second hmsproxy with the metadata cache on ...")
            cached = stack.start_proxy("hmsproxy-cached", cache=True).uri
        log(f"looking up user_id = {user_id} ...")
        ways = paths(spark, server.uri, user_id, SparkInput(spark), not args.no_index, cached)
        results = measure(ways, args.repeat, args.settle)
        if any(w.label == EXTENSION_PATH for w in ways):
            log(f"planning with and without the extension ({args.plan_rounds} plans each) ...")
            setup.planning = planning(spark, user_id, args.plan_rounds, indexed=True)

        report(args, setup, results)
        reference = results[0].rows
        wrong = [r.label for r in results if r.rows != reference]
        if not reference or wrong:
            log(f"ANSWERS DIFFER from the full scan's ({len(reference)} rows): {', '.join(wrong) or 'the full scan found nothing'}")
            return 1
        return 0


@dataclasses.dataclass
class Setup:
    rows: int
    files: int
    bytes: int
    users_per_file: int
    user_id: int
    job_seconds: float | None = None
    index: IndexFacts | None = None
    cores: int = 1
    store: str = "local"
    planning: Planning | None = None


def report(args, setup: Setup, results: list[Measured]) -> None:
    print(
        f"\n{setup.rows:,} rows in {setup.files} Parquet files on {setup.store}, {setup.bytes / 2**20:,.1f} MiB; {setup.users_per_file:,} users a file; "
        f"user_id = {setup.user_id}: {len(results[0].rows)} rows; medians of {args.repeat} rounds"
    )
    if setup.index is not None:
        i = setup.index
        print(f"index {i.table}: {i.rows:,} rows in {i.files} file(s), {i.bytes / 2**20:,.2f} MiB (read on the driver by both index paths)")
    print(f"\n{'path':40} {'wall s':>8} {'files':>6} {'bytes read':>14} {'rows':>6}  {'same answer':11}  other load (cores)")
    for r in results:
        same = r.rows == results[0].rows
        print(f"{r.label:40} {r.seconds:8.3f} {r.files:6d} {r.bytes:14,} {len(r.rows):6d}  {same!s:11}  {r.other_load:.2f}")
    print()
    if setup.job_seconds is not None:
        rate = setup.rows / setup.job_seconds
        print(
            f"rebuild-index: {setup.rows:,} rows in {setup.job_seconds:.1f}s = {rate:,.0f} rows/s "
            f"= {rate / setup.cores:,.0f} rows/s per core ({setup.cores} cores)"
        )
    plans = setup.planning
    if plans is not None:
        print(
            f"planning (analyse + optimise, medians of {plans.rounds}): unindexed table {plans.unindexed_off * 1000:.1f} ms "
            f"without the extension, {plans.unindexed_on * 1000:.1f} ms with it (first: {plans.unindexed_first_on * 1000:.1f} ms); "
            f"indexed table with it {plans.indexed_on * 1000:.1f} ms"
        )
    if len(results) < 4:
        return
    scan, bloom, spark_index, arrow = results[:4]
    best = min((scan, bloom, spark_index), key=lambda r: r.seconds)
    spark_best = min((scan, bloom), key=lambda r: r.seconds)
    fewest = max(spark_index.files, arrow.files, 1)
    targets = [
        (scan.files >= 100 * fewest, f"index paths open >= 100x fewer files than the scan: {scan.files} vs {spark_index.files} (Spark), {arrow.files} (lookup)"),
        *[
            (best.seconds >= 5 * way.seconds, f"{way.label} >= 5x faster than Spark's best path ({best.label}): {best.seconds / way.seconds:.1f}x")
            for way in [arrow, *results[4:]] if way.label != EXTENSION_PATH
        ],
        *[
            (spark_best.seconds >= 5 * way.seconds, f"{way.label} >= 5x faster than Spark without it ({spark_best.label}): {spark_best.seconds / way.seconds:.1f}x")
            for way in results[4:] if way.label == EXTENSION_PATH
        ],
        (spark_index.seconds < bloom.seconds, f"Spark index path faster than the bloom-filter path: {spark_index.seconds:.3f}s vs {bloom.seconds:.3f}s"),
        *([(plans.overhead <= 0.050, f"the extension's planning overhead on an unindexed table <= 50 ms: {plans.overhead * 1000:.1f} ms")] if plans else []),
    ]  # fmt: skip
    for ok, text in targets:
        print(f"{'PASS' if ok else 'MISS'}  {text}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.bench_index", description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000_000, help="rows in the table (default 20,000,000)")
    parser.add_argument("--files", type=int, default=200, help="Parquet files (default 200)")
    parser.add_argument("--users-per-file", type=int, default=0, help="users in each file (default: about 100 rows a user)")
    parser.add_argument("--repeat", type=int, default=5, help="timed rounds of the four paths after one warm-up (default 5)")
    parser.add_argument(
        "--plan-rounds", type=int, default=20, help="plans timed per case for the extension's planning overhead (default 20)"
    )
    parser.add_argument("--settle", type=float, default=1.0, help="seconds of quiet before each timed run (default 1)")
    parser.add_argument("--no-index", action="store_true", help="only generate and measure the two pure Spark paths")
    parser.add_argument("--no-cache", action="store_true", help="leave out the lookup through a proxy with the metadata cache on")
    parser.add_argument("--proxy-in-process", action="store_true", help="run hmsproxy in the bench's process (default: hmsproxy serve)")
    parser.add_argument("--keep-state", action="store_true", help="keep the temporary directory")
    parser.add_argument("--store", choices=("local", "s3"), default="local", help="where the table lives (s3: an s3proxy started here)")
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())

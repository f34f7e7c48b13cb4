"""The skew-layout job and the pruned reader end to end: real metastores behind the proxy, Spark through it.

Each test makes its own partitioned Parquet table with Spark, declares skew as Hive's own
metadata (SkewedInfo on the table, set with a plain Thrift alter_table through the proxy),
runs the job and checks from the outside: the metastore's partitions, the files on disk,
what hmsproxy.clients.spark.read returns and reads, and what a default SparkSession counts.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import uuid
from pathlib import Path
from urllib.parse import urlparse

import pytest

from hmsproxy.clients.spark import read, read_subdirectories, sql
from hmsproxy.features.skew.layout import LAYOUT_PARAMETER, from_parameters, matches_files
from hmsproxy.jobs import skew_layout
from hmsproxy.jobs.cli import build_parser, run_job_command
from hmsproxy.jobs.context import JobContext
from hmsproxy.jobs.skew_layout import DEFAULT_DIRECTORY, open_metastore

pytestmark = pytest.mark.spark

REPO_ROOT = Path(__file__).resolve().parents[2]
DAYS = ("2026-11-01", "2026-11-02", "2026-11-03")
COLUMNS = "id INT, country STRING, x INT, y STRING, amount INT"


def local_path(location: str) -> Path:
    return Path(urlparse(location).path)


def files_under(location: str) -> list[str]:
    """Data files below a location, relative, recursively (hidden names skipped)."""
    root = local_path(location)
    return sorted(
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and not any(part.startswith(("_", ".")) for part in p.relative_to(root).parts)
    )


def rows_of(frame) -> list[tuple]:
    return sorted(tuple(r) for r in frame.collect())


def full_scan(spark, table: str, **equals) -> list[tuple]:
    """What plain Spark SQL answers: the reference every pruned read must equal."""
    spark.catalog.refreshTable(table)
    where = " AND ".join(f"{k} = '{v}'" if isinstance(v, str) else f"{k} = {v}" for k, v in equals.items()) or "true"
    return rows_of(spark.sql(f"SELECT * FROM {table} WHERE {where}"))


def generated_rows(ds: str, heavy: dict[str, int], light: int, start: int = 0) -> list[tuple]:
    """heavy: country -> rows; plus `light` rows spread over 20 other countries. x/y make two-column skew."""
    rows, i = [], start
    countries = [c for c, n in heavy.items() for _ in range(n)] + [f"C{k % 20:02d}" for k in range(light)]
    for country in countries:
        rows.append((i, country, i % 3, "abc"[i % 3] if i % 5 else "z", i % 100))
        i += 1
    return rows


def make_table(spark, db: str, days=DAYS, heavy=None, light: int = 40) -> str:
    """A fresh partitioned Parquet table, several files per partition."""
    name = f"{db}.ev_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE TABLE {name} ({COLUMNS}) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    for n, ds in enumerate(days):
        src = spark.createDataFrame(generated_rows(ds, heavy or {"US": 120, "IN": 50}, light, start=n * 1000), COLUMNS)
        src.repartition(3).createOrReplaceTempView("skew_src")
        spark.sql(f"INSERT INTO {name} PARTITION (ds='{ds}') SELECT * FROM skew_src")
    spark.catalog.dropTempView("skew_src")
    return name


def set_skew(proxy, table: str, columns, values, *, subdirectories: bool = False) -> None:
    """Declare skew as Hive keeps it, through the proxy with plain Thrift (not the skew statements)."""
    from hmsproxy.protocol import idl

    db, name = table.split(".")
    with open_metastore(proxy.uri) as ms:
        t = ms.get_table(db, name)
        t.sd.skewedInfo = idl.hive.SkewedInfo(list(columns), [list(v) for v in values], {})
        t.sd.storedAsSubDirectories = subdirectories
        ms.alter_table(db, name, t)


def partition(proxy, table: str, ds: str):
    db, name = table.split(".")
    with open_metastore(proxy.uri) as ms:  # reads location maps, which a plain thriftpy2 client cannot
        return ms.get_partition(db, name, [ds])


def context(spark, proxy) -> JobContext:
    return JobContext(proxy.uri, spark=spark, stdout=io.StringIO(), stderr=io.StringIO())


def run_job(spark, proxy, *argv: str) -> tuple[int, JobContext]:
    ctx = context(spark, proxy)
    status = run_job_command(build_parser().parse_args(["skew-layout", *argv]), ctx)
    return status, ctx


@pytest.fixture(scope="module")
def db(spark):
    spark.sql("CREATE DATABASE IF NOT EXISTS skew_layout_e2e")
    return "skew_layout_e2e"


def test_one_column_layout_on_every_partition_and_pruned_reads(spark, proxy, db):
    table = make_table(spark, db)
    set_skew(proxy, table, ["country"], [["US"], ["IN"]])
    before = {ds: full_scan(spark, table, ds=ds) for ds in DAYS}
    status, ctx = run_job(spark, proxy, table)
    assert status == 0, ctx.stderr.getvalue()
    assert f"3 laid out, 0 skipped, 0 failed; {3 * 210} rows" in ctx.stdout.getvalue()
    progress = [line for line in ctx.stderr.getvalue().splitlines() if line.startswith(f"skew-layout {table} [")]
    assert len(progress) == 3 and all("ok, 210 rows" in line and "2 value(s): US, IN" in line for line in progress)

    for ds in DAYS:
        p = partition(proxy, table, ds)
        record = from_parameters(p.parameters)
        assert record is not None and record.columns == ("country",) and not record.subdirectories
        assert [(g.values, g.rows) for g in record.groups] == [(("US",), 120), (("IN",), 50), (None, 40)]
        # Flat: every group's files directly in the partition directory, named by value; nothing else there.
        on_disk = files_under(p.sd.location)
        assert on_disk == sorted(f.name for f in record.files) and all("/" not in f for f in on_disk)
        assert any(f.startswith("skew-0-US-") for f in on_disk) and any(f.startswith("skew-2-default-") for f in on_disk)
        assert p.sd.skewedInfo.skewedColNames == ["country"] and p.sd.skewedInfo.skewedColValues == [["US"], ["IN"]]
        # SHOW SKEW tells what the job recorded.
        (_, shown) = sql(spark, f"SHOW SKEW ON {table} PARTITION (ds='{ds}')").collect()
        assert shown.layout.startswith("3 groups (flat), 210 rows, laid out ")
        assert not p.sd.storedAsSubDirectories
        # A default SparkSession (the test session sets none of the subdirectory settings) still sees every row.
        assert full_scan(spark, table, ds=ds) == before[ds]
        assert spark.sql(f"SELECT count(*) FROM {table} WHERE ds = '{ds}'").first()[0] == 210

        for country, group in [("US", "skew-0-US-"), ("IN", "skew-1-IN-"), ("FR", "skew-2-default-"), ("C03", "skew-2-default-")]:
            pruned = read(spark, table, ds=ds, country=country)
            assert rows_of(pruned) == full_scan(spark, table, ds=ds, country=country)
            read_files = [Path(urlparse(f).path).name for f in pruned.inputFiles()]
            assert read_files and all(name.startswith(group) for name in read_files), read_files
            assert len(read_files) < len(on_disk)
    # Across partitions, and with a column that is not skewed as well.
    assert rows_of(read(spark, table, country="US")) == full_scan(spark, table, country="US")
    assert rows_of(read(spark, table, country="C07", x=1)) == full_scan(spark, table, country="C07", x=1)
    assert rows_of(read(spark, table, ds=DAYS[0])) == before[DAYS[0]]

    # A second run finds nothing to do.
    status, ctx = run_job(spark, proxy, table)
    assert status == 0 and "0 laid out, 3 skipped" in ctx.stdout.getvalue()


def test_two_column_skew_prunes_by_prefix_and_scans_partitions_not_laid_out(spark, proxy, db):
    table = make_table(spark, db, days=DAYS[:2])
    values = [["0", "a"], ["1", "b"], ["2", "c"]]
    set_skew(proxy, table, ["x", "y"], values)
    status, ctx = run_job(spark, proxy, table, "--partition", f"ds={DAYS[0]}")
    assert status == 0, ctx.stderr.getvalue()
    laid_out, untouched = partition(proxy, table, DAYS[0]), partition(proxy, table, DAYS[1])
    record = from_parameters(laid_out.parameters)
    assert record.columns == ("x", "y") and record.skewed_values == [tuple(v) for v in values]
    assert sum(g.rows for g in record.groups) == 210 and record.groups[-1].rows > 0  # 'z' rows are in the default group
    assert LAYOUT_PARAMETER not in (untouched.parameters or {})
    all_files = files_under(laid_out.sd.location)

    def files_read(frame, ds=DAYS[0]):
        return sorted(Path(urlparse(f).path).name for f in frame.inputFiles() if f"ds={ds}" in f)

    cases = [
        ({"x": 0, "y": "a"}, ["skew-0-"]),  # a whole skewed value: its group only
        ({"x": 0, "y": "z"}, ["skew-3-default-"]),  # not skewed: the default group only
        ({"x": 1}, ["skew-1-", "skew-3-default-"]),  # a prefix: (0,a) and (2,c) pruned
        ({"y": "c"}, ["skew-2-", "skew-3-default-"]),
        ({"x": 7}, ["skew-3-default-"]),
    ]
    for equals, groups in cases:
        pruned = read(spark, table, ds=DAYS[0], **equals)
        assert rows_of(pruned) == full_scan(spark, table, ds=DAYS[0], **equals), equals
        names = files_read(pruned)
        assert names and all(n.startswith(tuple(groups)) for n in names) and len(names) < len(all_files), (equals, names)
    # Both partitions at once: the laid-out one pruned, the other scanned, one answer.
    for equals in ({"x": 1}, {"x": 2, "y": "c"}, {"y": "z"}):
        assert rows_of(read(spark, table, **equals)) == full_scan(spark, table, **equals), equals


def test_detect_picks_the_heavy_values_of_a_generated_partition(spark, proxy, db):
    """Run here: the job's entry point in its own process is the SIGKILL tests' below (and the
    README tour's `hmsproxy job skew-layout`)."""
    # h1 40%, h2 30%, h3 10% of 1000 rows; the other 20% over 20 countries (1% each).
    table = make_table(spark, db, days=DAYS[:1], heavy={"h1": 400, "h2": 300, "h3": 100}, light=200)
    before = full_scan(spark, table)
    status, ctx = run_job(spark, proxy, table, "--detect", "--columns", "country", "--top", "5", "--min-share", "0.05")
    stdout, stderr = ctx.stdout.getvalue(), ctx.stderr.getvalue()
    assert status == 0, f"stdout:\n{stdout}\nstderr:\n{stderr[-6000:]}"
    assert f"skew-layout {table} [1/1] ds={DAYS[0]}: ok, 1,000 rows" in stderr
    assert "new partitions will be skewed on h1, h2, h3" in stdout
    p = partition(proxy, table, DAYS[0])
    assert p.sd.skewedInfo.skewedColValues == [["h1"], ["h2"], ["h3"]]
    record = from_parameters(p.parameters)
    assert [(g.values, g.rows) for g in record.groups] == [(("h1",), 400), (("h2",), 300), (("h3",), 100), (None, 200)]
    db_name, name = table.split(".")
    with open_metastore(proxy.uri) as ms:
        info = ms.get_table(db_name, name).sd.skewedInfo  # for partitions created later
    assert info.skewedColNames == ["country"] and info.skewedColValues == [["h1"], ["h2"], ["h3"]]
    assert full_scan(spark, table) == before
    assert rows_of(read(spark, table, country="h2")) == full_scan(spark, table, country="h2")


def test_stored_as_directories_is_refused_without_the_flag_and_laid_out_as_hive_with_it(spark, proxy, db):
    table = make_table(spark, db, days=DAYS[:1])
    set_skew(proxy, table, ["country"], [["US"], ["IN"]], subdirectories=True)
    before = full_scan(spark, table)
    old = partition(proxy, table, DAYS[0])
    status, ctx = run_job(spark, proxy, table)
    assert status == 1
    error = ctx.stderr.getvalue()
    for setting in skew_layout.reader_settings("parquet"):
        assert setting in error
    assert "--allow-subdirectories" in error
    now = partition(proxy, table, DAYS[0])
    assert now.sd.location == old.sd.location and LAYOUT_PARAMETER not in (now.parameters or {})
    assert full_scan(spark, table) == before

    status, ctx = run_job(spark, proxy, table, "--allow-subdirectories")
    assert status == 0, ctx.stderr.getvalue()
    p = partition(proxy, table, DAYS[0])
    assert p.sd.storedAsSubDirectories
    on_disk = files_under(p.sd.location)
    assert {f.rsplit("/", 1)[0] for f in on_disk} == {"country=US", "country=IN", DEFAULT_DIRECTORY}
    location = p.sd.location.rstrip("/")
    assert p.sd.skewedInfo.skewedColValueLocationMaps == {("US",): f"{location}/country=US", ("IN",): f"{location}/country=IN"}
    # The reason for the refusal: a default SparkSession reads nothing in subdirectories.
    spark.catalog.refreshTable(table)
    assert spark.sql(f"SELECT count(*) FROM {table}").first()[0] == 0
    # The pruned reader reads the groups' files by name, so it still answers every row.
    for country in ("US", "IN", "C05"):
        expected = [r for r in before if r[1] == country]
        assert rows_of(read(spark, table, ds=DAYS[0], country=country)) == expected
    assert rows_of(read(spark, table, ds=DAYS[0])) == before
    # One call configures a session to read such tables whole.
    read_subdirectories(spark)
    try:
        spark.catalog.refreshTable(table)
        assert spark.sql(f"SELECT count(*) FROM {table} WHERE ds = '{DAYS[0]}'").first()[0] == len(before)
    finally:
        read_subdirectories(spark, enabled=False)
        spark.catalog.refreshTable(table)


def test_a_failure_before_the_swap_leaves_the_partition_as_it_was(spark, proxy, db, monkeypatch):
    table = make_table(spark, db, days=DAYS[:1])
    set_skew(proxy, table, ["country"], [["US"]])
    old = partition(proxy, table, DAYS[0])
    old_files = files_under(old.sd.location)
    before = full_scan(spark, table)

    def fail():
        raise RuntimeError("injected: killed after writing, before the swap")

    monkeypatch.setattr(skew_layout, "before_swap_check", fail)
    status, ctx = run_job(spark, proxy, table)
    assert status == 1 and "injected" in ctx.stderr.getvalue()
    now = partition(proxy, table, DAYS[0])
    assert now.sd.location == old.sd.location and files_under(now.sd.location) == old_files
    assert LAYOUT_PARAMETER not in (now.parameters or {})
    assert full_scan(spark, table) == before
    # No half-written sibling directory is left in the table's directory.
    table_dir = local_path(old.sd.location).parent
    assert [p.name for p in table_dir.iterdir() if not p.name.startswith((".", "_"))] == [local_path(old.sd.location).name]

    # A wrong checksum (rows changed on the way) aborts the same way.
    monkeypatch.undo()
    monkeypatch.setattr(skew_layout, "verify", lambda *a, **k: [(1, 0)])
    status, ctx = run_job(spark, proxy, table)
    assert status == 1 and "not swapped" in ctx.stderr.getvalue()
    assert partition(proxy, table, DAYS[0]).sd.location == old.sd.location
    assert full_scan(spark, table) == before


def test_an_insert_overwrite_after_layout_makes_the_reader_ignore_the_record(spark, proxy, db):
    table = make_table(spark, db, days=DAYS[:1])
    set_skew(proxy, table, ["country"], [["US"], ["IN"]])
    status, ctx = run_job(spark, proxy, table)
    assert status == 0, ctx.stderr.getvalue()
    assert from_parameters(partition(proxy, table, DAYS[0]).parameters) is not None

    fresh = spark.createDataFrame(generated_rows(DAYS[0], {"US": 7, "BR": 9}, 5, start=5000), COLUMNS)
    fresh.createOrReplaceTempView("skew_overwrite")
    spark.sql(f"INSERT OVERWRITE TABLE {table} PARTITION (ds='{DAYS[0]}') SELECT * FROM skew_overwrite")
    spark.catalog.dropTempView("skew_overwrite")

    p = partition(proxy, table, DAYS[0])
    record = from_parameters(p.parameters)
    on_disk = files_under(p.sd.location)
    # Whether or not the parameter survived, it no longer describes the files.
    assert record is None or not matches_files(record, [(f, (local_path(p.sd.location) / f).stat().st_size) for f in on_disk])
    for country in ("US", "BR", "IN", "C01"):
        pruned = read(spark, table, ds=DAYS[0], country=country)
        assert rows_of(pruned) == full_scan(spark, table, ds=DAYS[0], country=country)
    assert len(rows_of(read(spark, table, ds=DAYS[0], country="US"))) == 7
    assert rows_of(read(spark, table, ds=DAYS[0], country="IN")) == []


def test_an_unpartitioned_table_with_a_map_column_is_laid_out_at_its_own_location(spark, proxy, db):
    """The table is laid out as one piece (record and SkewedInfo on the table); maps are checksummed as JSON."""
    table = f"{db}.flat_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE TABLE {table} (id INT, country STRING, tags MAP<STRING, INT>) STORED AS PARQUET")
    rows = [(i, ["US", "US", "IN", "C01", "C02"][i % 5], {"k": i, "j": i % 3}) for i in range(100)]
    spark.createDataFrame(rows, "id INT, country STRING, tags MAP<STRING, INT>").repartition(3).createOrReplaceTempView("flat_src")
    spark.sql(f"INSERT INTO {table} SELECT * FROM flat_src")
    spark.catalog.dropTempView("flat_src")
    set_skew(proxy, table, ["country"], [["US"]])
    db_name, name = table.split(".")
    with open_metastore(proxy.uri) as ms:
        old_location = ms.get_table(db_name, name).sd.location
    before = full_scan(spark, table)

    status, ctx = run_job(spark, proxy, table)
    assert status == 0, ctx.stderr.getvalue()
    assert f"skew-layout {table} [1/1] {table}: ok, 100 rows" in ctx.stderr.getvalue()
    with open_metastore(proxy.uri) as ms:
        t = ms.get_table(db_name, name)
    record = from_parameters(t.parameters)
    assert t.sd.location != old_location and not local_path(old_location).exists()
    assert [(g.values, g.rows) for g in record.groups] == [(("US",), 40), (None, 60)]
    assert t.sd.skewedInfo.skewedColNames == ["country"] and t.sd.skewedInfo.skewedColValues == [["US"]]
    assert files_under(t.sd.location) == sorted(f.name for f in record.files)
    assert full_scan(spark, table) == before  # a default SparkSession sees every row

    for country, group in (("US", "skew-0-US-"), ("IN", "skew-1-default-")):
        pruned = read(spark, table, country=country)
        assert rows_of(pruned) == full_scan(spark, table, country=country)
        names = [Path(urlparse(f).path).name for f in pruned.inputFiles()]
        assert names and all(n.startswith(group) for n in names), names
    # An INSERT after the layout adds a file the record doesn't list: the reader scans, and misses nothing.
    spark.sql(f"INSERT INTO {table} SELECT 1000, 'US', map('k', 1)")
    assert len(rows_of(read(spark, table, country="US"))) == 41
    assert rows_of(read(spark, table, country="US")) == full_scan(spark, table, country="US")


KILLER = """
import os, signal, sys
from hmsproxy.jobs import skew_layout
from hmsproxy.jobs.cli import main

def die(*_):
    os.kill(os.getpid(), signal.SIGKILL)  # no cleanup of any kind runs, as when a node dies

point = sys.argv[1]
if point == "after-writing":  # every group written and placed, nothing verified or swapped
    skew_layout.before_swap_check = die
elif point == "after-the-swap":  # the metastore has the new location; the old directory is still there
    swap = skew_layout.RecordingCatalog.alter_partition
    skew_layout.RecordingCatalog.alter_partition = lambda self, *a: (swap(self, *a), die())
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.parametrize("point", ["after-writing", "after-the-swap"])
def test_a_job_killed_with_sigkill_leaves_every_row_readable_and_the_next_run_succeeds(spark, proxy, db, tmp_path, point):
    table = make_table(spark, db, days=DAYS[:1])
    set_skew(proxy, table, ["country"], [["US"], ["IN"]])
    before = full_scan(spark, table)
    script = tmp_path / "killer.py"
    script.write_text(KILLER)
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT), SPARK_LOCAL_IP="127.0.0.1")
    argv = [sys.executable, str(script), point, "skew-layout", table, "--uri", proxy.uri]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=env, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=600)
    finally:
        try:
            os.killpg(proc.pid, 9)  # Spark's JVM too, should it outlive its Python
        except ProcessLookupError:
            pass
    assert proc.returncode == -9, f"stdout:\n{out}\nstderr:\n{err[-6000:]}"
    # The job died holding the partition's lock (it takes compact's, beside streaming writers); the
    # metastore drops it once unheartbeated for hive.txn.timeout (300 s): the test drops it now instead.
    db, name = table.split(".")
    with open_metastore(proxy.uri) as ms:
        for lock in ms.locks_on(db, name, f"ds={DAYS[0]}"):
            ms.unlock(lock.lockid)

    p = partition(proxy, table, DAYS[0])
    assert (from_parameters(p.parameters) is not None) == (point == "after-the-swap")
    assert full_scan(spark, table) == before  # every row, for a default SparkSession
    for country in ("US", "C03"):
        assert rows_of(read(spark, table, ds=DAYS[0], country=country)) == full_scan(spark, table, ds=DAYS[0], country=country)

    status, ctx = run_job(spark, proxy, table)
    assert status == 0, ctx.stderr.getvalue()
    expected = "0 laid out, 1 skipped" if point == "after-the-swap" else "1 laid out, 0 skipped"
    assert expected in ctx.stdout.getvalue()
    p = partition(proxy, table, DAYS[0])
    assert matches_files(
        from_parameters(p.parameters), [(f, (local_path(p.sd.location) / f).stat().st_size) for f in files_under(p.sd.location)]
    )
    assert full_scan(spark, table) == before

"""Maintenance jobs end to end: real metastores behind the proxy, Spark through it.

The compact job runs both as `python -m hmsproxy.jobs` in a subprocess (its own
Spark JVM, as under spark-submit or cron) and in this process with the shared
SparkSession. Each test makes its own partitioned Parquet table with several
small files per partition and checks the swap from the outside: the metastore's
locations, the files on disk, the rows Spark reads.
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

from hmsproxy.jobs import compact, compact_pass
from hmsproxy.jobs.cli import build_parser, run_job_command
from hmsproxy.jobs.context import JobContext

pytestmark = pytest.mark.spark

REPO_ROOT = Path(__file__).resolve().parents[2]
DAYS = ("2026-11-01", "2026-11-02", "2026-11-03")
ROWS_PER_DAY = 40
FILES_BEFORE = 4


def local_path(location: str) -> Path:
    return Path(urlparse(location).path)


def data_files(location: str) -> dict[str, bytes]:
    """name -> content of the data files (Hive's and Spark's rule: _ and . names are not data)."""
    d = local_path(location)
    return {p.name: p.read_bytes() for p in sorted(d.iterdir()) if p.is_file() and not p.name.startswith(("_", "."))}


def locations(client, db: str, table: str) -> dict[str, str]:
    """ds -> partition location, as the metastore (through the proxy) has it."""
    return {p.values[0]: p.sd.location for p in client.get_partitions(db, table, -1)}


def rows(spark, table: str, ds: str) -> list[tuple]:
    spark.catalog.refreshTable(table)
    return sorted(tuple(r) for r in spark.sql(f"SELECT id, name FROM {table} WHERE ds = '{ds}'").collect())


def rows_in_files(spark, location: str) -> list[tuple]:
    """The rows of the files at the location itself, independent of the catalog and its caches."""
    return sorted(tuple(r) for r in spark.read.parquet(location).select("id", "name").collect())


@pytest.fixture(scope="module")
def jobs_db(spark):
    spark.sql("CREATE DATABASE IF NOT EXISTS jobs_e2e")
    return "jobs_e2e"


def make_table(spark, db: str) -> tuple[str, str]:
    """A fresh `db.events_<id>` partitioned by ds, FILES_BEFORE Parquet files in each of three partitions."""
    name = f"events_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE TABLE {db}.{name} (id INT, name STRING) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    for ds in DAYS:
        src = spark.createDataFrame([(i, f"{ds}-{i}") for i in range(ROWS_PER_DAY)], "id INT, name STRING")
        src.repartition(FILES_BEFORE).createOrReplaceTempView("jobs_src")
        spark.sql(f"INSERT INTO {db}.{name} PARTITION (ds='{ds}') SELECT id, name FROM jobs_src")
    spark.catalog.dropTempView("jobs_src")  # the session is shared with other tests
    return db, name


class Before:
    """The table's state before a job: per partition its location, files and rows."""

    def __init__(self, spark, client, db, name):
        self.table = f"{db}.{name}"
        self.locations = locations(client, db, name)
        self.files = {ds: data_files(loc) for ds, loc in self.locations.items()}
        self.rows = {ds: rows(spark, self.table, ds) for ds in DAYS}
        assert sorted(self.locations) == list(DAYS)
        for ds in DAYS:  # the premise: several small files, the expected rows
            assert len(self.files[ds]) >= 3, self.files[ds].keys()
            assert len(self.rows[ds]) == ROWS_PER_DAY


def assert_compacted(spark, client, before: Before, db, name, ds, files: int) -> None:
    [part] = client.get_partitions_by_names(db, name, [f"ds={ds}"])
    new = part.sd.location
    old = before.locations[ds]
    assert new != old
    assert local_path(new).name.startswith(f"ds={ds}.hmsproxy-compact-")
    assert local_path(new).parent == local_path(old).parent  # a sibling, inside the table's directory
    assert not local_path(old).exists()
    assert len(data_files(new)) == files
    assert not (local_path(new) / "_SUCCESS").exists()
    # The metastore's file statistics describe the new files, not the old ones.
    assert part.parameters["numFiles"] == str(files)
    assert part.parameters["totalSize"] == str(sum(len(b) for b in data_files(new).values()))
    assert rows(spark, before.table, ds) == before.rows[ds]
    assert rows_in_files(spark, new) == before.rows[ds]


def assert_untouched(spark, client, before: Before, db, name, ds, *, read: bool = True) -> None:
    loc = locations(client, db, name)[ds]
    assert loc == before.locations[ds]
    assert data_files(loc) == before.files[ds]
    if read:
        assert rows(spark, before.table, ds) == before.rows[ds]


def assert_no_leftovers(client, db, name) -> None:
    """The table directory holds exactly the partitions' current directories: no half-written sibling stayed."""
    current = set(locations(client, db, name).values())
    table_dir = local_path(next(iter(current))).parent
    assert {p.name for p in table_dir.iterdir() if not p.name.startswith((".", "_"))} == {local_path(c).name for c in current}


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    return env


def run_module(*argv: str, cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "hmsproxy.jobs", *argv]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=_env())


def run_spark_submit(*argv: str, cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess:
    """pyspark's own spark-submit running the jobs module as a file, its driver on this Python."""
    import pyspark

    spark_home = Path(pyspark.__file__).parent
    env = _env() | {"SPARK_HOME": str(spark_home), "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    command = [str(spark_home / "bin" / "spark-submit"), *argv]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env)


def job_error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("hmsproxy job ")]


def context(spark, proxy) -> JobContext:
    return JobContext(proxy.uri, spark=spark, stdout=io.StringIO(), stderr=io.StringIO())


# --- the pure transformation on a local session ---------------------------------------------------


def test_compact_frame_keeps_the_rows_in_n_partitions(spark):
    many = spark.range(0, 100).repartition(5)
    narrowed = compact.compact_frame(many, 2)
    assert narrowed.rdd.getNumPartitions() == 2
    assert sorted(r.id for r in narrowed.collect()) == list(range(100))
    one = spark.range(0, 10).coalesce(1)
    widened = compact.compact_frame(one, 3)
    assert widened.rdd.getNumPartitions() == 3
    assert sorted(r.id for r in widened.collect()) == list(range(10))


# --- python -m hmsproxy.jobs -----------------------------------------------------------------------


def test_list_and_usage_exit_codes(tmp_path):
    listed = run_module("list", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    names = [line.split()[0] for line in listed.stdout.splitlines()]
    assert names == ["compact", "list", "rebuild-index", "skew-layout"]
    assert "rewrite each partition's files into N files" in listed.stdout
    assert listed.stderr == ""
    for argv, expected in [
        ((), "required: NAME"),
        (("nope",), "invalid choice: 'nope'"),
        (("compact", "t", "--files", "0"), "must be at least 1"),
    ]:
        proc = run_module(*argv, cwd=tmp_path)
        assert proc.returncode == 2 and expected in proc.stderr, (argv, proc.stderr)


def test_compact_in_a_subprocess(spark, proxy, proxy_client, jobs_db, tmp_path):
    db, name = make_table(spark, jobs_db)
    before = Before(spark, proxy_client, db, name)
    proc = run_module("compact", f"{db}.{name}", "--uri", proxy.uri, "--files", "2", cwd=tmp_path)
    assert proc.returncode == 0, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr[-6000:]}"
    for ds in DAYS:
        assert_compacted(spark, proxy_client, before, db, name, ds, files=2)
    assert_no_leftovers(proxy_client, db, name)
    # Not a TTY: one progress line per partition, and no error line.
    progress = [line for line in proc.stderr.splitlines() if line.startswith(f"compact {db}.{name} [")]
    assert [line.split("] ")[1].split(":")[0] for line in progress] == [f"ds={ds}" for ds in DAYS]
    assert all(f"ok, {ROWS_PER_DAY} rows" in line and f"({len(before.files[ds])} → 2 files)" in line for ds, line in zip(DAYS, progress))
    assert job_error_lines(proc.stderr) == []
    assert f"compact {db}.{name}: 3 rewritten, 0 skipped, 0 failed; {3 * ROWS_PER_DAY} rows" in proc.stdout


def test_compact_under_spark_submit(spark, proxy, proxy_client, jobs_db, tmp_path):
    """spark-submit made the session (its master, its metastore setting); the job uses it, and with no
    --uri its metastore calls go where that session's do."""
    db, name = make_table(spark, jobs_db)
    before = Before(spark, proxy_client, db, name)
    submit = ["--master", "local[1]", "--conf", f"spark.hadoop.hive.metastore.uris={proxy.uri}", "--conf", "spark.ui.enabled=false"]
    job = ["compact", f"{db}.{name}", "--partition", f"ds={DAYS[2]}", "--files", "1"]
    proc = run_spark_submit(*submit, str(REPO_ROOT / "hmsproxy" / "jobs" / "__main__.py"), *job, cwd=tmp_path)
    assert proc.returncode == 0, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr[-6000:]}"
    assert_compacted(spark, proxy_client, before, db, name, DAYS[2], files=1)
    for ds in DAYS[:2]:
        assert_untouched(spark, proxy_client, before, db, name, ds)
    assert f"compact {db}.{name}: 1 rewritten, 0 skipped, 0 failed" in proc.stdout


# --- in this process, with the shared session -------------------------------------------------------


def test_a_corrupt_partition_fails_alone(spark, proxy, proxy_client, jobs_db):
    """The job's exit status, its one error line naming the root cause, the other partitions
    compacted (run here: the subprocess and spark-submit runs above cover the entry points)."""
    db, name = make_table(spark, jobs_db)
    bad = DAYS[1]
    before = Before(spark, proxy_client, db, name)
    corrupt = local_path(before.locations[bad]) / "part-99999-corrupt.snappy.parquet"
    corrupt.write_bytes(b"this is not parquet")
    before.files[bad] = data_files(before.locations[bad])
    ctx = context(spark, proxy)
    status = run_job_command(build_parser().parse_args(["compact", f"{db}.{name}", "--files", "1"]), ctx)
    stdout, stderr = ctx.stdout.getvalue(), ctx.stderr.getvalue()
    assert status == 1, f"stdout:\n{stdout}\nstderr:\n{stderr[-6000:]}"
    [error] = job_error_lines(stderr)
    assert error.startswith("hmsproxy job compact: failed for 1 of 3 partitions (left as they were); ds=2026-11-02: ")
    assert "RuntimeException: file:" in error and "part-99999-corrupt.snappy.parquet is not a Parquet file" in error  # the root cause
    assert_untouched(spark, proxy_client, before, db, name, bad, read=False)  # the corrupt file makes it unreadable
    for ds in (DAYS[0], DAYS[2]):
        assert_compacted(spark, proxy_client, before, db, name, ds, files=1)
    assert_no_leftovers(proxy_client, db, name)
    assert "2 rewritten, 0 skipped, 1 failed" in stdout


@pytest.mark.parametrize("where", ["primary", "federated"])
def test_compact_one_partition_in_process(spark, proxy, proxy_client, jobs_db, federated_dbs, where):
    """Through the job's run function; also on the federated metastore (prefix rewriting on the swap)."""
    db, name = make_table(spark, jobs_db if where == "primary" else "waggle_sales")
    before = Before(spark, proxy_client, db, name)
    ctx = context(spark, proxy)
    args = build_parser().parse_args(["compact", f"{db}.{name}", "--partition", f"ds={DAYS[1]}", "--files", "1"])
    assert compact.JOB.run(args, ctx) == 0
    assert_compacted(spark, proxy_client, before, db, name, DAYS[1], files=1)
    for ds in (DAYS[0], DAYS[2]):
        assert_untouched(spark, proxy_client, before, db, name, ds)
    assert_no_leftovers(proxy_client, db, name)
    assert ctx.stderr.getvalue().splitlines()[0].startswith(f"compact {db}.{name} [1/1] ds={DAYS[1]}: ok, 40 rows")
    # Running again finds nothing to do: one file is already at most one.
    assert compact.JOB.run(args, ctx) == 0
    assert f"[1/1] ds={DAYS[1]}: skipped: 1 file(s) already" in ctx.stderr.getvalue()
    spark.sql(f"DROP TABLE {db}.{name}")


def test_a_write_that_fails_midway_leaves_the_partition_as_it_was(spark, proxy, proxy_client, jobs_db, monkeypatch):
    db, name = make_table(spark, jobs_db)
    before = Before(spark, proxy_client, db, name)
    bad = DAYS[1]
    real_write = compact.write_files
    written_then_failed = []

    def write_then_fail(df, fmt, location):
        real_write(df, fmt, location)  # the new files exist when the failure comes
        if f"ds={bad}." in location:
            written_then_failed.append(data_files(location))
            raise RuntimeError("injected: the executor was lost")

    monkeypatch.setattr(compact, "write_files", write_then_fail)
    # Partition by partition, as a pass falls back to (test_compact_many_partitions_spark.py fails a pass's swap).
    monkeypatch.setattr(compact_pass, "PASS_FORMATS", ())
    ctx = context(spark, proxy)
    args = build_parser().parse_args(["compact", f"{db}.{name}", "--files", "1"])
    assert run_job_command(args, context=ctx) == 1
    assert len(written_then_failed) == 1 and len(written_then_failed[0]) == 1  # it really failed after writing
    [error] = job_error_lines(ctx.stderr.getvalue())
    assert error == (
        f"hmsproxy job compact: failed for 1 of 3 partitions (left as they were); ds={bad}: RuntimeError: injected: the executor was lost"
    )
    assert f"[2/3] ds={bad}: FAILED after" in ctx.stderr.getvalue()
    assert_untouched(spark, proxy_client, before, db, name, bad)
    for ds in (DAYS[0], DAYS[2]):
        assert_compacted(spark, proxy_client, before, db, name, ds, files=1)
    assert_no_leftovers(proxy_client, db, name)


def test_compact_an_unpartitioned_table_in_process(spark, proxy, proxy_client, jobs_db):
    """No partitions: the table's own location is swapped (alter_table)."""
    name = f"flat_{uuid.uuid4().hex[:8]}"
    table = f"{jobs_db}.{name}"
    spark.sql(f"CREATE TABLE {table} (id INT, name STRING) STORED AS PARQUET")
    src = spark.createDataFrame([(i, f"n{i}") for i in range(30)], "id INT, name STRING")
    src.repartition(FILES_BEFORE).createOrReplaceTempView("jobs_src")
    spark.sql(f"INSERT INTO {table} SELECT id, name FROM jobs_src")
    spark.catalog.dropTempView("jobs_src")
    old = proxy_client.get_table(jobs_db, name).sd.location
    assert len(data_files(old)) >= 3
    expected = sorted(tuple(r) for r in spark.table(table).collect())
    ctx = context(spark, proxy)
    assert compact.JOB.run(build_parser().parse_args(["compact", table, "--files", "1"]), ctx) == 0
    new = proxy_client.get_table(jobs_db, name).sd.location
    assert new != old and local_path(new).name.startswith(f"{name}.hmsproxy-compact-")
    assert not local_path(old).exists()
    assert len(data_files(new)) == 1
    spark.catalog.refreshTable(table)
    assert sorted(tuple(r) for r in spark.table(table).collect()) == expected
    assert ctx.stderr.getvalue().startswith(f"compact {table} [1/1] {table}: ok, 30 rows")
    spark.sql(f"DROP TABLE {table}")
    assert not local_path(new).exists()  # still a managed table's own directory: dropped with it


def test_errors_in_process(spark, proxy, proxy_client, jobs_db, capsys):
    ctx = context(spark, proxy)
    assert run_job_command(build_parser().parse_args(["compact", f"{jobs_db}.no_such_table"]), context=ctx) == 1
    assert ctx.stderr.getvalue() == f"hmsproxy job compact: table {jobs_db}.no_such_table does not exist (metastore {proxy.uri})\n"

    db, name = make_table(spark, jobs_db)
    ctx = context(spark, proxy)
    argv = ["compact", f"{db}.{name}", "--partition", "hr=1"]
    assert run_job_command(build_parser().parse_args(argv), context=ctx) == 2
    assert ctx.stderr.getvalue() == f"hmsproxy job compact: --partition names hr but {db}.{name} is partitioned by ds\n"

    # No context given: the job finds this process's session; another --uri is a usage error,
    # and the session (not the job's to stop) keeps working.
    args = build_parser().parse_args(["compact", f"{db}.{name}", "--uri", "thrift://127.0.0.1:1"])
    assert run_job_command(args) == 2
    assert capsys.readouterr().err == (
        "hmsproxy job compact: --uri thrift://127.0.0.1:1 but this process's SparkSession uses metastore "
        f"{proxy.uri}; a process has one SparkSession: leave out --uri or run the job in its own process\n"
    )
    assert spark.sql("SELECT 1 AS x").collect()[0].x == 1
    spark.sql(f"DROP TABLE {db}.{name}")

"""Maintenance jobs without a JVM: registry, CLI and exit codes, progress formatting,
partition selection, the swap (local files and a fake metastore), compact's pure parts."""

from __future__ import annotations

import argparse
import io
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hmsproxy.files.storage import Entry
from hmsproxy.jobs import compact, list_jobs, rebuild_index, skew_layout
from hmsproxy.jobs.cli import add_job_parser, build_parser, run_job_command
from hmsproxy.jobs.context import JobContext
from hmsproxy.jobs.errors import JobError, UsageError, one_line
from hmsproxy.jobs.progress import (
    FAILED,
    OK,
    SKIPPED,
    BarProgress,
    ItemResult,
    LineProgress,
    format_bar,
    format_bar_line,
    format_bytes,
    format_duration,
    format_item_line,
    make_progress,
)
from hmsproxy.jobs.registry import Job, all_jobs, get_job, register
from hmsproxy.jobs.session import check_same_metastore
from hmsproxy.jobs.swap import Written, relocated, sibling_location, swap_in
from hmsproxy.jobs.tables import (
    Target,
    data_format,
    list_targets,
    matches,
    parse_partition_name,
    parse_spec,
    refuse_unsupported,
    split_table_name,
)
from hmsproxy.protocol import idl

hive = idl.hive

# --- fakes ---------------------------------------------------------------------------------------


class LocalStorage:
    """The Storage protocol on plain local paths (a stand-in for the storage door's ArrowStorage)."""

    def __init__(self, fail_delete: set[str] | None = None):
        self.fail_delete = fail_delete or set()

    def exists(self, location: str) -> bool:
        return Path(location).exists()

    def list(self, location: str) -> list[Entry]:
        return [Entry(str(p), p.name, p.stat().st_size if p.is_file() else 0, p.is_dir()) for p in Path(location).iterdir()]

    def delete(self, location: str) -> None:
        if location in self.fail_delete:
            raise OSError("permission denied")
        shutil.rmtree(location)


def parquet_sd(location: str, **kw) -> hive.StorageDescriptor:
    kw = {"numBuckets": -1, "bucketCols": [], **kw}
    return hive.StorageDescriptor(
        cols=[hive.FieldSchema(name="id", type="int")],
        location=location,
        inputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
        serdeInfo=hive.SerDeInfo(
            serializationLib="org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe", parameters={"serialization.format": "1"}
        ),
        parameters={},
        **kw,
    )


def table(location="/wh/t", keys=("ds",), params=None, **sd_kw) -> hive.Table:
    return hive.Table(
        dbName="db",
        tableName="t",
        sd=parquet_sd(location, **sd_kw),
        tableType="MANAGED_TABLE",
        partitionKeys=[hive.FieldSchema(name=k, type="string") for k in keys],
        parameters=dict(params or {}),
    )


class FakeCatalog:
    """Partitions and a table by location; records alters; can refuse, or apply and then fail."""

    def __init__(self, parts: dict[tuple[str, ...], str], table_location: str = "/wh/t"):
        self.parts = {
            v: hive.Partition(
                values=list(v),
                dbName="db",
                tableName="t",
                sd=parquet_sd(loc),
                parameters={"numFiles": "4", "totalSize": "400", "numRows": "40"},
            )
            for v, loc in parts.items()
        }
        self.table = table(table_location, keys=())
        self.alters: list = []
        self.refuse: Exception | None = None
        self.apply_then_fail: Exception | None = None
        self.fetch_fails = False

    def get_partition(self, db, tbl, values):
        if self.fetch_fails and self.alters:
            raise ConnectionError("gone")
        return self.parts[tuple(values)]

    def get_table(self, db, tbl):
        return self.table

    def alter_partition(self, db, tbl, part):
        self.alters.append(part)
        if self.refuse:
            raise self.refuse
        self.parts[tuple(part.values)] = part
        if self.apply_then_fail:
            raise self.apply_then_fail

    def alter_table(self, db, tbl, new):
        self.alters.append(new)
        self.table = new

    # MetastoreClient's listing calls, for list_targets
    def partition_names(self, db, tbl):
        return ["ds=" + v[0].replace(":", "%3A") for v in self.parts]

    def partitions_by_names(self, db, tbl, names):
        wanted = {tuple(parse_partition_name(n).values()) for n in names}
        return [p for v, p in self.parts.items() if v in wanted]


@pytest.fixture
def part_dir(tmp_path):
    """A table directory with partition ds=1 holding four data files, a _SUCCESS and a .crc."""
    d = tmp_path / "t" / "ds=1"
    d.mkdir(parents=True)
    for i in range(4):
        (d / f"part-{i}.parquet").write_bytes(b"x" * (10 + i))
    (d / "_SUCCESS").write_bytes(b"")
    (d / ".part-0.parquet.crc").write_bytes(b"c")
    return d


def snapshot_of(path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(path.iterdir())}


def writer(files=2, rows=40, then=None):
    """A job's write step: `files` files into the new directory, then `then(new)` (e.g. raise)."""

    def write(new: str) -> Written:
        Path(new).mkdir()
        for i in range(files):
            (Path(new) / f"part-{i}.parquet").write_bytes(b"y" * 20)
        if then:
            then(new)
        return Written(rows, files, files * 20)

    return write


# --- registry, CLI, exit codes --------------------------------------------------------------------


def test_registry_has_the_builtin_jobs_sorted():
    assert [j.name for j in all_jobs()] == ["compact", "list", "rebuild-index", "skew-layout"]
    assert get_job("compact") is compact.JOB
    with pytest.raises(KeyError, match="no job named 'nope'"):
        get_job("nope")
    with pytest.raises(ValueError, match="already registered"):
        register(Job("list", "another list", lambda p: None, lambda a, c: 0))


def test_list_prints_every_job_with_its_help_and_starts_no_spark():
    out, err = io.StringIO(), io.StringIO()
    ctx = JobContext(stdout=out, stderr=err)
    assert run_job_command(build_parser().parse_args(["list"]), context=ctx) == 0
    assert out.getvalue().splitlines() == [
        f"compact        {compact.JOB.help}",
        f"list           {list_jobs.JOB.help}",
        f"rebuild-index  {rebuild_index.JOB.help}",
        f"skew-layout    {skew_layout.JOB.help}",
    ]
    assert err.getvalue() == ""
    assert not ctx.spark_started


def test_the_parser_loads_neither_thrift_nor_spark():
    """`hmsproxy --help` builds the job parser too: it must stay as cheap as the other commands'."""
    code = "import sys; from hmsproxy.jobs.cli import build_parser; build_parser(); print(sorted(m for m in ('thriftpy2', 'pyspark', 'py4j') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=Path(__file__).parents[2])
    assert out.stdout.strip() == "[]"


def test_job_subcommand_plugs_into_a_parent_cli():
    """What `hmsproxy job ...` does once cli.py calls add_job_parser(sub)."""
    parent = argparse.ArgumentParser(prog="hmsproxy")
    sub = parent.add_subparsers(dest="command", required=True)
    add_job_parser(sub)
    args = parent.parse_args(["job", "compact", "db.t", "--uri", "thrift://h:1", "--files", "3", "--partition", "ds=1"])
    assert args.func is run_job_command
    assert (args.job_name, args.table, args.uri, args.files, args.partition) == ("compact", "db.t", "thrift://h:1", 3, ["ds=1"])
    before = parent.parse_args(["job", "--uri", "thrift://h:2", "--conf", "a=b", "compact", "t"])
    assert (before.uri, before.conf, before.files, before.partition) == ("thrift://h:2", [("a", "b")], 1, [])
    assert parent.parse_args(["job", "list"]).uri is None  # resolved later: the session's, else the dev proxy


@pytest.mark.parametrize("argv", [[], ["nope"], ["compact"], ["compact", "t", "--files", "0"], ["--conf", "novalue", "list"]])
def test_usage_errors_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as e:
        build_parser().parse_args(argv)
    assert e.value.code == 2
    assert "error:" in capsys.readouterr().err


def _run_fake(monkeypatch, run):
    monkeypatch.setattr("hmsproxy.jobs.cli.get_job", lambda name: Job("fake", "a fake", lambda p: None, run))
    err = io.StringIO()
    ctx = JobContext(stdout=io.StringIO(), stderr=err)
    return run_job_command(argparse.Namespace(job_name="fake", uri=None, conf=None), context=ctx), err.getvalue()


@pytest.mark.parametrize(
    "exc, status, line",
    [
        (JobError("table db.t does not exist"), 1, "hmsproxy job fake: table db.t does not exist\n"),
        (UsageError("bad spec"), 2, "hmsproxy job fake: bad spec\n"),
        (RuntimeError("boom\n\tat some.java.Frame"), 1, "hmsproxy job fake: failed: RuntimeError: boom\n"),
        (KeyboardInterrupt(), 130, "hmsproxy job fake: interrupted\n"),
    ],
)
def test_exit_status_and_one_line_on_stderr(monkeypatch, exc, status, line):
    def run(args, ctx):
        raise exc

    assert _run_fake(monkeypatch, run) == (status, line)


def test_a_job_that_returns_passes_its_status_through(monkeypatch):
    assert _run_fake(monkeypatch, lambda a, c: 0) == (0, "")


def test_compact_usage_errors_are_found_before_spark_starts():
    for argv, message in [
        (["compact", "db.t", "--partition", "ds"], "not a partition spec"),
        (["compact", "a.b.c"], "not a table name"),
        (["compact", "db.t", "--partition", "ds=1/ds=2"], "names 'ds' twice"),
    ]:
        err = io.StringIO()
        ctx = JobContext(stdout=io.StringIO(), stderr=err)
        assert run_job_command(build_parser().parse_args(argv), context=ctx) == 2
        assert message in err.getvalue() and err.getvalue().count("\n") == 1
        assert not ctx.spark_started


def test_one_line():
    py4j = "An error occurred while calling o42.save.\n: org.apache.spark.SparkException: Job aborted.\n\tat x.y(Z.java:1)"
    assert one_line(Exception(py4j)) == "org.apache.spark.SparkException: Job aborted."  # its own type says enough
    assert one_line(JobError("first\nsecond")) == "first"
    assert one_line(ValueError("")) == "ValueError"
    long = one_line(JobError("x" * 1000))
    assert len(long) == 400 and long.endswith("…")


class FakeJava:
    """A py4j JavaObject of a Java exception: class, message, cause."""

    def __init__(self, cls, message, cause=None):
        self._cls, self._message, self._cause = cls, message, cause

    def getClass(self):
        return type("Class", (), {"getSimpleName": lambda _: self._cls})()

    def getMessage(self):
        return self._message

    def getCause(self):
        return self._cause


def test_one_line_of_a_spark_task_failure_is_its_innermost_cause():
    root = FakeJava("RuntimeException", "file:/t/ds=1/bad.parquet is not a Parquet file (length is too low: 4)")
    chain = FakeJava(
        "SparkException",
        "Job aborted due to stage failure: Task 1 ...",
        FakeJava("SparkException", "Exception thrown in awaitResult:", FakeJava("IOException", None, root)),
    )
    error = Exception("An error occurred while calling o9.count.\n: org.apache.spark.SparkException: Job aborted")
    error.java_exception = chain
    assert one_line(error) == "RuntimeException: file:/t/ds=1/bad.parquet is not a Parquet file (length is too low: 4)"
    dead = Exception("An error occurred while calling o9.count.\n: java.io.IOException: gone")
    dead.java_exception = type("Gone", (), {"getMessage": lambda _: (_ for _ in ()).throw(ConnectionError())})()
    assert one_line(dead) == "java.io.IOException: gone"  # the JVM is gone: Python's text


def test_a_given_session_on_another_metastore_is_a_usage_error():
    class Conf:
        def get(self, key, default=None):
            return "thrift://proxy:9083" if key == "spark.hadoop.hive.metastore.uris" else default

    class Spark:
        conf = Conf()  # the session's own settings hold it (as spark-submit's --conf puts it there)

        class sparkContext:
            getConf = staticmethod(Conf)

    check_same_metastore(Spark, "thrift://proxy:9083")
    check_same_metastore(Spark, None)
    with pytest.raises(UsageError, match="uses metastore thrift://proxy:9083"):
        check_same_metastore(Spark, "thrift://other:9083")
    with pytest.raises(UsageError):
        JobContext("thrift://other:9083", spark=Spark)


# --- progress ------------------------------------------------------------------------------------


def test_number_formats():
    assert [format_bytes(n) for n in (0, 1023, 1024, 1536, 5 * 1024**3)] == ["0 B", "1023 B", "1.0 KiB", "1.5 KiB", "5.0 GiB"]
    assert [format_duration(s) for s in (0.04, 59.94, 61, 3600 + 62)] == ["0.0s", "59.9s", "1:01", "1:01:02"]
    assert format_bar(0.5, 10) == "█████░░░░░" and format_bar(1.5, 4, ascii_only=True) == "####"


def test_item_lines():
    ok = ItemResult(OK, rows=1234, bytes=2048, note="4 → 2 files")
    assert (
        format_item_line("compact db.t", 2, 3, "ds=1", ok, 1.25) == "compact db.t [2/3] ds=1: ok, 1,234 rows, 2.0 KiB, 1.2s (4 → 2 files)"
    )
    failed = ItemResult(FAILED, note="disk full")
    assert format_item_line("c", 1, 3, "ds=2", failed, 75) == "c [1/3] ds=2: FAILED after 1:15: disk full"
    assert format_item_line("c", 3, 3, "ds=3", ItemResult(SKIPPED, note="1 file(s)"), 0) == "c [3/3] ds=3: skipped: 1 file(s)"


def test_bar_line_fits_the_terminal():
    line = format_bar_line("compact db.t", 1, 4, 1000, 4096, 3.0, "ds=2026-11-01", 200)
    assert line == "compact db.t █████░░░░░░░░░░░░░░░ 1/4 · 1,000 rows · 4.0 KiB · 3.0s · ds=2026-11-01"
    cut = format_bar_line("compact db.t", 1, 4, 1000, 4096, 3.0, "ds=" + "x" * 200, 60)
    assert len(cut) == 59 and cut.endswith("…")
    assert "#####---" in format_bar_line("c", 1, 4, 0, 0, 0, None, 80, ascii_only=True)


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


class Tty(io.StringIO):
    encoding = "utf-8"

    def isatty(self):
        return True


def test_line_progress_is_one_line_per_partition():
    stream, clock = io.StringIO(), Clock()
    with LineProgress("compact db.t", 2, stream, clock) as p:
        p.start("ds=1")
        clock.now += 2
        p.finish("ds=1", ItemResult(OK, rows=10, bytes=100))
        p.start("ds=2")
        clock.now += 1
        p.finish("ds=2", ItemResult(FAILED, note="boom"))
    assert stream.getvalue().splitlines() == [
        "compact db.t [1/2] ds=1: ok, 10 rows, 100 B, 2.0s",
        "compact db.t [2/2] ds=2: FAILED after 1.0s: boom",
    ]
    assert (p.done, p.failed, p.rows, p.bytes, p.elapsed) == (2, 1, 10, 100, 3.0)


def test_bar_progress_redraws_one_line_and_keeps_failures():
    stream, clock = Tty(), Clock()
    assert isinstance(make_progress("c", 2, io.StringIO()), LineProgress)
    p = make_progress("c", 2, stream, clock=clock, refresh_s=None, columns=lambda: 80)
    assert isinstance(p, BarProgress)
    p.start("ds=1")
    clock.now += 1
    p.finish("ds=1", ItemResult(OK, rows=5, bytes=50))
    assert "\n" not in stream.getvalue()  # only redraws so far
    assert stream.getvalue().count("\r") == 3  # first draw, start, finish
    p.start("ds=2")
    p.finish("ds=2", ItemResult(FAILED, note="boom"))
    p.close()
    p.close()  # idempotent
    out = stream.getvalue()
    assert "\rc [2/2] ds=2: FAILED after 0.0s: boom\x1b[K\n" in out
    assert out.endswith("2/2 · 5 rows · 50 B · 1.0s\x1b[K\n")
    assert out.count("\n") == 2


# --- tables --------------------------------------------------------------------------------------


def test_names_and_specs():
    assert split_table_name("Sales.Orders") == ("sales", "orders")
    assert split_table_name("orders") == ("default", "orders")
    for bad in ("", "a.", ".b", "a.b.c"):
        with pytest.raises(UsageError):
            split_table_name(bad)
    assert parse_spec("DS=2026-11-01/hr=3") == {"ds": "2026-11-01", "hr": "3"}
    assert parse_spec("note=a=b") == {"note": "a=b"}
    for bad in ("ds", "=1", "ds=1/", "ds=1/ds=2"):
        with pytest.raises(UsageError):
            parse_spec(bad)
    assert parse_partition_name("ds=2026-11-01/ts=12%3A00%3A00") == {"ds": "2026-11-01", "ts": "12:00:00"}
    assert matches({"ds": "1", "hr": "2"}, [])
    assert matches({"ds": "1", "hr": "2"}, [{"hr": "3"}, {"hr": "2"}])
    assert not matches({"ds": "1", "hr": "2"}, [{"ds": "1", "hr": "3"}])


def test_formats():
    assert data_format(table()) == "parquet"
    orc = table()
    orc.sd.inputFormat, orc.sd.serdeInfo.serializationLib = "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "x"
    assert data_format(orc) == "orc"
    spark_ds = table(params={"spark.sql.sources.provider": "ORC"})
    spark_ds.sd.inputFormat = "org.apache.hadoop.mapred.SequenceFileInputFormat"
    assert data_format(spark_ds) == "orc"
    text = table()
    text.sd.inputFormat, text.sd.serdeInfo.serializationLib = "org.apache.hadoop.mapred.TextInputFormat", "LazySimpleSerDe"
    with pytest.raises(JobError, match="stored as org.apache.hadoop.mapred.TextInputFormat; only Parquet and ORC"):
        data_format(text)
    with pytest.raises(JobError, match="stored as csv"):
        data_format(table(params={"spark.sql.sources.provider": "csv"}))


@pytest.mark.parametrize(
    "make, reason",
    [
        (lambda: table(params={"transactional": "TRUE"}), "transactional"),
        (lambda: table(numBuckets=4), "bucketed but lacks its bucket columns"),
        (lambda: table(params={"spark.sql.sources.schema.numBucketCols": "1"}), "bucketed by Spark"),
        (lambda: table(numBuckets=4, bucketCols=["id"], sortCols=[hive.Order(col="id", order=1)]), "sorted"),
        (lambda: hive.Table(dbName="db", tableName="t", sd=parquet_sd(None), tableType="VIRTUAL_VIEW"), "view"),
        (lambda: table(location=None), "no location"),
    ],
)
def test_layouts_the_rewrite_would_break_are_refused(make, reason):
    refuse_unsupported(table())
    # Skewed tables are compacted (a laid-out partition group by group: compact_layout.py).
    refuse_unsupported(table(storedAsSubDirectories=True, skewedInfo=hive.SkewedInfo(["id"], [["1"]], {})))
    with pytest.raises(JobError, match=reason):
        refuse_unsupported(make())


def test_a_hive_bucketed_table_is_compacted_by_its_buckets():
    from hmsproxy.files.storage import Entry
    from hmsproxy.jobs.buckets import Buckets, buckets_of, one_file_per_bucket

    bucketed = table(numBuckets=4, bucketCols=["ID"], params={"bucketing_version": "2"})
    refuse_unsupported(bucketed)
    assert buckets_of(bucketed) == Buckets(("id",), ("int",), 4, 2)
    assert buckets_of(table()) is None
    with pytest.raises(JobError, match="bucket column.*nope"):
        buckets_of(table(numBuckets=2, bucketCols=["nope"]))
    named = [Entry(f"/p/{n}", n, 1, False, 0) for n in ("000000_0.parquet", "000003_stream-9.parquet")]
    assert one_file_per_bucket(named)
    assert not one_file_per_bucket([*named, Entry("/p/x", "000003_0.parquet", 1, False, 0)])
    assert not one_file_per_bucket([Entry("/p/part-0", "part-00000.parquet", 1, False, 0)])


def test_list_targets():
    cat = FakeCatalog({("1",): "/wh/t/ds=1", ("12:00",): "/wh/t/ds=12%3A00", ("3",): "/wh/t/ds=3"})
    t = table()
    assert [(x.name, x.values, x.location) for x in list_targets(cat, t, [])] == [
        ("ds=1", ("1",), "/wh/t/ds=1"),
        ("ds=12%3A00", ("12:00",), "/wh/t/ds=12%3A00"),
        ("ds=3", ("3",), "/wh/t/ds=3"),
    ]
    assert [x.name for x in list_targets(cat, t, [{"ds": "12:00"}, {"ds": "3"}])] == ["ds=12%3A00", "ds=3"]
    with pytest.raises(JobError, match="no partition of db.t matches ds=9"):
        list_targets(cat, t, [{"ds": "9"}])
    with pytest.raises(UsageError, match="names hr but db.t is partitioned by ds"):
        list_targets(cat, t, [{"hr": "1"}])
    flat = table("/wh/flat", keys=())
    assert list_targets(cat, flat, []) == [Target("db", "t", "db.t", "/wh/flat")]
    with pytest.raises(UsageError, match="not partitioned"):
        list_targets(cat, flat, [{"ds": "1"}])


# --- the swap ------------------------------------------------------------------------------------


def test_sibling_location_and_relocated():
    assert sibling_location("hdfs://nn/wh/t/ds=1/", "compact", "T1") == "hdfs://nn/wh/t/ds=1.hmsproxy-compact-T1"
    assert sibling_location("/wh/t/ds=1.hmsproxy-compact-T1", "compact", "T2") == "/wh/t/ds=1.hmsproxy-compact-T2"
    with pytest.raises(JobError):
        sibling_location("nowhere", "compact", "T")
    part = FakeCatalog({("1",): "/wh/t/ds=1"}).parts[("1",)]
    part.sd.serdeInfo.parameters["path"] = "/wh/t/ds=1"
    new = relocated(part, "/wh/t/ds=1.new", Written(40, 2, 123))
    assert new.sd.location == "/wh/t/ds=1.new" and new.sd.serdeInfo.parameters["path"] == "/wh/t/ds=1.new"
    assert new.parameters == {"numFiles": "2", "totalSize": "123", "numRows": "40"}
    assert part.sd.location == "/wh/t/ds=1" and part.parameters["numFiles"] == "4"  # a copy


def _swap(part_dir, cat, storage=None, write=None):
    storage = storage or LocalStorage()
    target = Target("db", "t", "ds=1", str(part_dir), ("1",))
    snapshot = [e for e in storage.list(str(part_dir)) if not e.name.startswith(("_", "."))]
    return swap_in(target, write or writer(), storage=storage, catalog=cat, snapshot=snapshot, job="compact", token="T")


def test_swap_points_the_partition_at_the_new_files_then_removes_the_old(part_dir):
    cat = FakeCatalog({("1",): str(part_dir)})
    swapped = _swap(part_dir, cat)
    new = part_dir.parent / "ds=1.hmsproxy-compact-T"
    assert swapped.new_location == str(new) and swapped.warning is None
    assert cat.parts[("1",)].sd.location == str(new)
    assert cat.parts[("1",)].parameters["numFiles"] == "2"
    assert sorted(p.name for p in new.iterdir()) == ["part-0.parquet", "part-1.parquet"]
    assert not part_dir.exists()


def test_a_write_that_fails_leaves_everything_as_it_was(part_dir):
    cat = FakeCatalog({("1",): str(part_dir)})
    before = snapshot_of(part_dir)

    def fail(new):
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        _swap(part_dir, cat, write=writer(then=fail))
    assert snapshot_of(part_dir) == before
    assert [p.name for p in part_dir.parent.iterdir()] == ["ds=1"]  # the half-written directory is gone
    assert cat.alters == [] and cat.parts[("1",)].sd.location == str(part_dir)


def test_a_refused_alter_deletes_the_new_directory(part_dir):
    cat = FakeCatalog({("1",): str(part_dir)})
    cat.refuse = hive.MetaException(message="hmsproxy: writes to database 'db' are not allowed")
    before = snapshot_of(part_dir)
    with pytest.raises(JobError, match="the metastore refused the new location: hmsproxy: writes to database 'db'"):
        _swap(part_dir, cat)
    assert snapshot_of(part_dir) == before
    assert [p.name for p in part_dir.parent.iterdir()] == ["ds=1"]
    assert cat.parts[("1",)].sd.location == str(part_dir)


def test_an_alter_applied_but_unanswered_counts_as_swapped(part_dir):
    cat = FakeCatalog({("1",): str(part_dir)})
    cat.apply_then_fail = ConnectionResetError("reset")
    swapped = _swap(part_dir, cat)
    assert cat.parts[("1",)].sd.location == swapped.new_location
    assert not part_dir.exists() and Path(swapped.new_location).is_dir()


def test_an_alter_of_unknown_outcome_keeps_both_directories(part_dir):
    cat = FakeCatalog({("1",): str(part_dir)})
    cat.apply_then_fail, cat.fetch_fails = ConnectionResetError("reset"), True
    with pytest.raises(JobError, match="can't be told whether it was applied; both .* are kept"):
        _swap(part_dir, cat)
    assert part_dir.exists() and (part_dir.parent / "ds=1.hmsproxy-compact-T").exists()


def test_a_concurrent_write_to_the_partition_aborts_the_swap(part_dir):
    cat = FakeCatalog({("1",): str(part_dir)})

    def someone_inserts(new):
        (part_dir / "part-9.parquet").write_bytes(b"new rows")

    with pytest.raises(JobError, match="files changed while the job ran"):
        _swap(part_dir, cat, write=writer(then=someone_inserts))
    assert (part_dir / "part-9.parquet").exists() and len(list(part_dir.iterdir())) == 7
    assert [p.name for p in part_dir.parent.iterdir()] == ["ds=1"]
    assert cat.alters == []


def test_a_concurrent_location_change_aborts_the_swap(part_dir):
    cat = FakeCatalog({("1",): str(part_dir)})

    def someone_moves(new):
        cat.parts[("1",)].sd.location = "/elsewhere"

    with pytest.raises(JobError, match="location changed to /elsewhere"):
        _swap(part_dir, cat, write=writer(then=someone_moves))
    assert cat.alters == [] and part_dir.exists()
    assert [p.name for p in part_dir.parent.iterdir()] == ["ds=1"]


def test_an_old_directory_that_cant_be_removed_is_a_warning(part_dir):
    cat = FakeCatalog({("1",): str(part_dir)})
    swapped = _swap(part_dir, cat, storage=LocalStorage(fail_delete={str(part_dir)}))
    assert cat.parts[("1",)].sd.location == swapped.new_location
    assert swapped.warning == f"could not remove the old directory {part_dir}: OSError: permission denied"


def test_an_unpartitioned_table_is_swapped_with_alter_table(tmp_path):
    data = tmp_path / "db" / "flat"
    data.mkdir(parents=True)
    for i in range(3):
        (data / f"part-{i}.parquet").write_bytes(b"z")
    cat = FakeCatalog({}, table_location=str(data))
    storage = LocalStorage()
    target = Target("db", "t", "db.t", str(data))
    swapped = swap_in(target, writer(files=1), storage=storage, catalog=cat, snapshot=storage.list(str(data)), job="compact", token="T")
    assert cat.table.sd.location == swapped.new_location == str(tmp_path / "db" / "flat.hmsproxy-compact-T")
    assert not data.exists()


# --- compact's pure parts ------------------------------------------------------------------------


class FakeFrame:
    """Stands in for a DataFrame: records which narrowing/widening compact_frame chose."""

    def __init__(self, partitions, session_module: str = "pyspark.sql.classic.session"):
        self.rdd = type("Rdd", (), {"getNumPartitions": lambda _: partitions})()
        self.sparkSession = type("SparkSession", (), {"__module__": session_module})()

    def coalesce(self, n):
        return ("coalesce", n)

    def repartition(self, n):
        return ("repartition", n)


def test_compact_frame_narrows_without_a_shuffle_and_widens_with_one():
    assert compact.compact_frame(FakeFrame(8), 2) == ("coalesce", 2)
    assert compact.compact_frame(FakeFrame(2), 2) == ("coalesce", 2)
    assert compact.compact_frame(FakeFrame(1), 3) == ("repartition", 3)
    # Spark Connect has no RDD to count partitions of: always the shuffle.
    assert compact.compact_frame(FakeFrame(8, "pyspark.sql.connect.session"), 2) == ("repartition", 2)
    with pytest.raises(ValueError):
        compact.compact_frame(FakeFrame(1), 0)


def test_compact_target_skips_and_refuses_without_touching_anything(part_dir, tmp_path):
    cat = FakeCatalog({("1",): str(part_dir)})
    target = Target("db", "t", "ds=1", str(part_dir), ("1",))
    result = compact.compact_target(None, LocalStorage(), cat, "parquet", target, 4)
    assert result == ItemResult(SKIPPED, note="4 file(s) already, at most 4 wanted")
    missing = Target("db", "t", "ds=2", str(tmp_path / "t" / "ds=2"), ("2",))
    assert compact.compact_target(None, LocalStorage(), cat, "parquet", missing, 1).status == SKIPPED
    (part_dir / "hr=1").mkdir()
    with pytest.raises(JobError, match=r"it has subdirectories \(hr=1\)"):
        compact.compact_target(None, LocalStorage(), cat, "parquet", target, 1)
    assert cat.alters == [] and [p.name for p in part_dir.parent.iterdir()] == ["ds=1"]


def test_target_file_mb_sizes_the_output_by_the_bytes_read():
    mb = 1024 * 1024
    assert compact.files_for(10 * mb, None, 3) == 3  # --files as given
    assert compact.files_for(10 * mb, 4, 1) == 3  # 10 MB in files of about 4 MB
    assert compact.files_for(1, 128, 1) == 1  # never fewer than one
    args = build_parser().parse_args(["compact", "db.t", "--target-file-mb", "256"])
    assert (args.files, args.target_file_mb) == (1, 256)
    with pytest.raises(SystemExit):
        build_parser().parse_args(["compact", "db.t", "--files", "2", "--target-file-mb", "256"])

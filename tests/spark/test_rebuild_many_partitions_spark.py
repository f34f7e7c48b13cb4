"""rebuild-index over many partitions in one Spark pass (issue 46), through the proxy on a real Hive 2.3
metastore: the index equals the one built partition by partition, lookups equal plain Spark SQL, a
partition with an unreadable file fails alone while the others are swapped in, and readers of every
index partition see its old or its new files, never a mix and never none, while the batch swaps."""

from __future__ import annotations

import io
import uuid

import pyarrow.parquet as pq
import pytest

from hmsproxy.clients.index_lookup import arrow_lookup
from hmsproxy.clients.spark import sql
from hmsproxy.features.indexes.builds import BUILD_CONTEXT_KEY
from hmsproxy.files.storage import ArrowStorage, arrow_filesystem, data_files
from hmsproxy.jobs import rebuild_pass
from hmsproxy.jobs.cli import build_parser, run_job_command
from hmsproxy.jobs.context import JobContext
from hmsproxy.jobs.metastore import MetastoreClient
from hmsproxy.jobs.rebuild_index import load_index, pieces_for, rebuild_piece
from tests.support.swap_readers import reading_partitions, slowed

pytestmark = pytest.mark.spark

PARTITIONS = 60
#: The refused-swap tests' tables: fewer partitions, swapped in batches of REFUSED_BATCH (swap_readers).
REFUSED_PARTITIONS = 12
DB = "index_many"


def day(i: int) -> str:
    return f"2026-{1 + i // 28:02d}-{1 + i % 28:02d}"


def make_table(spark, partitions: int = PARTITIONS) -> str:
    """DB.events_<tag>: `partitions` days, two files a day, user u on day u % partitions."""
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {DB}")
    table = f"{DB}.events_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE TABLE {table} (user_id BIGINT, action STRING) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    rows = [(u, ["view", "buy"][k % 2], day(u % partitions)) for u in range(partitions * 3) for k in range(2)]
    frame = spark.createDataFrame(rows, "user_id BIGINT, action STRING, ds STRING")
    frame.repartition(2).createOrReplaceTempView("many_src")
    spark.sql(f"INSERT INTO {table} SELECT * FROM many_src")
    spark.catalog.dropTempView("many_src")
    return table


def rebuild_job(spark, proxy, *argv: str) -> tuple[int, JobContext]:
    ctx = JobContext(proxy.uri, spark=spark, stdout=io.StringIO(), stderr=io.StringIO())
    return run_job_command(build_parser().parse_args(["rebuild-index", *argv]), ctx), ctx


def index_rows(proxy, table: str, index: str) -> list[tuple]:
    """Every row of the index table, read with pyarrow (Spark reads no index table): (ds, indexed value,
    base file, row groups)."""
    db, name = table.split(".")
    rows = []
    with MetastoreClient(proxy.uri) as ms:
        for p in ms.partitions(db, f"{db}__{name}_{index}__"):
            for f in data_files(ArrowStorage().list(p.sd.location)):
                filesystem, inner = arrow_filesystem(f.path)
                for r in pq.read_table(inner, filesystem=filesystem).to_pylist():
                    rows.append((p.values[0], r["user_id"], r["_bucketname"], tuple(r["_offsets"])))
    return sorted(rows)


def index_counts(proxy, table: str, index: str) -> dict[str, int]:
    counted: dict[str, int] = {}
    for ds, *_ in index_rows(proxy, table, index):
        counted[ds] = counted.get(ds, 0) + 1
    return counted


def states(spark, table: str, index: str) -> dict[str, str]:
    return {r.partition: r.state for r in sql(spark, f"SHOW FORMATTED INDEX ON {table}").collect() if r.idx_name == index}


def test_one_pass_equals_partition_by_partition_and_lookups_equal_spark_sql(spark, proxy, monkeypatch):
    def no_fallback(*args):
        pytest.fail("the one pass failed and the job built partition by partition")

    monkeypatch.setattr(rebuild_pass, "_one_by_one", no_fallback)
    table = make_table(spark)
    sql(spark, f"CREATE INDEX batched ON TABLE {table} (user_id) AS 'COMPACT' WITH DEFERRED REBUILD")
    sql(spark, f"CREATE INDEX single ON TABLE {table} (user_id) AS 'COMPACT' WITH DEFERRED REBUILD")

    status, ctx = rebuild_job(spark, proxy, f"{table}.batched")
    assert status == 0, ctx.stderr.getvalue()
    assert f"{PARTITIONS} built, 0 fresh and skipped, 0 failed" in ctx.stdout.getvalue()

    db, name = table.split(".")
    compared = [day(i) for i in (0, 13, 29, 42, PARTITIONS - 1)]  # a few: one by one costs seconds each
    with MetastoreClient(proxy.uri) as ms:  # the same index built the old way, one partition per pass
        index = load_index(ms, db, name, "single")
        for piece in pieces_for(ms, index, [{"ds": d} for d in compared]):
            rebuild_piece(spark, ms, index, piece, only_stale=False, connect=lambda: MetastoreClient(proxy.uri))
    batched, single = index_rows(proxy, table, "batched"), index_rows(proxy, table, "single")
    assert len(batched) >= PARTITIONS * 3  # a row per (user, file holding it)
    assert {d for d, *_ in batched} == {day(i) for i in range(PARTITIONS)}
    assert [r for r in batched if r[0] in compared] == single
    assert len(single) >= len(compared) * 3
    sql(spark, f"DROP INDEX single ON {table}")  # lookups then use the batched one, whose partitions are all built
    assert set(states(spark, table, "batched").values()) == {"fresh"}  # recorded from add_partitions itself
    with MetastoreClient(proxy.uri) as ms:  # the proxy took the builds off the partitions before Hive saw them
        assert not [p.values for p in ms.partitions(db, f"{db}__{name}_batched__") if BUILD_CONTEXT_KEY in (p.parameters or {})]
    for user in (0, 61, PARTITIONS * 3 - 1):
        expected = sorted(tuple(r) for r in spark.sql(f"SELECT * FROM {table} WHERE user_id = {user}").collect())
        assert expected
        found = arrow_lookup(proxy.uri, table, {"user_id": user})
        assert sorted(tuple(r.values()) for r in found.table.to_pylist()) == expected
        assert {r.state for r in found.plan.reads} == {"fresh"}

    status, ctx = rebuild_job(spark, proxy, f"{table}.batched", "--only-stale")  # nothing changed: all skipped
    assert status == 0, ctx.stderr.getvalue()
    assert f"0 built, {PARTITIONS} fresh and skipped, 0 failed" in ctx.stdout.getvalue()
    spark.sql(f"DROP TABLE {table}")


def test_a_partition_with_an_unreadable_file_fails_alone_and_the_others_are_swapped_in(spark, proxy):
    table = make_table(spark)
    sql(spark, f"CREATE INDEX idx ON TABLE {table} (user_id) AS 'COMPACT' WITH DEFERRED REBUILD")
    db, name = table.split(".")
    bad = day(7)
    with MetastoreClient(proxy.uri) as ms:
        location = ms.get_partition(db, name, [bad]).sd.location
    filesystem, inner = arrow_filesystem(f"{location}/part-broken.parquet")
    with filesystem.open_output_stream(inner) as out:
        out.write(b"not parquet at all")

    status, ctx = rebuild_job(spark, proxy, f"{table}.idx")
    assert status == 1
    assert f"{PARTITIONS - 1} built, 0 fresh and skipped, 1 failed" in ctx.stdout.getvalue()
    last = ctx.stderr.getvalue().strip().splitlines()[-1]
    assert f"failed for 1 of {PARTITIONS} index partitions (left as they were); ds={bad}: can't read the footer of" in last
    shown = states(spark, table, "idx")
    assert shown.pop(f"ds={bad}") == "never built"
    assert set(shown.values()) == {"fresh"} and len(shown) == PARTITIONS - 1
    spark.sql(f"DROP TABLE {table}")


def test_readers_see_each_index_partition_whole_old_or_new_while_the_batch_swaps(spark, proxy, monkeypatch):
    """The index is built, then one more row per day is inserted and it is rebuilt: a reader thread
    reads every index partition (location from the metastore, its files, their rows, the location
    again) in a loop while the batch swaps, and each read of a location still current must hold the
    old build's rows or the new one's, never other (none, or a mix)."""
    table = make_table(spark)
    sql(spark, f"CREATE INDEX idx ON TABLE {table} (user_id) AS 'COMPACT' WITH DEFERRED REBUILD")
    status, ctx = rebuild_job(spark, proxy, f"{table}.idx")
    assert status == 0, ctx.stderr.getvalue()
    db, name = table.split(".")
    index_table = f"{db}__{name}_idx__"
    old = index_counts(proxy, table, "idx")
    extra = [(10_000 + i, "late", day(i)) for i in range(PARTITIONS)]
    spark.createDataFrame(extra, "user_id BIGINT, action STRING, ds STRING").createOrReplaceTempView("late_src")
    spark.sql(f"INSERT INTO {table} SELECT * FROM late_src")
    spark.catalog.dropTempView("late_src")

    swapping = slowed(monkeypatch, rebuild_pass, "swap_batch")
    with reading_partitions(proxy.uri, db, index_table) as reads:
        status, ctx = rebuild_job(spark, proxy, f"{table}.idx")
    assert status == 0, ctx.stderr.getvalue()
    assert swapping.is_set()
    new = index_counts(proxy, table, "idx")
    assert all(new[d] == old[d] + 1 for d in old)  # the late user's row in every partition
    assert len(reads.partitions()) == PARTITIONS
    wrong = [(d, n) for d, n in reads.seen if n not in (old[d], new[d])]
    assert not wrong, wrong[:5]
    assert any(n == new[d] for d, n in reads.seen) and any(n == old[d] for d, n in reads.seen)
    spark.sql(f"DROP TABLE {table}")


def test_file_names_asked_once_per_table_equal_the_names_sparks_rows_carry(spark, tmp_path):
    """rebuild_index.qualified_names (a JVM question per table directory, not per file) gives each file
    the name Spark's `_metadata.file_path` gives its rows, plain names and names Hadoop quotes alike."""
    import pyarrow as pa
    from pyspark.sql import functions as F

    from hmsproxy.jobs.rebuild_index import spark_file_name, spark_file_names

    files = []
    for directory, name in [
        ("ds=2026-01-01", "part-0.c000.parquet"),
        ("ds=a b", "f.parquet"),
        ("ds=x%3A1", "g.parquet"),
        ("ds=1", "h é.parquet"),
    ]:
        (tmp_path / "t" / directory).mkdir(parents=True)
        pq.write_table(pa.table({"n": [1]}), str(tmp_path / "t" / directory / name))
        files.append(f"file:{tmp_path}/t/{directory}/{name}")
    data = spark.read.parquet(*files)
    names = spark_file_names(spark, data, files)
    assert names == {f: spark_file_name(spark, f) for f in files}
    assert sorted(names.values()) == sorted(r[0] for r in data.select(F.col("_metadata.file_path")).distinct().collect())

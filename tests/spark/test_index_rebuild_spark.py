"""Indexes built and used from a real SparkSession through the proxy (issue 8's "Must show"): CREATE
INDEX deferred and immediate and ALTER INDEX … REBUILD (whole, one partition) through the Spark
helper, the rebuild job's --only-stale, SHOW [FORMATTED] INDEX, lookups equal to plain Spark SQL on
fresh, stale (after an INSERT) and never-built partitions, with Spark and with pyarrow alone, DROP
TABLE of an index table refused, DROP TABLE of the base table taking its index tables along.

The scenario runs on the primary (Hive 2.3), on a writable federated database, and with a real
Hive 3.1 metastore as the primary (no index calls: the proxy keeps every index itself)."""

from __future__ import annotations

import io
import uuid

import pytest

from hmsproxy.clients.index_lookup import arrow_lookup
from hmsproxy.clients.spark import lookup, sql
from hmsproxy.files.compact_index import file_rows
from hmsproxy.jobs.cli import build_parser, run_job_command
from hmsproxy.jobs.context import JobContext
from tests.support.mixed_versions import federation

pytestmark = pytest.mark.spark

DAYS = ("2026-11-01", "2026-11-02", "2026-11-03")


def rows_of(frame) -> list[tuple]:
    return sorted(tuple(r) for r in frame.collect())


def full_scan(spark, table: str, where: str) -> list[tuple]:
    """What plain Spark SQL answers: every lookup must equal it."""
    spark.catalog.refreshTable(table)
    return rows_of(spark.sql(f"SELECT * FROM {table} WHERE {where}"))


def arrow_rows(proxy, table: str, **equals) -> list[tuple]:
    result = arrow_lookup(proxy.uri, table, equals)
    return sorted(tuple(r.values()) for r in result.table.to_pylist())


def rebuild_job(spark, proxy, *argv: str) -> tuple[int, JobContext]:
    ctx = JobContext(proxy.uri, spark=spark, stdout=io.StringIO(), stderr=io.StringIO())
    return run_job_command(build_parser().parse_args(["rebuild-index", *argv]), ctx), ctx


def make_events(spark, db: str) -> str:
    """db.events_<tag> by ds: 3 days, up to 4 files a day, user_id 0..39 (each user on one day, in one file)."""
    table = f"{db}.events_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE TABLE {table} (user_id BIGINT, action STRING, amount DOUBLE) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    rows = [(u, ["view", "buy"][k % 2], float(u * 10 + k), DAYS[u % 3]) for u in range(40) for k in range(5)]
    frame = spark.createDataFrame(rows, "user_id BIGINT, action STRING, amount DOUBLE, ds STRING")
    frame.repartition(4, "user_id").sortWithinPartitions("user_id").createOrReplaceTempView("events_src")
    spark.sql(f"INSERT INTO {table} SELECT * FROM events_src")
    spark.catalog.dropTempView("events_src")
    return table


def states(spark, table: str, index: str = "user_idx") -> dict[str, str]:
    shown = sql(spark, f"SHOW FORMATTED INDEX ON {table}").collect()
    return {r.partition: r.state for r in shown if r.idx_name == index}


def tables_in(spark, db: str) -> set[str]:
    return {r.tableName for r in spark.sql(f"SHOW TABLES IN {db}").collect()}


def assert_lookups_equal_spark_sql(spark, proxy, table: str, users=(3, 4, 39)) -> None:
    for user in users:
        expected = full_scan(spark, table, f"user_id = {user}")
        assert expected
        assert rows_of(lookup(spark, table, user_id=user)) == expected
        assert arrow_rows(proxy, table, user_id=user) == expected


def run_scenario(spark, proxy, db: str) -> None:
    table = make_events(spark, db)
    name = table.split(".")[1]
    index_table = f"{db}__{name}_user_idx__"
    created = sql(spark, f"CREATE INDEX user_idx ON TABLE {table} (user_id) AS 'COMPACT' WITH DEFERRED REBUILD").collect()
    assert created[0].result.endswith("ALTER INDEX ... REBUILD builds it")
    assert index_table in tables_in(spark, db)
    assert set(states(spark, table).values()) == {"never built"}
    assert_lookups_equal_spark_sql(spark, proxy, table)  # nothing built: every partition is scanned

    built = sql(spark, f"ALTER INDEX user_idx ON {table} PARTITION (ds='{DAYS[0]}') REBUILD").collect()
    assert built[0].result.startswith(f"rebuild-index {table}.user_idx: 1 built, 0 fresh and skipped, 0 failed")
    assert states(spark, table) == {f"ds={DAYS[0]}": "fresh", f"ds={DAYS[1]}": "never built", f"ds={DAYS[2]}": "never built"}
    assert_lookups_equal_spark_sql(spark, proxy, table)
    # user 3 lives on day 0 (3 % 3): only the one file the index lists for it is read.
    frame = lookup(spark, table, user_id=3, ds=DAYS[0])
    assert rows_of(frame) == full_scan(spark, table, f"user_id = 3 AND ds = '{DAYS[0]}'")
    assert len(frame.inputFiles()) == 1
    result = arrow_lookup(proxy.uri, table, {"user_id": 3, "ds": DAYS[0]})
    assert (result.table.num_rows, result.files_opened, result.index_files_opened) == (5, 1, 1)

    sql(spark, f"ALTER INDEX user_idx ON {table} REBUILD")
    assert set(states(spark, table).values()) == {"fresh"}
    assert_lookups_equal_spark_sql(spark, proxy, table)

    # An INSERT adds a file the index doesn't know: that partition is stale and scanned, the others still use the index.
    spark.sql(f"INSERT INTO {table} PARTITION (ds='{DAYS[0]}') VALUES (3, 'late', 1.5)")
    assert states(spark, table) == {f"ds={DAYS[0]}": "stale", f"ds={DAYS[1]}": "fresh", f"ds={DAYS[2]}": "fresh"}
    expected = full_scan(spark, table, "user_id = 3")
    assert "late" in {r[1] for r in expected}
    assert_lookups_equal_spark_sql(spark, proxy, table)
    stale_read = arrow_lookup(proxy.uri, table, {"user_id": 3})
    assert sorted(r.state for r in stale_read.plan.reads) == ["fresh", "fresh", "stale"]

    status, ctx = rebuild_job(spark, proxy, f"{table}.user_idx", "--only-stale")
    assert status == 0, ctx.stderr.getvalue()
    assert "1 built, 2 fresh and skipped, 0 failed" in ctx.stdout.getvalue()
    assert f"[1/3] ds={DAYS[0]}: ok" in ctx.stderr.getvalue()  # progress, a line per partition
    assert set(states(spark, table).values()) == {"fresh"}
    assert rows_of(lookup(spark, table, user_id=[3, 7])) == full_scan(spark, table, "user_id IN (3, 7)")

    # Built right away (no DEFERRED REBUILD), on two columns: a lookup naming both uses it.
    sql(spark, f"CREATE INDEX act_idx ON TABLE {table} (user_id, action) AS 'COMPACT'")
    assert set(states(spark, table, "act_idx").values()) == {"fresh"}
    both = arrow_lookup(proxy.uri, table, {"user_id": 4, "action": "buy"})
    assert both.plan.index == "act_idx"
    assert sorted(tuple(r.values()) for r in both.table.to_pylist()) == full_scan(spark, table, "user_id = 4 AND action = 'buy'")
    shown = [tuple(r) for r in sql(spark, f"SHOW INDEX ON {table}").collect()]
    assert [(r[0], r[2]) for r in shown] == [("act_idx", "user_id, action"), ("user_idx", "user_id")]

    with pytest.raises(Exception, match="index table"):
        spark.sql(f"DROP TABLE {db}.{index_table}")
    assert index_table in tables_in(spark, db)
    spark.sql(f"DROP TABLE {table}")
    assert not {index_table, f"{db}__{name}_act_idx__"} & tables_in(spark, db)


def test_rebuild_and_lookups_on_the_primary(spark, proxy):
    spark.sql("CREATE DATABASE IF NOT EXISTS index_e2e")
    run_scenario(spark, proxy, "index_e2e")


def test_rebuild_and_lookups_on_a_writable_federated_database(spark, proxy, federated_dbs):
    run_scenario(spark, proxy, "waggle_sales")


def test_rebuild_and_lookups_on_a_hive_31_primary_without_index_calls(spark, proxy, proxy_config, metastores_by_version):
    with proxy_config(lambda base: federation(base, metastores_by_version, "3.1")):
        run_scenario(spark, proxy, "mixed_sales")


def test_the_index_rows_are_those_of_each_file_with_its_row_groups(spark, proxy, tmp_path):
    """The job's index (built in Spark's JVM from row numbers) equals the compact index read file by
    file with pyarrow (jobs/compact_index.file_rows), on files of several row groups."""
    table = f"index_e2e.groups_{uuid.uuid4().hex[:8]}"
    spark.sql("CREATE DATABASE IF NOT EXISTS index_e2e")
    spark.sql(f"CREATE TABLE {table} (user_id BIGINT, payload STRING) STORED AS PARQUET")
    rows = spark.range(20000).selectExpr("id DIV 200 AS user_id", "repeat(cast(id AS string), 30) AS payload")
    hadoop = spark.sparkContext._jsc.hadoopConfiguration()
    hadoop.set("parquet.block.size", str(64 * 1024))  # small row groups: each user's rows in one or two of them
    try:
        rows.repartition(2).sortWithinPartitions("user_id").write.insertInto(table)
    finally:
        hadoop.unset("parquet.block.size")
    sql(spark, f"CREATE INDEX u ON TABLE {table} (user_id) AS 'COMPACT'")
    result = arrow_lookup(proxy.uri, table, {"user_id": list(range(100))})
    assert result.table.num_rows == 20000
    files = sorted(result.plan.reads[0].files)
    expected = sorted((r[0], r[1].rpartition("/")[2], tuple(r[2])) for f in files for r in file_rows(f, ["user_id"]))
    assert len({e[2] for e in expected}) > 2  # several row groups per file, values spread over them
    got = sorted(
        (r.user_id, r._bucketname.rpartition("/")[2], tuple(r._offsets))
        for r in spark.read.parquet(_index_location(proxy, table, "u")).collect()
    )
    assert got == expected
    spark.sql(f"DROP TABLE {table}")


def _index_location(proxy, table: str, index: str) -> str:
    from hmsproxy.jobs.skew_layout import open_metastore

    db, name = table.split(".")
    with open_metastore(proxy.uri) as ms:
        found = ms.get_index(db, name, index)
        return ms.get_table(db, found.indexTableName.rpartition(".")[2]).sd.location


def test_an_index_spanning_every_partition_is_rebuilt_whole_and_stale_per_base_partition(spark, proxy):
    """PARTITIONED BY (): one index partition (the unpartitioned index table) covers every day; a
    rebuild asked for one day rebuilds it whole, and an INSERT makes only that day stale."""
    spark.sql("CREATE DATABASE IF NOT EXISTS index_e2e")
    table = make_events(spark, "index_e2e")
    sql(spark, f"CREATE INDEX span ON TABLE {table} (user_id) AS 'COMPACT' WITH DEFERRED REBUILD PARTITIONED BY () STORED AS ORC")
    status, ctx = rebuild_job(spark, proxy, f"{table}.span", "--partition", f"ds={DAYS[1]}")
    assert status == 0, ctx.stderr.getvalue()
    assert "1 built" in ctx.stdout.getvalue()
    assert set(states(spark, table, "span").values()) == {"fresh"}  # every day, not only the one asked for
    assert_lookups_equal_spark_sql(spark, proxy, table, users=(3, 4, 5))
    spark.sql(f"INSERT INTO {table} PARTITION (ds='{DAYS[1]}') VALUES (4, 'late', 1.5)")
    assert states(spark, table, "span") == {f"ds={DAYS[0]}": "fresh", f"ds={DAYS[1]}": "stale", f"ds={DAYS[2]}": "fresh"}
    assert_lookups_equal_spark_sql(spark, proxy, table, users=(3, 4, 5))
    read = arrow_lookup(proxy.uri, table, {"user_id": 3})
    assert {r.values["ds"]: r.state for r in read.plan.reads} == {DAYS[0]: "fresh", DAYS[1]: "stale", DAYS[2]: "fresh"}
    assert read.files_opened == 1 + len(read.plan.reads[1].files)  # user 3's one file on day 0, day 1 scanned whole
    spark.sql(f"DROP TABLE {table}")

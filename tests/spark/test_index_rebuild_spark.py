"""Indexes built and used with a real SparkSession through the proxy: the rebuild job (whole and one
partition, --only-stale), SHOW FORMATTED INDEX's per-partition state, and lookups that equal plain
Spark SQL on fresh, stale (after an INSERT) and never-built partitions."""

from __future__ import annotations

import io
import uuid

import pytest

from hmsproxy.clients.index_lookup import arrow_lookup
from hmsproxy.clients.spark import lookup, sql
from hmsproxy.jobs.cli import build_parser, run_job_command
from hmsproxy.jobs.context import JobContext

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


def rebuild(spark, proxy, *argv: str) -> tuple[int, JobContext]:
    ctx = JobContext(proxy.uri, spark=spark, stdout=io.StringIO(), stderr=io.StringIO())
    return run_job_command(build_parser().parse_args(["rebuild-index", *argv]), ctx), ctx


def make_events(spark, db: str) -> str:
    """db.events_<tag> by ds: 3 days, 4 files a day, user_id 0..39 (each user on one day in one file)."""
    table = f"{db}.events_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE TABLE {table} (user_id BIGINT, action STRING, amount DOUBLE) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    rows = [(u, ["view", "buy"][k % 2], float(u * 10 + k), DAYS[u % 3]) for u in range(40) for k in range(5)]
    frame = spark.createDataFrame(rows, "user_id BIGINT, action STRING, amount DOUBLE, ds STRING")
    frame.repartition(4, "user_id").sortWithinPartitions("user_id").createOrReplaceTempView("events_src")
    spark.sql(f"INSERT INTO {table} SELECT * FROM events_src")
    spark.catalog.dropTempView("events_src")
    return table


@pytest.fixture(scope="module")
def db(spark):
    spark.sql("CREATE DATABASE IF NOT EXISTS index_e2e")
    return "index_e2e"


def states(spark, table: str) -> dict[str, str]:
    shown = sql(spark, f"SHOW FORMATTED INDEX ON {table}").collect()
    return {r.partition: r.state for r in shown}


def test_rebuild_then_lookups_equal_spark_sql_on_fresh_stale_and_unbuilt_partitions(spark, proxy, db):
    table = make_events(spark, db)
    sql(spark, f"CREATE INDEX user_idx ON TABLE {table} (user_id) AS 'COMPACT' WITH DEFERRED REBUILD")
    assert set(states(spark, table).values()) == {"never built"}

    status, ctx = rebuild(spark, proxy, f"{table}.user_idx", "--partition", f"ds={DAYS[0]}")
    assert status == 0, ctx.stderr.getvalue()
    assert states(spark, table) == {f"ds={DAYS[0]}": "fresh", f"ds={DAYS[1]}": "never built", f"ds={DAYS[2]}": "never built"}

    for user in (3, 4, 39):
        expected = full_scan(spark, table, f"user_id = {user}")
        assert expected
        assert rows_of(lookup(spark, table, user_id=user)) == expected
        assert arrow_rows(proxy, table, user_id=user) == expected

    # user 3 lives on day 0 (3 % 3): only the file the index lists is read there, the other days are scanned.
    frame = lookup(spark, table, user_id=3, ds=DAYS[0])
    assert rows_of(frame) == full_scan(spark, table, f"user_id = 3 AND ds = '{DAYS[0]}'")
    assert len(frame.inputFiles()) == 1

    status, ctx = rebuild(spark, proxy, f"{table}.user_idx")
    assert status == 0, ctx.stderr.getvalue()
    assert set(states(spark, table).values()) == {"fresh"}

    spark.sql(f"INSERT INTO {table} PARTITION (ds='{DAYS[0]}') VALUES (3, 'late', 1.5)")
    assert states(spark, table)[f"ds={DAYS[0]}"] == "stale"
    expected = full_scan(spark, table, "user_id = 3")
    assert ("late" in {r[1] for r in expected}) and rows_of(lookup(spark, table, user_id=3)) == expected
    assert arrow_rows(proxy, table, user_id=3) == expected

    status, ctx = rebuild(spark, proxy, f"{table}.user_idx", "--only-stale")
    assert status == 0, ctx.stderr.getvalue()
    assert "1 built, 2 fresh and skipped, 0 failed" in ctx.stdout.getvalue()
    assert set(states(spark, table).values()) == {"fresh"}
    assert rows_of(lookup(spark, table, user_id=[3, 7])) == full_scan(spark, table, "user_id IN (3, 7)")

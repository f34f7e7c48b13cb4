"""Indexes with a real SparkSession through the proxy: the statements through the Spark helper
(`hmsproxy.clients.spark.sql`), and Spark's own DDL and writes meeting what the proxy keeps —
an INSERT leaves the index alone, DROP TABLE of the index table is refused, RENAME carries the
index along, DROP TABLE of the base table drops its index table.

Spark will not touch a table of type INDEX_TABLE (UNSUPPORTED_FEATURE.HIVE_TABLE_TYPE), which is
what an index table is on a Hive 2.3 metastore: reading one goes by its files, not Spark's catalog."""

from __future__ import annotations

import uuid

import pytest

from hmsproxy.clients.spark import sql

pytestmark = pytest.mark.spark


def shown(spark, table: str) -> list[tuple[str, ...]]:
    return [tuple(r) for r in sql(spark, f"SHOW INDEX ON {table}").collect()]


def tables(spark) -> set[str]:
    return {r.tableName for r in spark.sql("SHOW TABLES IN default").collect()}


def test_spark_creates_indexes_with_the_helper_and_its_own_ddl_keeps_them_right(spark):
    tag = uuid.uuid4().hex[:8]
    base, index_table = f"events_{tag}", f"default__events_{tag}_user_idx__"
    spark.sql(f"CREATE TABLE default.{base} (user_id BIGINT, action STRING) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    try:
        spark.sql(f"INSERT INTO default.{base} PARTITION (ds='2026-11-01') VALUES (42, 'view'), (7, 'buy')")
        created = sql(spark, f"CREATE INDEX user_idx ON TABLE default.{base} (user_id) AS 'COMPACT' WITH DEFERRED REBUILD").collect()
        assert created[0].result.startswith(f"index user_idx created on default.{base}")
        assert index_table in tables(spark)
        assert shown(spark, f"default.{base}") == [("user_idx", base, "user_id", index_table, "compact", "")]

        # Spark rewrites the whole table on INSERT and ALTER TABLE: the index is the proxy's, untouched.
        spark.sql(f"INSERT INTO default.{base} PARTITION (ds='2026-11-02') VALUES (42, 'view')")
        spark.sql(f"ALTER TABLE default.{base} SET TBLPROPERTIES ('owner.team'='growth')")
        assert [r[0] for r in shown(spark, f"default.{base}")] == ["user_idx"]

        # Spark refuses an INDEX_TABLE itself (a Hive 2.3 metastore's type); the proxy refuses the drop
        # for clients that don't (test_indexes.py), and keeps the table either way.
        with pytest.raises(Exception, match="index table"):
            spark.sql(f"DROP TABLE default.{index_table}")
        assert index_table in tables(spark)

        spark.sql(f"ALTER TABLE default.{base} RENAME TO default.{base}_v2")
        assert shown(spark, f"default.{base}_v2") == [("user_idx", f"{base}_v2", "user_id", index_table, "compact", "")]
        assert spark.sql(f"SELECT count(*) FROM default.{base}_v2 WHERE user_id = 42").collect()[0][0] == 2

        spark.sql(f"DROP TABLE default.{base}_v2")
        assert index_table not in tables(spark)
    finally:
        for name in (f"{base}_v2", base):
            spark.sql(f"DROP TABLE IF EXISTS default.{name}")

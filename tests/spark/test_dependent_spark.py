"""The seed's scenario (../shared/design/hive-dependent-tables.md) in a real SparkSession through the proxy.

`events` is written hourly; a day is published in `events_daily` when it is complete. Spark
reads the dependent table with no helper: the proxy answers get_table with a view it writes
from the records, so counts and contents equal the same query on the underlying tables and
Spark prunes their partitions. The statements go through `hmsproxy.clients.spark.sql`
(Spark's parser has no DEPENDS ON).
"""

from __future__ import annotations

import re
import uuid

import pytest

from hmsproxy.clients.spark import read, sql

pytestmark = pytest.mark.spark

DAYS, HOURS = ("1", "2", "3"), [str(h) for h in range(1, 25)]


def count(spark, query: str) -> int:
    return spark.sql(query).collect()[0][0]


def rows(spark, query: str) -> list[tuple]:
    return sorted(tuple(r) for r in spark.sql(query).collect())


def write_hourly(spark, table: str, days, hours, mins=None) -> None:
    """Two rows per (day, hour[, min]) partition, in one dynamic-partition INSERT."""
    keys = ["ds", "hr"] + (["min"] if mins else [])
    combos = [(d, h, m) for d in days for h in hours for m in (mins or [None])]
    values = ", ".join(
        f"('{k}', {n}, '{d}', '{h}'" + (f", '{m}')" if mins else ")") for n, (d, h, m) in enumerate(combos) for k in ("a", "b")
    )
    spark.sql("SET hive.exec.dynamic.partition.mode=nonstrict")
    spark.sql(f"INSERT INTO {table} PARTITION ({', '.join(keys)}) VALUES {values}")


@pytest.fixture(scope="module")
def seed(spark):
    """default.events_<tag>: 3 days x 24 hours; default.events_v2_<tag> (ds, hr, min) for days 2 and 4."""
    tag = uuid.uuid4().hex[:8]
    ev, v2 = f"default.events_{tag}", f"default.events_v2_{tag}"
    spark.sql(f"CREATE TABLE {ev} (key STRING, value INT) PARTITIONED BY (ds STRING, hr STRING) STORED AS PARQUET")
    spark.sql(f"CREATE TABLE {v2} (key STRING, value INT) PARTITIONED BY (ds STRING, hr STRING, min STRING) STORED AS PARQUET")
    write_hourly(spark, ev, DAYS, HOURS)
    write_hourly(spark, v2, ("2", "4"), ("1", "2"), ("0", "30"))
    yield tag, ev, v2
    for name in (f"default.events_daily_{tag}",):
        sql(spark, f"DROP DEPENDENT TABLE IF EXISTS {name}")
    for name in (ev, v2):
        spark.sql(f"DROP TABLE IF EXISTS {name}")


def test_the_seed_scenario_in_spark(spark, seed):
    tag, ev, v2 = seed
    daily = f"default.events_daily_{tag}"
    answer = sql(spark, f"CREATE DEPENDENT TABLE {daily} PARTITIONED BY (ds string) DEPENDS ON TABLE {ev}").collect()
    assert answer[0].result == f"created dependent table {daily} partitioned by (ds), depending on {ev}"
    assert count(spark, f"SELECT count(1) FROM {daily}") == 0
    assert f"events_daily_{tag}" in [t.name for t in spark.catalog.listTables("default")]

    sql(spark, f"ALTER TABLE {daily} ADD PARTITION (ds='1')")
    sql(spark, f"ALTER TABLE {daily} ADD PARTITION (ds='2')")
    assert count(spark, f"SELECT count(1) FROM {daily} WHERE ds = '1'") == count(spark, f"SELECT count(1) FROM {ev} WHERE ds = '1'") == 48
    assert rows(spark, f"SELECT * FROM {daily} WHERE ds = '1'") == rows(spark, f"SELECT key, value, ds FROM {ev} WHERE ds = '1'")
    # Only day 1's partitions of events are read (Spark prunes through the view).
    files = spark.sql(f"SELECT * FROM {daily} WHERE ds = '1'").inputFiles()
    assert {re.search(r"/ds=(\w+)/hr=(\w+)/", f).groups() for f in files} == {("1", h) for h in HOURS}
    # A day not published is invisible, although events has it.
    assert count(spark, f"SELECT count(1) FROM {ev} WHERE ds = '3'") == 48
    assert count(spark, f"SELECT count(1) FROM {daily} WHERE ds = '3'") == 0
    # An hour added after publishing is part of the day on the next query.
    spark.sql(f"INSERT INTO {ev} PARTITION (ds='1', hr='25') VALUES ('late', 99)")
    assert count(spark, f"SELECT count(1) FROM {daily} WHERE ds = '1'") == 49

    # events_v2 (a third partition column) takes over; ds=2 is re-pointed to it.
    sql(spark, f"ALTER TABLE {daily} DEPENDS ON TABLE {v2}")
    sql(spark, f"ALTER TABLE {daily} ADD PARTITION (ds='4')")
    sql(spark, f"ALTER TABLE {daily} PARTITION (ds='2') DEPENDS ON TABLE {v2}")
    expected = rows(
        spark, f"SELECT key, value, ds FROM {ev} WHERE ds = '1' UNION ALL SELECT key, value, ds FROM {v2} WHERE ds IN ('2', '4')"
    )
    assert rows(spark, f"SELECT * FROM {daily} WHERE ds IN ('1', '2', '4')") == expected
    assert count(spark, f"SELECT count(1) FROM {daily} WHERE ds = '2'") == count(spark, f"SELECT count(1) FROM {v2} WHERE ds = '2'") == 8
    assert count(spark, f"SELECT count(1) FROM {daily}") == 49 + 16

    described = {r.col_name: r.data_type for r in spark.sql(f"DESCRIBE EXTENDED {daily}").collect()}
    assert described["Type"] == "VIEW"
    assert f"FROM `default`.`events_v2_{tag}` WHERE `ds` IN ('2', '4')" in described["View Text"]
    assert f"hmsproxy.dependent.depends-on={v2}" in described["Table Properties"]

    dependencies = sql(spark, f"SHOW DEPENDENCIES OF {daily} PARTITION (ds='1')").collect()
    assert [r.covers for r in dependencies] == sorted(f"ds=1/hr={h}" for h in [*HOURS, "25"])
    assert {r.depends_on for r in dependencies} == {ev}

    # Spark refuses SHOW PARTITIONS of any view itself (no metastore call), saying it is a view; its
    # helper runs it in the proxy (through Thrift and Hive's CLI: tests/integration/test_dependent_partitions.py).
    with pytest.raises(Exception, match=r"'SHOW PARTITIONS' expects a table but .*events_daily_\w+` is a view"):
        spark.sql(f"SHOW PARTITIONS {daily}").collect()
    assert [r.partition for r in sql(spark, f"SHOW PARTITIONS {daily}").collect()] == ["ds=1", "ds=2", "ds=4"]  # the helper can
    assert len(sql(spark, f"SHOW PARTITIONS {ev}").collect()) == 3 * 24 + 1  # an ordinary table's: Spark's own statement
    assert read(spark, daily, ds="1").count() == 49  # the Spark helper reads it through its source

    # Writing into it fails, and nothing is written anywhere.
    with pytest.raises(Exception, match=r"(?i)view"):
        spark.sql(f"INSERT INTO {daily} VALUES ('x', 1, '1')")
    assert count(spark, f"SELECT count(1) FROM {daily}") == 65


def test_drop_protection_for_spark_in_restrict_and_notify(spark):
    tag = uuid.uuid4().hex[:8]
    ev, daily = f"default.pev_{tag}", f"default.pdaily_{tag}"
    spark.sql(f"CREATE TABLE {ev} (key STRING, value INT) PARTITIONED BY (ds STRING, hr STRING) STORED AS PARQUET")
    write_hourly(spark, ev, ("1", "2"), ("1", "2"))
    sql(spark, f"CREATE DEPENDENT TABLE {daily} PARTITIONED BY (ds) DEPENDS ON TABLE {ev}")
    sql(spark, f"ALTER TABLE {daily} ADD PARTITION (ds='1')")
    try:
        refused = {
            f"DROP TABLE {ev}": f"dropping {ev} is refused",
            f"ALTER TABLE {ev} DROP PARTITION (ds='1', hr='1')": "dropping partition",
            f"ALTER TABLE {ev} RENAME TO {ev}_x": f"renaming {ev} to {ev}_x is refused",
            f"ALTER TABLE {ev} ADD COLUMNS (extra STRING)": f"changing the columns of {ev}",
        }
        for statement, message in refused.items():
            with pytest.raises(Exception, match=re.escape(message)):
                spark.sql(statement)
        assert count(spark, f"SELECT count(1) FROM {daily}") == 4
        spark.sql(f"ALTER TABLE {ev} DROP PARTITION (ds='2', hr='1')")  # not published: allowed

        # notify, set the way Spark users would (ALTER VIEW ... SET TBLPROPERTIES)
        spark.sql(f"ALTER VIEW {daily} SET TBLPROPERTIES ('hmsproxy.dependent.on-change'='notify')")
        spark.sql(f"ALTER TABLE {ev} DROP PARTITION (ds='1', hr='1')")
        assert count(spark, f"SELECT count(1) FROM {daily}") == 2
        (state,) = {r.state for r in sql(spark, f"SHOW DEPENDENCIES OF {daily}").collect() if r.partition == "ds=1"}
        assert state == f"a partition of {ev} was dropped (1/1)"
        spark.sql(f"DROP TABLE {ev}")
        assert count(spark, f"SELECT count(1) FROM {daily}") == 0
    finally:
        sql(spark, f"DROP DEPENDENT TABLE IF EXISTS {daily}")
        spark.sql(f"DROP TABLE IF EXISTS {ev}")


def test_propagate_carries_spark_column_changes_into_the_dependent_table(spark):
    tag = uuid.uuid4().hex[:8]
    ev, daily = f"default.gev_{tag}", f"default.gdaily_{tag}"
    spark.sql(f"CREATE TABLE {ev} (key STRING, value INT) PARTITIONED BY (ds STRING, hr STRING) STORED AS PARQUET")
    write_hourly(spark, ev, ("1", "2"), ("1", "2"))
    sql(
        spark,
        f"CREATE DEPENDENT TABLE {daily} PARTITIONED BY (ds) DEPENDS ON TABLE {ev} TBLPROPERTIES ('hmsproxy.dependent.on-change'='propagate')",
    )
    sql(spark, f"ALTER TABLE {daily} ADD PARTITION (ds='1')")
    try:
        spark.sql(f"ALTER TABLE {ev} ADD COLUMNS (note STRING COMMENT 'added by spark')")
        spark.sql(f"ALTER TABLE {ev} ALTER COLUMN key COMMENT 'the key'")
        spark.sql(f"INSERT INTO {ev} PARTITION (ds='1', hr='3') VALUES ('late', 7, 'written after')")
        schema = [(f.name, f.dataType.simpleString(), f.metadata.get("comment")) for f in spark.table(daily).schema.fields]
        assert schema == [
            ("key", "string", "the key"),
            ("value", "int", None),
            ("note", "string", "added by spark"),
            ("ds", "string", None),
        ]
        # Files written before the change read the new column as NULL, as the source itself reads them.
        expected = rows(spark, f"SELECT key, value, note, ds FROM {ev} WHERE ds = '1'")
        assert rows(spark, f"SELECT * FROM {daily}") == expected
        assert len(expected) == 5 and [r for r in expected if r[2] is not None] == [("late", 7, "written after", "1")]

        # Spark's DESCRIBE EXTENDED shows the published partitions and their source among the properties;
        # the Spark helper's (hmsproxy's) also what each reads now.
        described = {r.col_name: r.data_type for r in spark.sql(f"DESCRIBE EXTENDED {daily}").collect()}
        assert f"hmsproxy.dependent.published=ds=1 <- {ev}" in described["Table Properties"]
        mine = [(r.col_name, r.data_type, r.comment) for r in sql(spark, f"DESCRIBE EXTENDED {daily}").collect()]
        assert ("note", "string", "added by spark") in mine
        assert mine[mine.index(("# Published partitions", "reads", "state")) + 2 :] == [
            ("ds=1", f"{ev}@ds=1/hr={h}", "ok") for h in ("1", "2", "3")
        ]
        # An ordinary table's is Spark's own statement.
        assert "# Detailed Table Information" in [r.col_name for r in sql(spark, f"DESCRIBE EXTENDED {ev}").collect()]
    finally:
        sql(spark, f"DROP DEPENDENT TABLE IF EXISTS {daily}")
        spark.sql(f"DROP TABLE IF EXISTS {ev}")


def test_a_dependency_across_two_metastores(spark, federated_dbs):
    tag = uuid.uuid4().hex[:8]
    ev, daily = f"waggle_sales.fev_{tag}", f"default.fdaily_{tag}"
    spark.sql(f"CREATE TABLE {ev} (key STRING, value INT) PARTITIONED BY (ds STRING, hr STRING) STORED AS PARQUET")
    try:
        write_hourly(spark, ev, ("1", "2"), ("1", "2", "3"))
        sql(spark, f"CREATE DEPENDENT TABLE {daily} PARTITIONED BY (ds) DEPENDS ON TABLE {ev}")
        sql(spark, f"ALTER TABLE {daily} ADD PARTITION (ds='2')")
        assert rows(spark, f"SELECT * FROM {daily}") == rows(spark, f"SELECT key, value, ds FROM {ev} WHERE ds = '2'")
        assert len(rows(spark, f"SELECT * FROM {daily}")) == 6
        dependents = sql(spark, f"SHOW DEPENDENTS OF {ev}").collect()
        assert [(r.dependent_table, r.partition) for r in dependents] == [(daily, "(new partitions)"), (daily, "ds=2")]
        with pytest.raises(Exception, match=re.escape(f"dropping {ev} is refused")):
            spark.sql(f"DROP TABLE {ev}")
    finally:
        sql(spark, f"DROP DEPENDENT TABLE IF EXISTS {daily}")
        spark.sql(f"DROP TABLE IF EXISTS {ev}")


def test_the_spark_helper_hands_ordinary_partition_statements_to_spark(spark):
    t = f"default.plain_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE TABLE {t} (key STRING) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    try:
        sql(spark, f"ALTER TABLE {t} ADD PARTITION (ds='1')")
        sql(spark, f"ALTER TABLE {t} SET TBLPROPERTIES ('team'='sales')")
        assert [r[0] for r in spark.sql(f"SHOW PARTITIONS {t}").collect()] == ["ds=1"]
        sql(spark, f"ALTER TABLE {t} DROP PARTITION (ds='1')")
        assert spark.sql(f"SHOW PARTITIONS {t}").collect() == []
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {t}")

"""Skew declared with hmsproxy's statements from a real SparkSession, and kept when Spark rewrites tables.

Spark's parser rejects SKEWED BY, so users run these through `hmsproxy.clients.spark.sql`.
What Spark then does to the table (INSERT, ANALYZE, SET TBLPROPERTIES rebuild the whole table
from Spark's catalog, which has no skew) must not erase it.
"""

from __future__ import annotations

import uuid

import pytest

from hmsproxy.clients.proxy import HmsProxyError
from hmsproxy.clients.spark import sql
from hmsproxy.protocol import idl
from hmsproxy.upstream.wire import ThriftConnection

pytestmark = pytest.mark.spark


@pytest.fixture
def tag():
    return uuid.uuid4().hex[:8]


def skew_of(metastore, db: str, table: str, partition: str | None = None):
    """(columns, values, stored as directories, locations) as the metastore itself has them."""
    # hmsproxy's own connection: a plain thriftpy2 client cannot decode location maps (hmsproxy/protocol/codec.py).
    client = ThriftConnection("direct", (metastore.uri,))
    try:
        if partition is None:
            sd = client.call("get_table", idl.HmsProxy.get_table_args(dbname=db, tbl_name=table)).success.sd
        else:
            args = idl.HmsProxy.get_partition_by_name_args(db_name=db, tbl_name=table, part_name=partition)
            sd = client.call("get_partition_by_name", args).success.sd
    finally:
        client.close()
    info = sd.skewedInfo
    return (info.skewedColNames, info.skewedColValues, sd.storedAsSubDirectories, info.skewedColValueLocationMaps)


def test_skew_on_a_partitioned_table_applies_to_later_partitions_and_survives_spark(spark, metastores, tag):
    t = f"default.sk_{tag}"
    spark.sql(f"CREATE TABLE {t} (id INT, country STRING) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    try:
        spark.sql(f"INSERT INTO {t} PARTITION (ds='1') VALUES (1, 'US'), (2, 'FR')")
        answer = sql(spark, f"ALTER TABLE {t} SKEWED BY (country) ON ('US', 'IN')").collect()
        assert "partitions added from now on carry it" in answer[0].result
        spark.sql(f"INSERT INTO {t} PARTITION (ds='2') VALUES (3, 'US'), (4, 'IN'), (5, 'BR')")
        # Spark rewrites the table on each of these; the skew stays.
        spark.sql(f"ANALYZE TABLE {t} COMPUTE STATISTICS")
        spark.sql(f"ALTER TABLE {t} SET TBLPROPERTIES ('owner.team'='sales')")
        spark.sql(f"INSERT INTO {t} PARTITION (ds='2') VALUES (6, 'US')")

        ms = metastores[0]
        assert skew_of(ms, "default", f"sk_{tag}") == (["country"], [["US"], ["IN"]], False, {})
        assert skew_of(ms, "default", f"sk_{tag}", "ds=1")[:2] == ([], [])  # older than the ALTER: keeps none
        assert skew_of(ms, "default", f"sk_{tag}", "ds=2")[:2] == (["country"], [["US"], ["IN"]])
        assert spark.sql(f"SELECT count(1) FROM {t}").collect()[0][0] == 6

        rows = [r.asDict() for r in sql(spark, f"SHOW SKEW ON {t}").collect()]
        assert [(r["partition"], r["skewed_columns"], r["skewed_values"]) for r in rows] == [
            ("(table)", "country", "'US', 'IN'"),
            ("ds=1", "", ""),
            ("ds=2", "country", "'US', 'IN'"),
        ]
        assert rows[2]["layout"] == "not laid out"
        only = [r.partition for r in sql(spark, f"SHOW SKEW ON {t} PARTITION (ds='2')").collect()]
        assert only == ["(table)", "ds=2"]

        # NOT SKEWED is the way to remove it; a Spark rewrite afterwards does not bring it back.
        sql(spark, f"ALTER TABLE {t} NOT SKEWED")
        spark.sql(f"ALTER TABLE {t} SET TBLPROPERTIES ('owner.team'='ops')")
        assert skew_of(ms, "default", f"sk_{tag}")[:3] == ([], [], False)
        assert skew_of(ms, "default", f"sk_{tag}", "ds=2")[0] == ["country"]  # partitions keep theirs
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {t}")


def test_two_column_list_bucketing_survives_spark_writes(spark, metastores, tag):
    """The measured case: an unpartitioned table with list bucketing lost it to INSERT / ANALYZE / SET TBLPROPERTIES."""
    t = f"default.lb_{tag}"
    spark.sql(f"CREATE TABLE {t} (x INT, y STRING, v STRING) STORED AS PARQUET")
    try:
        sql(spark, f"ALTER TABLE {t} SKEWED BY (x, y) ON ((10, 'a'), (20, 'c')) STORED AS DIRECTORIES")
        where = f"file:/tmp/lb_{tag}/x=10/y=a"
        sql(spark, f"ALTER TABLE {t} SET SKEWED LOCATION ((10, 'a')='{where}')")
        spark.sql(f"INSERT INTO {t} VALUES (10, 'a', 'one'), (30, 'z', 'two')")
        spark.sql(f"ANALYZE TABLE {t} COMPUTE STATISTICS")
        spark.sql(f"ALTER TABLE {t} SET TBLPROPERTIES ('k'='v')")
        columns, values, directories, locations = skew_of(metastores[0], "default", f"lb_{tag}")
        assert (columns, values, directories) == (["x", "y"], [["10", "a"], ["20", "c"]], True)
        assert locations == {("10", "a"): where}
        # NOT STORED AS DIRECTORIES keeps the skew.
        sql(spark, f"ALTER TABLE {t} NOT STORED AS DIRECTORIES")
        assert skew_of(metastores[0], "default", f"lb_{tag}")[:3] == (["x", "y"], [["10", "a"], ["20", "c"]], False)
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {t}")


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        ("SKEWED BY (ds) ON ('1')", "skewed column 'ds' is a partition column"),
        ("SKEWED BY (nope) ON ('1')", "skewed column 'nope' is not a column of the table"),
        ("SKEWED BY (id, country) ON ((1, 'US'), (2))", "has 1 part(s) for 2 skewed column(s)"),
        ("SKEWED BY (country) ON ('US', 'US')", "skewed value 'US' is listed twice"),
        ("SET SKEWED LOCATION ('US'='file:/x')", "is not skewed: SKEWED BY first"),
    ],
)
def test_invalid_skew_is_refused_with_the_reason(spark, tag, statement, message):
    t = f"default.bad_{tag}"
    spark.sql(f"CREATE TABLE {t} (id INT, country STRING) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    try:
        with pytest.raises(HmsProxyError, match=message.replace("(", r"\(").replace(")", r"\)")):
            sql(spark, f"ALTER TABLE {t} {statement}")
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {t}")


def test_create_table_skewed_by_then_spark_writes_and_reads_it(spark, metastores, tag):
    t = f"default.cr_{tag}"
    answer = sql(
        spark,
        f"CREATE TABLE {t} (id INT COMMENT 'the id', country STRING, amount DECIMAL(10, 2)) PARTITIONED BY (ds STRING) "
        "STORED AS PARQUET SKEWED BY (country) ON ('US', 'IN')",
    ).collect()
    try:
        assert "skewed by (country) on 2 value(s)" in answer[0].result
        spark.sql(f"INSERT INTO {t} PARTITION (ds='1') VALUES (1, 'US', 1.50), (2, 'FR', 2.25)")
        rows = spark.sql(f"SELECT id, country, amount FROM {t} WHERE ds = '1' ORDER BY id").collect()
        assert [(r.id, r.country, float(r.amount)) for r in rows] == [(1, "US", 1.5), (2, "FR", 2.25)]
        assert skew_of(metastores[0], "default", f"cr_{tag}")[:3] == (["country"], [["US"], ["IN"]], False)
        assert skew_of(metastores[0], "default", f"cr_{tag}", "ds=1")[0] == ["country"]
        assert [f.dataType.simpleString() for f in spark.table(t).schema.fields] == ["int", "string", "decimal(10,2)", "string"]
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {t}")

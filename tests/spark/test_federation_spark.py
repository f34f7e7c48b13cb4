"""A real SparkSession using hmsproxy as its metastore, in front of two real metastores."""

import pytest
from pyspark.errors import AnalysisException

from tests.support.federation import manual_config
from tests.support.spark_errors import META_EXCEPTION, jvm_causes

pytestmark = pytest.mark.spark


def databases(spark):
    return {r[0] for r in spark.sql("SHOW DATABASES").collect()}


def test_show_databases_lists_primary_and_prefixed_federated(spark, federated_dbs):
    names = databases(spark)
    assert "default" in names
    assert {"waggle_sales", "waggle_hr", "waggle_default"} <= names
    assert "sales" not in names  # federated names only appear with their prefix


def test_primary_ddl_and_dml_round_trip(spark):
    spark.sql("CREATE DATABASE IF NOT EXISTS shop")
    spark.sql("CREATE TABLE shop.events (id INT, what STRING) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    spark.sql("INSERT INTO shop.events PARTITION (ds='2026-11-01') VALUES (1, 'a'), (2, 'b')")
    spark.sql("INSERT INTO shop.events PARTITION (ds='2026-11-02') VALUES (3, 'c')")
    rows = spark.sql("SELECT id, what FROM shop.events WHERE ds='2026-11-01' ORDER BY id").collect()
    assert [(r.id, r.what) for r in rows] == [(1, "a"), (2, "b")]
    spark.sql("ALTER TABLE shop.events ADD PARTITION (ds='2026-11-03')")
    parts = [r[0] for r in spark.sql("SHOW PARTITIONS shop.events").collect()]
    assert parts == ["ds=2026-11-01", "ds=2026-11-02", "ds=2026-11-03"]
    assert spark.sql("SELECT count(*) FROM shop.events").collect()[0][0] == 3
    spark.sql("DROP TABLE shop.events")
    assert "events" not in {r.tableName for r in spark.sql("SHOW TABLES IN shop").collect()}


def test_join_across_primary_and_federated(spark, federated_orders):
    spark.sql("CREATE DATABASE IF NOT EXISTS crm")
    spark.sql("DROP TABLE IF EXISTS crm.customers")
    spark.sql("CREATE TABLE crm.customers (id INT, name STRING) STORED AS PARQUET")
    spark.sql("INSERT INTO crm.customers VALUES (1, 'ada'), (2, 'bob')")
    rows = spark.sql(
        "SELECT c.name, sum(o.amount) AS total FROM crm.customers c "
        "JOIN waggle_sales.orders o ON o.customer_id = c.id GROUP BY c.name ORDER BY c.name"
    ).collect()
    assert [(r.name, r.total) for r in rows] == [("ada", 30), ("bob", 5)]


def test_federated_table_metadata_carries_client_names(spark, federated_orders):
    table = spark.catalog.getTable("waggle_sales.orders")
    assert table.database == "waggle_sales"
    parts = [r[0] for r in spark.sql("SHOW PARTITIONS waggle_sales.orders").collect()]
    assert parts == ["ds=2026-11-01", "ds=2026-11-02"]
    rows = spark.sql("SELECT sum(amount) FROM waggle_sales.orders WHERE ds='2026-11-02'").collect()
    assert rows[0][0] == 5


def test_write_to_read_only_federated_database_is_refused(spark, federated_dbs):
    with pytest.raises(AnalysisException) as err:
        spark.sql("CREATE TABLE waggle_hr.people (id INT) STORED AS PARQUET")
    assert META_EXCEPTION in jvm_causes(err.value)  # create_table's declared MetaException, through Hive's client
    message = str(err.value)
    assert "waggle_hr" in message
    assert "writable-database-white-list" in message and "waggle" in message


def test_create_database_on_federated_metastore_is_refused(spark):
    with pytest.raises(AnalysisException) as err:
        spark.sql("CREATE DATABASE waggle_newdb")
    assert META_EXCEPTION in jvm_causes(err.value)
    assert "waggle_newdb" in str(err.value) and "access-control-type" in str(err.value)


def test_manual_resolution_shows_federated_databases_unprefixed(spark, proxy_config, federated_orders):
    with proxy_config(lambda base: manual_config(base, mapped_databases=("sales",))):
        names = databases(spark)
        assert "sales" in names and "default" in names
        assert "hr" not in names and "waggle_sales" not in names
        assert spark.sql("SELECT sum(amount) FROM sales.orders").collect()[0][0] == 35

"""A Glue Data Catalog (moto's server, tests/support/glue.py) read by a real SparkSession through the
proxy: a remote database of all of Glue's `sales` and a remote table of its `orders`, made with the
proxy's own statements (hmsproxy.clients.spark.sql), their Parquet files written by pyarrow."""

from __future__ import annotations

import pytest
from pyspark.errors import AnalysisException

from hmsproxy.clients.spark import sql as hmsproxy_sql
from tests.support.glue import ORDERS, PAYMENTS, REGION
from tests.support.spark_errors import META_EXCEPTION, jvm_causes

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def glue_links(spark, glue_server, glue_env):
    props = f"'aws.region'='{REGION}', 'aws.glue.endpoint'='{glue_server.endpoint}'"
    spark.sql("CREATE DATABASE IF NOT EXISTS shop")
    hmsproxy_sql(spark, f"CREATE REMOTE DATABASE glue_sales CONNECTED TO sales VIA 'glue' WITH DBPROPERTIES ({props})")
    try:
        hmsproxy_sql(spark, f"CREATE REMOTE TABLE shop.glue_orders CONNECTED TO sales.orders VIA 'glue' WITH TBLPROPERTIES ({props})")
        yield glue_server
    finally:
        hmsproxy_sql(spark, "DROP REMOTE TABLE IF EXISTS shop.glue_orders; DROP REMOTE DATABASE IF EXISTS glue_sales")


def test_spark_lists_and_describes_glue_tables(spark, glue_links):
    assert {r.tableName for r in spark.sql("SHOW TABLES IN glue_sales").collect()} == {"orders", "payments"}
    assert "glue_orders" in {r.tableName for r in spark.sql("SHOW TABLES IN shop").collect()}
    described = {r[0]: r[1] for r in spark.sql("DESCRIBE TABLE EXTENDED shop.glue_orders").collect()}
    assert described["order_id"] == "bigint" and described["customer"] == "string" and described["amount"] == "double"
    assert "hmsproxy.remote.factory=glue" in described["Table Properties"]
    assert [r[0] for r in spark.sql("SHOW PARTITIONS glue_sales.payments").collect()] == [f"ds={ds}" for ds in PAYMENTS]


def test_spark_reads_the_rows_written(spark, glue_links):
    rows = spark.sql("SELECT order_id, customer, amount FROM shop.glue_orders ORDER BY order_id").collect()
    assert [tuple(r) for r in rows] == ORDERS
    rows = spark.sql("SELECT order_id, paid, ds FROM glue_sales.payments ORDER BY ds, order_id").collect()
    assert [tuple(r) for r in rows] == [(*row, ds) for ds, day in PAYMENTS.items() for row in day]
    joined = spark.sql(
        "SELECT o.customer, sum(p.paid) AS paid FROM shop.glue_orders o JOIN glue_sales.payments p ON p.order_id = o.order_id "
        "GROUP BY o.customer ORDER BY o.customer"
    ).collect()
    assert [(r.customer, r.paid) for r in joined] == [("ann", 10.5 + 3.0 + 4.25), ("bob", 20.0)]


def _filter_calls_to_glue(proxy) -> float:
    """get_partitions_by_filter calls the proxy answered from a Glue catalog, by its metrics."""
    registry = proxy.handler.features.get("metrics").registry
    return sum(
        s.value
        for family in registry.collect()
        for s in family.samples
        if s.name == "hmsproxy_requests_total"
        and s.labels.get("method") == "get_partitions_by_filter"
        and "Glue" in s.labels.get("backend", "")
    )


def test_a_partition_filter_reads_one_partition(spark, proxy, glue_links):
    before = _filter_calls_to_glue(proxy)
    day = spark.sql("SELECT order_id, paid FROM glue_sales.payments WHERE ds = '2026-11-02' ORDER BY order_id")
    assert [tuple(r) for r in day.collect()] == PAYMENTS["2026-11-02"]
    files = day.inputFiles()  # what Spark lists after pruning with get_partitions_by_filter
    assert files and all("/ds=2026-11-02/" in f for f in files), files
    assert _filter_calls_to_glue(proxy) > before


def test_spark_writes_are_refused(spark, glue_links):
    with pytest.raises(AnalysisException) as err:
        spark.sql("ALTER TABLE shop.glue_orders SET TBLPROPERTIES ('x'='y')")
    assert META_EXCEPTION in jvm_causes(err.value)
    assert f"remote table shop.glue_orders is read-only: it links to sales.orders in Glue catalog {REGION}" in str(err.value)
    with pytest.raises(AnalysisException) as err:
        spark.sql("ALTER TABLE glue_sales.payments ADD PARTITION (ds='2026-11-09')")
    assert "read-only" in str(err.value)
    assert spark.sql("SELECT count(*) FROM glue_sales.payments").collect()[0][0] == 4


def test_a_glue_database_without_a_location(spark, glue_links):
    """Athena and the API make databases with no LocationUri; Spark needs one to look at a database."""
    glue = glue_links.client()
    glue.create_database(DatabaseInput={"Name": "athena_made"})
    props = f"'aws.region'='{REGION}', 'aws.glue.endpoint'='{glue_links.endpoint}'"
    hmsproxy_sql(spark, f"CREATE REMOTE DATABASE glue_bare CONNECTED TO athena_made VIA 'glue' WITH DBPROPERTIES ({props})")
    try:
        assert spark.sql("SHOW TABLES IN glue_bare").collect() == []
        described = {r[0]: r[1] for r in spark.sql("DESCRIBE DATABASE glue_bare").collect()}
        assert described["Namespace Name"] == "glue_bare"
    finally:
        hmsproxy_sql(spark, "DROP REMOTE DATABASE glue_bare")
        glue.delete_database(Name="athena_made")

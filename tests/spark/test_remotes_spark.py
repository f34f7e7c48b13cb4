"""Remote databases and tables through a real SparkSession and the proxy.

Links are made with plain Spark SQL (CREATE DATABASE ... WITH DBPROPERTIES,
CREATE TABLE ... TBLPROPERTIES carrying hmsproxy.remote.*) and with the proxy's
own statements (hmsproxy.clients.spark.sql: CREATE REMOTE ...). The targets are the
session's federated metastore (database `sales`, table `orders` written by
Spark through the proxy) and a third metastore of this module that has a
database `sales` of its own, with Parquet files Spark wrote.
"""

from __future__ import annotations

import pytest
from pyspark.errors import AnalysisException

from hmsproxy.clients.spark import sql as hmsproxy_sql
from hmsproxy.protocol import idl
from tests.support.spark_errors import META_EXCEPTION, jvm_causes
from tests.support.spark_tables import metastore_with_table

pytestmark = pytest.mark.spark
hive = idl.hive


@pytest.fixture(scope="module")
def third(metastore_factory, spark, tmp_path_factory):
    """A third metastore with `sales.targets` (Parquet files Spark wrote), not in the federation."""
    root = tmp_path_factory.mktemp("third")
    rows = [(1, 25), (2, 50)]
    return metastore_with_table(
        metastore_factory,
        spark,
        root,
        "remote_hms",
        "sales.targets",
        "customer_id INT, target INT",
        rows,
        description="sales on the third metastore",
    )


def names(rows, column=0):
    return {r[column] for r in rows}


def link_props(uri: str, db: str, table: str | None = None, *, checked: bool = True) -> str:
    props = [f"'hmsproxy.remote.uris'='{uri}'", f"'hmsproxy.remote.database'='{db}'"]
    if table:
        props.append(f"'hmsproxy.remote.table'='{table}'")
    if not checked:  # made without asking the metastore (else refused while it is out of reach)
        props.append("'hmsproxy.remote.check'='false'")
    return ", ".join(props)


def properties_of(spark, what: str) -> str:
    return "\n".join(" ".join(str(c) for c in r) for r in spark.sql(f"DESCRIBE {what}").collect())


def test_remote_table_created_with_tblproperties(spark, metastores, federated_orders):
    spark.sql("CREATE DATABASE IF NOT EXISTS linked")
    spark.sql(f"CREATE TABLE linked.orders_link (id INT) TBLPROPERTIES ({link_props(metastores[1].uri, 'sales', 'orders')})")
    try:
        assert "orders_link" in names(spark.sql("SHOW TABLES IN linked").collect(), 1)
        assert spark.sql("SELECT sum(amount) FROM linked.orders_link").collect()[0][0] == 35
        rows = spark.sql("SELECT amount FROM linked.orders_link WHERE ds='2026-11-02'").collect()
        assert [r.amount for r in rows] == [5]
        parts = [r[0] for r in spark.sql("SHOW PARTITIONS linked.orders_link").collect()]
        assert parts == ["ds=2026-11-01", "ds=2026-11-02"]
        table = spark.catalog.getTable("linked.orders_link")
        assert (table.database, table.name) == ("linked", "orders_link")
        # DESCRIBE EXTENDED: the remote table's description plus the link.
        described = properties_of(spark, "TABLE EXTENDED linked.orders_link")
        assert "customer_id" in described and "ds" in described
        assert f"hmsproxy.remote.uris={metastores[1].uri}" in described
        assert "hmsproxy.remote.database=sales" in described
        assert "hmsproxy.remote.table=orders" in described
        assert "hmsproxy.remote.factory=thrift" in described
    finally:
        spark.sql("DROP TABLE linked.orders_link")
    assert "orders_link" not in names(spark.sql("SHOW TABLES IN linked").collect(), 1)
    # Only the link went.
    assert spark.sql("SELECT count(*) FROM waggle_sales.orders").collect()[0][0] == 3


def test_remote_database_created_with_dbproperties(spark, metastores, federated_orders):
    spark.sql(f"CREATE DATABASE sales_us WITH DBPROPERTIES ({link_props(metastores[1].uri, 'sales')})")
    try:
        assert "sales_us" in names(spark.sql("SHOW DATABASES").collect())
        assert "orders" in names(spark.sql("SHOW TABLES IN sales_us").collect(), 1)
        assert spark.sql("SELECT sum(amount) FROM sales_us.orders").collect()[0][0] == 35
        described = properties_of(spark, "DATABASE EXTENDED sales_us")
        assert "hmsproxy.remote.database" in described and metastores[1].uri in described
    finally:
        spark.sql("DROP DATABASE sales_us")
    assert "sales_us" not in names(spark.sql("SHOW DATABASES").collect())
    assert "waggle_sales" in names(spark.sql("SHOW DATABASES").collect())


def test_join_two_metastores_that_both_have_sales(spark, metastores, third, federated_orders):
    spark.sql(f"CREATE DATABASE sales_us WITH DBPROPERTIES ({link_props(metastores[1].uri, 'sales')})")
    spark.sql(f"CREATE DATABASE sales_eu WITH DBPROPERTIES ({link_props(third.uri, 'sales')})")
    try:
        rows = spark.sql(
            "SELECT o.customer_id, sum(o.amount) AS total, max(t.target) AS target "
            "FROM sales_us.orders o JOIN sales_eu.targets t ON t.customer_id = o.customer_id "
            "GROUP BY o.customer_id ORDER BY o.customer_id"
        ).collect()
        assert [(r.customer_id, r.total, r.target) for r in rows] == [(1, 30, 25), (2, 5, 50)]
    finally:
        spark.sql("DROP DATABASE sales_us")
        spark.sql("DROP DATABASE sales_eu")


def test_writes_to_remotes_are_refused(spark, metastores, federated_orders):
    spark.sql(f"CREATE DATABASE sales_ro WITH DBPROPERTIES ({link_props(metastores[1].uri, 'sales')})")
    spark.sql("CREATE DATABASE IF NOT EXISTS linked")
    spark.sql(f"CREATE TABLE linked.orders_ro (id INT) TBLPROPERTIES ({link_props(metastores[1].uri, 'sales', 'orders')})")
    try:
        with pytest.raises(AnalysisException) as err:
            spark.sql("ALTER TABLE linked.orders_ro SET TBLPROPERTIES ('x'='y')")
        assert META_EXCEPTION in jvm_causes(err.value)
        assert "remote table linked.orders_ro is read-only: it links to sales.orders" in str(err.value)
        with pytest.raises(AnalysisException) as err:
            spark.sql("ALTER TABLE linked.orders_ro ADD PARTITION (ds='2026-12-01')")
        assert META_EXCEPTION in jvm_causes(err.value)
        assert "read-only" in str(err.value)
        with pytest.raises(AnalysisException) as err:
            spark.sql("CREATE TABLE sales_ro.new_table (id INT) STORED AS PARQUET")
        assert META_EXCEPTION in jvm_causes(err.value)
        assert "remote database sales_ro is read-only" in str(err.value)
        with pytest.raises(AnalysisException) as err:
            spark.sql("ALTER TABLE sales_ro.orders DROP PARTITION (ds='2026-11-01')")
        assert META_EXCEPTION in jvm_causes(err.value)
        assert "read-only" in str(err.value)
        # Remote tables look external, so Spark refuses to delete their files itself.
        for table in ("linked.orders_ro", "sales_ro.orders"):
            with pytest.raises(AnalysisException, match="(?i)external"):  # Spark's own check, no metastore call
                spark.sql(f"TRUNCATE TABLE {table}")
        assert spark.sql("SELECT count(*) FROM linked.orders_ro").collect()[0][0] == 3
        parts = [r[0] for r in spark.sql("SHOW PARTITIONS waggle_sales.orders").collect()]
        assert parts == ["ds=2026-11-01", "ds=2026-11-02"]
    finally:
        spark.sql("DROP TABLE linked.orders_ro")
        spark.sql("DROP DATABASE sales_ro")


def test_remote_metastore_down_fails_only_its_entities_and_recovers(spark, third, federated_orders):
    spark.sql(f"CREATE DATABASE sales_eu WITH DBPROPERTIES ({link_props(third.uri, 'sales')})")
    try:
        assert spark.sql("SELECT sum(target) FROM sales_eu.targets").collect()[0][0] == 75
        third.stop()
        try:
            with pytest.raises(AnalysisException) as err:
                spark.sql("SELECT sum(target) FROM sales_eu.targets").collect()
            assert META_EXCEPTION in jvm_causes(err.value)
            message = str(err.value)
            assert "remote database sales_eu" in message and "is unavailable" in message, message
            # Everything else keeps working.
            assert "sales_eu" in names(spark.sql("SHOW DATABASES").collect())
            assert spark.sql("SELECT sum(amount) FROM waggle_sales.orders").collect()[0][0] == 35
        finally:
            third.start()
        assert spark.sql("SELECT sum(target) FROM sales_eu.targets").collect()[0][0] == 75
    finally:
        spark.sql("DROP DATABASE sales_eu")


def test_remotes_made_with_the_proxys_own_statements(spark, metastores, third, federated_orders):
    spark.sql("CREATE DATABASE IF NOT EXISTS linked")
    spark.sql("USE linked")
    try:
        hmsproxy_sql(
            spark, f"CREATE REMOTE TABLE targets_link CONNECTED TO sales.targets WITH TBLPROPERTIES ('hive.metastore.uris'='{third.uri}')"
        )
        hmsproxy_sql(
            spark, f"CREATE REMOTE DATABASE sales_fed CONNECTED TO sales WITH DBPROPERTIES ('hive.metastore.uris'='{metastores[1].uri}')"
        )
        remote_tables = hmsproxy_sql(spark, "SHOW REMOTE TABLES").collect()
        assert "targets_link" in {r.table_name for r in remote_tables}
        rows = spark.sql(
            "SELECT t.customer_id, t.target, sum(o.amount) AS total FROM linked.targets_link t "
            "JOIN sales_fed.orders o ON o.customer_id = t.customer_id GROUP BY t.customer_id, t.target "
            "ORDER BY t.customer_id"
        ).collect()
        assert [(r.customer_id, r.target, r.total) for r in rows] == [(1, 25, 30), (2, 50, 5)]
        described = properties_of(spark, "TABLE EXTENDED linked.targets_link")
        assert f"hmsproxy.remote.uris={third.uri}" in described and "hmsproxy.remote.table=targets" in described
    finally:
        hmsproxy_sql(spark, "DROP REMOTE TABLE IF EXISTS targets_link")
        hmsproxy_sql(spark, "DROP REMOTE DATABASE IF EXISTS sales_fed")
        spark.sql("USE default")

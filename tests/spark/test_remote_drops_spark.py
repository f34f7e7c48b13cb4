"""Spark drops links to metastores it can't reach: the links go, nothing else does.

A real SparkSession through the session's proxy. The links are made as a newcomer makes them
(Spark's CREATE TABLE / CREATE DATABASE with hmsproxy.remote.* properties) to a metastore that
is not there: a host name that doesn't resolve, or a port on 127.0.0.1 nobody listens on. Spark
fetches what it drops (get_table, get_database, and for CASCADE the table lists) before it drops
it; the proxy answers those from what the link recorded (features/remotes/records.py).
"""

from __future__ import annotations

import socket

import pytest
from pyspark.errors import AnalysisException

from hmsproxy.clients.spark import sql as hmsproxy_sql
from hmsproxy.protocol import idl
from tests.spark.test_remotes_spark import link_props, names
from tests.support.spark_tables import metastore_with_table

pytestmark = pytest.mark.spark
hive = idl.hive

SHOP = "drops_shop"


def closed_port_uri() -> str:
    """A port on 127.0.0.1 that nobody listens on: bound, then freed."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"thrift://127.0.0.1:{s.getsockname()[1]}"


@pytest.fixture(params=["unresolvable host", "closed port"])
def unreachable(request) -> str:
    return "thrift://hms-eu.invalid:9083" if request.param == "unresolvable host" else closed_port_uri()


@pytest.fixture
def shop(spark):
    """A local database with a local table and a row: what must survive every drop here."""
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {SHOP}")
    spark.sql(f"CREATE TABLE IF NOT EXISTS {SHOP}.events (id INT) STORED AS PARQUET")
    spark.sql(f"INSERT OVERWRITE TABLE {SHOP}.events VALUES (7)")
    return SHOP


@pytest.fixture
def remotes(proxy):
    feature = proxy.handler.features.get("remotes")
    yield feature.repo
    # A failed test leaves no link behind for the next.
    for rt in feature.repo.list_tables(SHOP):
        feature.repo.drop_table(rt.local_db, rt.local_name)
    for rd in feature.repo.list_databases():
        if rd.local_name.startswith("drops_"):
            feature.repo.drop_database(rd.local_name)
    feature.cache.refresh()


def remote_tables(spark) -> set[tuple[str, str]]:
    return {(r.database_name, r.table_name) for r in hmsproxy_sql(spark, "SHOW REMOTE TABLES").collect()}


def remote_databases(spark) -> set[str]:
    return {r.database_name for r in hmsproxy_sql(spark, "SHOW REMOTE DATABASES").collect()}


def assert_local_untouched(spark, metastores) -> None:
    assert spark.sql(f"SELECT id FROM {SHOP}.events").collect()[0].id == 7
    primary = metastores[0].client()
    try:
        assert primary.get_all_tables(SHOP) == ["events"]
    finally:
        primary.close()


def test_spark_drops_links_to_a_metastore_it_cannot_reach(spark, metastores, shop, remotes, unreachable, federated_orders):
    # Links are checked when made: refused while the metastore is out of reach ...
    with pytest.raises(AnalysisException) as err:
        spark.sql(f"CREATE TABLE {SHOP}.orders_eu (id INT) TBLPROPERTIES ({link_props(unreachable, 'sales', 'orders')})")
    assert "can't create remote table" in str(err.value) and "'hmsproxy.remote.check' = 'false'" in str(err.value)
    assert remotes.get_table(SHOP, "orders_eu") is None
    # ... and made all the same when the statement says not to check.
    spark.sql(f"CREATE TABLE {SHOP}.orders_eu (id INT) TBLPROPERTIES ({link_props(unreachable, 'sales', 'orders', checked=False)})")
    spark.sql(f"CREATE DATABASE drops_sales_eu WITH DBPROPERTIES ({link_props(unreachable, 'sales', checked=False)})")
    spark.sql(f"CREATE DATABASE drops_sales_cascade WITH DBPROPERTIES ({link_props(unreachable, 'sales', checked=False)})")
    assert (SHOP, "orders_eu") in remote_tables(spark)
    assert {"drops_sales_eu", "drops_sales_cascade"} <= remote_databases(spark)

    # Reading fails, and the error says how to get rid of the link.
    with pytest.raises(AnalysisException) as err:
        spark.sql(f"SELECT * FROM {SHOP}.orders_eu").collect()
    message = str(err.value)
    assert f"remote table {SHOP}.orders_eu: metastore 'remote:{unreachable}'" in message and "is unavailable" in message
    assert f'DROP TABLE {SHOP}.orders_eu (or hmsproxy sql -e "DROP REMOTE TABLE {SHOP}.orders_eu") removes the link' in message

    spark.sql(f"DROP TABLE {SHOP}.orders_eu")
    spark.sql("DROP DATABASE drops_sales_eu")
    spark.sql("DROP DATABASE drops_sales_cascade CASCADE")

    assert (SHOP, "orders_eu") not in remote_tables(spark)
    assert not {"drops_sales_eu", "drops_sales_cascade"} & remote_databases(spark)
    assert remotes.get_table(SHOP, "orders_eu") is None
    assert "orders_eu" not in names(spark.sql(f"SHOW TABLES IN {SHOP}").collect(), 1)
    assert not {"drops_sales_eu", "drops_sales_cascade"} & names(spark.sql("SHOW DATABASES").collect())
    assert_local_untouched(spark, metastores)

    # The same names link again, to a metastore that answers.
    spark.sql(f"CREATE TABLE {SHOP}.orders_eu (id INT) TBLPROPERTIES ({link_props(metastores[1].uri, 'sales', 'orders')})")
    spark.sql(f"CREATE DATABASE drops_sales_eu WITH DBPROPERTIES ({link_props(metastores[1].uri, 'sales')})")
    assert spark.sql(f"SELECT sum(amount) FROM {SHOP}.orders_eu").collect()[0][0] == 35
    assert spark.sql("SELECT sum(amount) FROM drops_sales_eu.orders").collect()[0][0] == 35
    spark.sql(f"DROP TABLE {SHOP}.orders_eu")
    spark.sql("DROP DATABASE drops_sales_eu CASCADE")  # a reachable remote database: its tables stay where they are
    assert spark.sql("SELECT count(*) FROM waggle_sales.orders").collect()[0][0] == 3


@pytest.fixture(scope="module")
def eu(metastore_factory, spark, tmp_path_factory):
    """A metastore with sales.orders (Parquet files Spark wrote), for links made while it answers."""
    root = tmp_path_factory.mktemp("eu")
    rows = [(1, 25), (2, 50)]
    return metastore_with_table(
        metastore_factory, spark, root, "eu_hms", "sales.orders", "customer_id INT, amount INT", rows, description="sales in the EU"
    )


def test_spark_drops_links_whose_metastore_went_away_and_the_metastore_keeps_its_objects(spark, metastores, shop, remotes, eu):
    spark.sql(f"CREATE TABLE {SHOP}.orders_eu (id INT) TBLPROPERTIES ({link_props(eu.uri, 'sales', 'orders')})")
    spark.sql(f"CREATE DATABASE drops_sales_eu WITH DBPROPERTIES ({link_props(eu.uri, 'sales')})")
    eu.stop()
    try:
        # What Spark shows meanwhile is what the links recorded when they were made.
        described = {r.col_name: r.data_type for r in spark.sql(f"DESCRIBE TABLE EXTENDED {SHOP}.orders_eu").collect()}
        assert described["customer_id"] == "int" and described["amount"] == "int"
        assert "hmsproxy.remote.unavailable=" in described["Table Properties"]
        assert "as recorded on" in described["Table Properties"]
        spark.sql(f"DROP TABLE {SHOP}.orders_eu")
        spark.sql("DROP DATABASE drops_sales_eu CASCADE")
        assert (SHOP, "orders_eu") not in remote_tables(spark) and "drops_sales_eu" not in remote_databases(spark)
        assert_local_untouched(spark, metastores)
    finally:
        eu.start()
    client = eu.client()
    try:
        assert client.get_all_tables("sales") == ["orders"]  # dropping a link never reaches its metastore
    finally:
        client.close()

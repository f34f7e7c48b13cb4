"""A Glue Data Catalog (moto's server, tests/support/glue.py) as remote databases and tables of the
real proxy: links made with `hmsproxy sql` and the Python client, read through plain Thrift."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from hmsproxy.clients.proxy import HmsProxyClient, HmsProxyError
from hmsproxy.protocol import idl
from tests.support.glue import ORDERS_COLUMNS, PAYMENTS, REGION, seed_sales, start_moto

hive = idl.hive
REPO = Path(__file__).resolve().parents[2]


def glue_props(endpoint: str, **more: str) -> str:
    props = {"aws.region": REGION, "aws.glue.endpoint": endpoint, **more}
    return ", ".join(f"'{k}'='{v}'" for k, v in props.items())


def hmsproxy_sql(uri: str, statements: str) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "hmsproxy.cli", "sql", "--uri", uri, "-e", statements]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=REPO)


@pytest.fixture(scope="module")
def links(proxy, glue_server, glue_env):
    """glue_sales (all of Glue's `sales`, made with `hmsproxy sql`) and shop.glue_orders (made with the
    Python client); dropped at the end."""
    uri = f"thrift://127.0.0.1:{proxy.port}"
    made = hmsproxy_sql(
        uri, f"CREATE REMOTE DATABASE glue_sales CONNECTED TO sales VIA 'glue' WITH DBPROPERTIES ({glue_props(glue_server.endpoint)})"
    )
    assert made.returncode == 0, made.stderr
    assert made.stdout.strip() == "created remote database 'glue_sales' connected to 'sales' via 'glue'"
    try:
        with HmsProxyClient(uri, user="alice") as c:
            _local_database(proxy, "shop")
            [created] = c.execute(
                f"CREATE REMOTE TABLE shop.glue_orders CONNECTED TO sales.orders VIA 'glue' "
                f"WITH TBLPROPERTIES ({glue_props(glue_server.endpoint)})"
            )
            assert created.rows == [["created remote table 'shop.glue_orders' connected to 'sales.orders' via 'glue'"]]
        yield uri
    finally:
        hmsproxy_sql(uri, "DROP REMOTE TABLE IF EXISTS shop.glue_orders; DROP REMOTE DATABASE IF EXISTS glue_sales")


def _local_database(proxy, name: str) -> None:
    import thriftpy2.rpc

    client = thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", proxy.port, timeout=60_000)
    try:
        if name not in client.get_all_databases():
            client.create_database(hive.Database(name=name, description="local", parameters={}))
    finally:
        client.close()


def test_listings_and_descriptions(links, proxy_client, glue_server):
    assert "glue_sales" in proxy_client.get_all_databases()
    assert proxy_client.get_all_tables("glue_sales") == ["orders", "payments"]
    assert "glue_orders" in proxy_client.get_tables("shop", "glue*")
    db = proxy_client.get_database("glue_sales")
    assert db.description == "sales in Glue" and db.locationUri.endswith("/sales")
    assert db.parameters["hmsproxy.remote.factory"] == "glue"

    payments = proxy_client.get_table("glue_sales", "payments")
    assert (payments.dbName, payments.tableName, payments.tableType) == ("glue_sales", "payments", "EXTERNAL_TABLE")
    assert [(c.name, c.type) for c in payments.sd.cols] == [("order_id", "bigint"), ("paid", "double")]
    assert [k.name for k in payments.partitionKeys] == ["ds"]
    assert payments.sd.serdeInfo.serializationLib == "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
    assert payments.sd.inputFormat.endswith("MapredParquetInputFormat") and payments.sd.location.endswith("/sales/payments")

    orders = proxy_client.get_table("shop", "glue_orders")
    assert (orders.dbName, orders.tableName, orders.owner) == ("shop", "glue_orders", "etl")
    assert [(c.name, c.type) for c in orders.sd.cols] == ORDERS_COLUMNS and orders.partitionKeys == []
    assert orders.parameters["hmsproxy.remote.table"] == "orders" and orders.parameters["classification"] == "parquet"
    assert [f.name for f in proxy_client.get_schema("shop", "glue_orders")] == ["order_id", "customer", "amount"]

    listed = hmsproxy_sql(links, "SHOW REMOTE TABLES IN shop")
    assert listed.returncode == 0 and any("glue_orders" in line and "| glue" in line for line in listed.stdout.splitlines())
    described = hmsproxy_sql(links, "DESCRIBE REMOTE DATABASE glue_sales")
    rows = {line.split("|")[0].strip(): line.split("|")[-1].strip() for line in described.stdout.splitlines() if "|" in line}
    assert described.returncode == 0 and rows["aws.glue.endpoint"] == glue_server.endpoint and rows["aws.region"] == REGION


def test_partitions_and_filters(links, proxy_client):
    every = proxy_client.get_partitions("glue_sales", "payments", -1)
    assert [p.values for p in every] == [[ds] for ds in PAYMENTS]
    assert {(p.dbName, p.tableName) for p in every} == {("glue_sales", "payments")}
    assert all(p.sd.location.endswith(f"/payments/ds={p.values[0]}") for p in every)
    assert [p.values for p in proxy_client.get_partitions("glue_sales", "payments", 2)] == [["2026-11-01"], ["2026-11-02"]]
    assert proxy_client.get_partition_names("glue_sales", "payments", -1) == [f"ds={ds}" for ds in PAYMENTS]

    def by_filter(text):
        return [p.values[0] for p in proxy_client.get_partitions_by_filter("glue_sales", "payments", text, -1)]

    assert by_filter('ds = "2026-11-02"') == ["2026-11-02"]  # Spark's quoting, said to Glue as '…'
    assert by_filter("ds >= '2026-11-02' and ds != '2026-11-03'") == ["2026-11-02"]
    assert by_filter("ds between '2026-11-01' and '2026-11-02'") == ["2026-11-01", "2026-11-02"]
    assert by_filter('ds like "2026-11-0[13]"') == ["2026-11-01", "2026-11-03"]  # Java's regex, filtered by the proxy
    assert proxy_client.get_partition("glue_sales", "payments", ["2026-11-03"]).sd.location.endswith("ds=2026-11-03")
    with pytest.raises(hive.MetaException, match="is not a partition column"):
        proxy_client.get_partitions_by_filter("glue_sales", "payments", "nope like 'x'", -1)
    assert proxy_client.get_partitions("shop", "glue_orders", -1) == []


def test_missing_targets_are_refused_naming_catalog_and_name(links, glue_server, proxy):
    where = f"Glue catalog {REGION} at {glue_server.endpoint}"
    with HmsProxyClient(links) as c:
        with pytest.raises(HmsProxyError) as e:
            c.execute(
                f"CREATE REMOTE TABLE shop.typo CONNECTED TO sales.ordrs VIA 'glue' WITH TBLPROPERTIES ({glue_props(glue_server.endpoint)})"
            )
        assert f"can't create remote table shop.typo: {where} has no table 'sales.ordrs'" in str(e.value)
        with pytest.raises(HmsProxyError, match=f"{where} has no database 'no_sales'"):
            c.execute(
                f"CREATE REMOTE DATABASE glue_x CONNECTED TO no_sales VIA 'glue' WITH DBPROPERTIES ({glue_props(glue_server.endpoint)})"
            )
        with pytest.raises(HmsProxyError, match="property 'aws.region' is required"):
            c.execute(
                f"CREATE REMOTE DATABASE glue_x CONNECTED TO sales VIA 'glue' WITH DBPROPERTIES ('aws.glue.endpoint'='{glue_server.endpoint}')"
            )
        with pytest.raises(HmsProxyError, match="aws.profile"):
            c.execute(
                f"CREATE REMOTE DATABASE glue_x CONNECTED TO sales VIA 'glue' "
                f"WITH DBPROPERTIES ({glue_props(glue_server.endpoint, **{'aws.profile': 'no-such-profile'})})"
            )
    repo = proxy.handler.features.get("remotes").repo
    assert repo.get_table("shop", "typo") is None and repo.get_database("glue_x") is None


def test_writes_are_refused_with_one_message(links, proxy_client):
    with pytest.raises(hive.MetaException, match="is read-only") as e:
        proxy_client.drop_table("glue_sales", "orders", False)
    assert "Glue catalog" in e.value.message
    with pytest.raises(hive.MetaException, match="remote table shop.glue_orders is read-only"):
        table = proxy_client.get_table("shop", "glue_orders")
        table.parameters["x"] = "y"
        proxy_client.alter_table("shop", "glue_orders", table)
    with pytest.raises(hive.MetaException, match="is read-only"):
        proxy_client.add_partition(
            hive.Partition(values=["2026-11-04"], dbName="glue_sales", tableName="payments", sd=hive.StorageDescriptor(cols=[]))
        )


def test_a_stopped_catalog_fails_fast_naming_its_endpoint(links, proxy_client, tmp_path):
    server = start_moto()
    try:
        seed_sales(server.client(), tmp_path)
        with HmsProxyClient(links) as c:
            c.execute(f"CREATE REMOTE DATABASE glue_down CONNECTED TO sales VIA 'glue' WITH DBPROPERTIES ({glue_props(server.endpoint)})")
        try:
            assert proxy_client.get_all_tables("glue_down") == ["orders", "payments"]
            server.stop()
            started = time.monotonic()
            with pytest.raises(hive.MetaException) as e:
                proxy_client.get_table("glue_down", "orders")
            assert time.monotonic() - started < 10
            assert server.endpoint in e.value.message
            assert proxy_client.get_all_tables("glue_sales") == ["orders", "payments"]  # the other catalog still answers
        finally:
            with HmsProxyClient(links) as c:
                c.execute("DROP REMOTE DATABASE glue_down")
    finally:
        server.stop()

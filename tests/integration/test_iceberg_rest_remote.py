"""Iceberg REST catalogs as remote databases and tables (`VIA 'iceberg-rest'`), through the real proxy
(Hive 2.3 primary), against Apache Iceberg's own REST catalog server (tests/support/iceberg_rest.py).

Tables are made and filled with pyiceberg's RestCatalog directly; pyiceberg's HiveCatalog, pointed at
the proxy, lists, loads and scans them through the remote and must read the same rows.
"""

from __future__ import annotations

import datetime
import subprocess
import sys
import time
import uuid
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.catalog.hive import HiveCatalog
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import NamespaceAlreadyExistsError, NoSuchTableError
from pyiceberg.schema import Schema
from pyiceberg.types import (
    DecimalType,
    IntegerType,
    ListType,
    LongType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
)

from hmsproxy.clients.proxy import HmsProxyClient, HmsProxyError

HMSPROXY = [sys.executable, "-m", "hmsproxy.cli"]
REPO = Path(__file__).resolve().parents[2]
NAMESPACE, TABLE = "sales", "orders"

SCHEMA = Schema(
    NestedField(1, "order_id", LongType(), required=True),
    NestedField(2, "customer", StringType()),
    NestedField(3, "amount", DecimalType(10, 2)),
    NestedField(4, "placed_at", TimestampType()),
    NestedField(5, "tags", ListType(6, StringType(), element_required=False)),
    NestedField(7, "address", StructType(NestedField(8, "city", StringType()), NestedField(9, "zip", IntegerType()))),
)
ROWS = pa.table(
    {
        "order_id": pa.array([1, 2, 3], pa.int64()),
        "customer": ["ann", "bob", "cy"],
        "amount": pa.array([Decimal("10.50"), Decimal("3.25"), Decimal("99.99")], pa.decimal128(10, 2)),
        "placed_at": pa.array([datetime.datetime(2026, 11, d, 12, 0) for d in (1, 2, 3)], pa.timestamp("us")),
        "tags": pa.array([["new"], [], ["vip", "eu"]], pa.list_(pa.string())),
        "address": pa.array(
            [{"city": "Oslo", "zip": 150}, {"city": "Pune", "zip": 411}, {"city": "Lima", "zip": 15}],
            pa.struct([("city", pa.string()), ("zip", pa.int32())]),
        ),
    },
    schema=pa.schema(
        [
            pa.field("order_id", pa.int64(), nullable=False),
            ("customer", pa.string()),
            ("amount", pa.decimal128(10, 2)),
            ("placed_at", pa.timestamp("us")),
            ("tags", pa.list_(pa.string())),
            ("address", pa.struct([("city", pa.string()), ("zip", pa.int32())])),
        ]
    ),
)


def unique(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def rest(iceberg_rest):
    """The REST catalog, direct, with sales.orders made afresh and filled."""
    catalog = RestCatalog("direct", uri=iceberg_rest.uri, warehouse=iceberg_rest.warehouse)
    try:
        catalog.create_namespace(NAMESPACE, {"comment": "orders from the shop"})
    except NamespaceAlreadyExistsError:
        pass
    try:
        catalog.drop_table(f"{NAMESPACE}.{TABLE}")
    except NoSuchTableError:
        pass
    table = catalog.create_table(f"{NAMESPACE}.{TABLE}", schema=SCHEMA)
    table.append(ROWS)
    return catalog


@pytest.fixture
def uri(proxy):
    return f"thrift://127.0.0.1:{proxy.port}"


@pytest.fixture
def through_proxy(proxy):
    return HiveCatalog("through-proxy", uri=f"thrift://127.0.0.1:{proxy.port}")


@pytest.fixture
def lake(rest, iceberg_rest, uri):
    """A remote database on sales, made with the Python client (hmsproxy_execute_script), dropped after."""
    name = unique("lake")
    with HmsProxyClient(uri) as client:
        client.execute(
            f"CREATE REMOTE DATABASE {name} CONNECTED TO {NAMESPACE} VIA 'iceberg-rest' WITH DBPROPERTIES ({props(iceberg_rest)})"
        )
    yield name
    with HmsProxyClient(uri) as client:
        client.execute(f"DROP REMOTE DATABASE {name}")


def props(server) -> str:
    return f"'uri' = '{server.uri}', 'warehouse' = '{server.warehouse}'"


def hmsproxy(*args):
    return subprocess.run([*HMSPROXY, *args], capture_output=True, text=True, timeout=120, cwd=REPO)


def sorted_rows(table: pa.Table) -> list[dict]:
    return sorted(table.to_pylist(), key=lambda r: r["order_id"])


def test_remote_database_made_with_hmsproxy_sql_reads_like_the_catalog(rest, iceberg_rest, uri, through_proxy):
    lake = unique("lake")
    made = hmsproxy(
        "sql",
        "--uri",
        uri,
        "-e",
        f"CREATE REMOTE DATABASE {lake} CONNECTED TO {NAMESPACE} VIA 'iceberg-rest' WITH DBPROPERTIES ({props(iceberg_rest)})",
    )
    assert made.returncode == 0, made.stderr
    try:
        assert through_proxy.list_tables(lake) == [(lake, TABLE)]
        loaded = through_proxy.load_table(f"{lake}.{TABLE}")
        direct = rest.load_table(f"{NAMESPACE}.{TABLE}")
        assert loaded.metadata_location == direct.metadata_location
        assert sorted_rows(loaded.scan().to_arrow()) == sorted_rows(direct.scan().to_arrow()) == sorted_rows(ROWS)
        assert lake in [ns[0] for ns in through_proxy.list_namespaces()]
    finally:
        dropped = hmsproxy("sql", "--uri", uri, "-e", f"DROP REMOTE DATABASE {lake}")
    assert dropped.returncode == 0, dropped.stderr


def test_remote_database_made_with_the_python_client_scans_the_same_rows(rest, lake, through_proxy):
    assert through_proxy.list_tables(lake) == [(lake, TABLE)]
    loaded = through_proxy.load_table(f"{lake}.{TABLE}")
    assert sorted_rows(loaded.scan().to_arrow()) == sorted_rows(rest.load_table(f"{NAMESPACE}.{TABLE}").scan().to_arrow())


def test_a_table_is_described_as_icebergs_hive_catalog_writes_it(rest, lake, proxy_client):
    table = proxy_client.get_table(lake, TABLE)
    direct = rest.load_table(f"{NAMESPACE}.{TABLE}")
    assert (table.dbName, table.tableName, table.tableType) == (lake, TABLE, "EXTERNAL_TABLE")
    assert table.parameters["table_type"] == "ICEBERG"
    assert table.parameters["metadata_location"] == direct.metadata_location
    assert table.parameters["EXTERNAL"] == "TRUE"
    assert table.parameters["storage_handler"] == "org.apache.iceberg.mr.hive.HiveIcebergStorageHandler"
    assert table.sd.serdeInfo.serializationLib == "org.apache.iceberg.mr.hive.HiveIcebergSerDe"
    assert table.sd.inputFormat == "org.apache.iceberg.mr.hive.HiveIcebergInputFormat"
    assert table.sd.location == direct.location()
    assert [(c.name, c.type) for c in table.sd.cols] == [
        ("order_id", "bigint"),
        ("customer", "string"),
        ("amount", "decimal(10,2)"),
        ("placed_at", "timestamp"),
        ("tags", "array<string>"),
        ("address", "struct<city:string,zip:int>"),
    ]
    assert table.partitionKeys == []
    assert proxy_client.get_database(lake).description == "orders from the shop"
    assert proxy_client.get_fields(lake, TABLE)[2].type == "decimal(10,2)"
    assert proxy_client.get_all_tables(lake) == [TABLE]


def test_remote_table_in_a_primary_database(rest, iceberg_rest, uri, through_proxy, proxy_client):
    shop = unique("shop")
    proxy_client.create_database(idl_database(shop))
    try:
        with HmsProxyClient(uri) as client:
            client.execute(
                f"CREATE REMOTE TABLE {shop}.rest_orders CONNECTED TO {NAMESPACE}.{TABLE} VIA 'iceberg-rest' "
                f"WITH TBLPROPERTIES ({props(iceberg_rest)})"
            )
        loaded = through_proxy.load_table(f"{shop}.rest_orders")
        assert sorted_rows(loaded.scan().to_arrow()) == sorted_rows(ROWS)
        assert (shop, "rest_orders") in through_proxy.list_tables(shop)
    finally:
        with HmsProxyClient(uri) as client:
            client.execute(f"DROP REMOTE TABLE IF EXISTS {shop}.rest_orders")
        proxy_client.drop_database(shop, True, True)


def test_nested_namespace_is_addressed_with_dots_in_backquotes(rest, iceberg_rest, uri, through_proxy, proxy_client):
    nested = (NAMESPACE, "eu")
    try:
        rest.create_namespace(nested, {"location": f"{iceberg_rest.warehouse}/sales/eu"})
    except NamespaceAlreadyExistsError:
        pass
    try:
        rest.drop_table((*nested, "returns"))
    except NoSuchTableError:
        pass
    rest.create_table((*nested, "returns"), schema=SCHEMA).append(ROWS.slice(0, 1))
    lake, shop = unique("lake"), unique("shop")
    proxy_client.create_database(idl_database(shop))
    with HmsProxyClient(uri) as client:
        client.execute(
            f"CREATE REMOTE DATABASE {lake} CONNECTED TO `sales.eu` VIA 'iceberg-rest' WITH DBPROPERTIES ({props(iceberg_rest)});"
            f"CREATE REMOTE TABLE {shop}.returns CONNECTED TO `sales.eu`.returns VIA 'iceberg-rest' WITH TBLPROPERTIES ({props(iceberg_rest)})"
        )
        try:
            assert proxy_client.get_all_tables(lake) == ["returns"]
            assert proxy_client.get_database(lake).locationUri == f"{iceberg_rest.warehouse}/sales/eu"
            for name in (f"{lake}.returns", f"{shop}.returns"):
                assert sorted_rows(through_proxy.load_table(name).scan().to_arrow()) == sorted_rows(ROWS.slice(0, 1))
        finally:
            client.execute(f"DROP REMOTE TABLE {shop}.returns; DROP REMOTE DATABASE {lake}")
            proxy_client.drop_database(shop, True, True)


def test_missing_namespace_and_table_are_refused_naming_catalog_and_name(rest, iceberg_rest, uri):
    with HmsProxyClient(uri) as client:
        with pytest.raises(HmsProxyError) as e:
            client.execute(
                f"CREATE REMOTE DATABASE {unique('lake')} CONNECTED TO no_such_ns VIA 'iceberg-rest' WITH DBPROPERTIES ({props(iceberg_rest)})"
            )
        assert iceberg_rest.uri in str(e.value) and "no_such_ns" in str(e.value)
        with pytest.raises(HmsProxyError) as e:
            client.execute(
                f"CREATE REMOTE TABLE default.{unique('t')} CONNECTED TO {NAMESPACE}.ordrs VIA 'iceberg-rest' "
                f"WITH TBLPROPERTIES ({props(iceberg_rest)})"
            )
        assert iceberg_rest.uri in str(e.value) and f"{NAMESPACE}.ordrs" in str(e.value)


def test_credentials_refused_by_the_token_endpoint_name_the_property(iceberg_rest, uri):
    bad_login = f"{props(iceberg_rest)}, 'credential' = 'app:s3cret', 'oauth2-server-uri' = '{iceberg_rest.uri}/v1/no-such-endpoint'"
    with HmsProxyClient(uri) as client:
        with pytest.raises(HmsProxyError) as e:
            client.execute(
                f"CREATE REMOTE DATABASE {unique('lake')} CONNECTED TO {NAMESPACE} VIA 'iceberg-rest' WITH DBPROPERTIES ({bad_login})"
            )
    assert "refused the client credentials" in str(e.value) and "check properties 'credential' and 'scope'" in str(e.value)
    assert "s3cret" not in str(e.value)


def test_bad_properties_are_refused_in_one_line(uri):
    with HmsProxyClient(uri) as client:
        for properties, said in [
            ("'warehouse' = 'w'", "property 'uri' is required"),
            ("'uri' = 'ftp://x'", "must be an http:// or https:// URL"),
            ("'uri' = 'http://127.0.0.1:1', 'credential' = ':s'", "'client-id:secret' or 'secret'"),
            ("'uri' = 'http://127.0.0.1:1', 'ssh.tunnel.route' = 'me@bastion'", "not SSH tunnels"),
        ]:
            with pytest.raises(HmsProxyError) as e:
                client.execute(f"CREATE REMOTE DATABASE {unique('lake')} VIA 'iceberg-rest' WITH DBPROPERTIES ({properties})")
            assert said in str(e.value)


def test_writes_through_the_proxy_are_refused_naming_the_catalog(rest, iceberg_rest, lake, through_proxy):
    with pytest.raises(Exception) as e:
        through_proxy.drop_table(f"{lake}.{TABLE}")
    assert "read-only" in str(e.value) and iceberg_rest.uri in str(e.value)
    table = through_proxy.load_table(f"{lake}.{TABLE}")
    with pytest.raises(Exception) as e:
        table.append(ROWS)
    assert "read-only" in str(e.value) and iceberg_rest.uri in str(e.value)
    assert len(rest.load_table(f"{NAMESPACE}.{TABLE}").scan().to_arrow()) == len(ROWS)  # nothing written


def test_catalog_down_fails_fast_shows_down_and_recovers(iceberg_rest, lake, uri, proxy_client):
    assert proxy_client.get_table(lake, TABLE).parameters["table_type"] == "ICEBERG"
    iceberg_rest.stop()
    try:
        with pytest.raises(Exception) as e:
            proxy_client.get_all_tables(lake)
        assert iceberg_rest.uri in str(e.value) and "unavailable" in str(e.value) and "Connection refused" in str(e.value)
        assert lake in proxy_client.get_all_databases()  # listings are not blocked by it
        status = hmsproxy("status", "--uri", uri)
        assert status.returncode == 0, status.stderr
        line = next(x for x in status.stdout.splitlines() if iceberg_rest.uri in x and lake in x)
        assert ": DOWN" in line
    finally:
        iceberg_rest.start()
    for _ in range(50):  # the breaker may refuse the first calls after the restart; bounded
        try:
            assert proxy_client.get_all_tables(lake) == [TABLE]
            break
        except Exception:
            time.sleep(0.2)
    else:
        pytest.fail("the catalog was never served again after its restart")
    status = hmsproxy("status", "--uri", uri)
    assert ": up" in next(x for x in status.stdout.splitlines() if iceberg_rest.uri in x and lake in x)


def idl_database(name: str):
    from hmsproxy.protocol import idl

    return idl.hive.Database(name=name, parameters={})

"""Iceberg writers committing to an Iceberg REST table through the proxy (link property
'hmsproxy.iceberg.writes' = 'commit'), against Apache Iceberg's own REST catalog server.

pyiceberg's HiveCatalog, pointed at the proxy, appends: its lock is held on the primary, its
alter_table (the swap of metadata_location) becomes a REST commit; pyiceberg's RestCatalog, direct,
must see the rows and the very snapshot. A writer that lost to another loses cleanly, nothing lost.
"""

from __future__ import annotations

import uuid

import pyarrow as pa
import pytest
from pyiceberg.catalog.hive import HiveCatalog
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

from hmsproxy.clients.proxy import HmsProxyClient, HmsProxyError
from hmsproxy.protocol import idl
from tests.support.iceberg_rest import with_namespace

NAMESPACE = "shop_writes"
SCHEMA = Schema(NestedField(1, "order_id", LongType(), required=True), NestedField(2, "customer", StringType()))
RETRIES = "commit.retry.num-retries"
ARROW = pa.schema([pa.field("order_id", pa.int64(), nullable=False), ("customer", pa.string())])


def rows(*ids: int) -> pa.Table:
    return pa.Table.from_pylist([{"order_id": i, "customer": f"c{i}"} for i in ids], schema=ARROW)


def ids(table) -> list[int]:
    return sorted(r["order_id"] for r in table.scan().to_arrow().to_pylist())


@pytest.fixture
def direct(iceberg_rest):
    return with_namespace(RestCatalog("direct", uri=iceberg_rest.uri, warehouse=iceberg_rest.warehouse), NAMESPACE)


@pytest.fixture
def orders(direct):
    """A fresh table with rows 1 and 2, made directly; its name in the namespace. Writers don't
    retry a lost commit (pyiceberg's default is to retry on the new version), so a loss shows."""
    name = f"orders_{uuid.uuid4().hex[:8]}"
    direct.create_table(f"{NAMESPACE}.{name}", schema=SCHEMA, properties={RETRIES: "0"}).append(rows(1, 2))
    yield name
    direct.drop_table(f"{NAMESPACE}.{name}")


@pytest.fixture
def uri(proxy):
    return f"thrift://127.0.0.1:{proxy.port}"


def link(uri: str, server, writes: str | None) -> str:
    """A remote database on the namespace, writable as `writes` says; dropped by the caller."""
    name = f"lake_{uuid.uuid4().hex[:8]}"
    opt_in = f", 'hmsproxy.iceberg.writes' = '{writes}'" if writes else ""
    with HmsProxyClient(uri) as client:
        client.execute(
            f"CREATE REMOTE DATABASE {name} CONNECTED TO {NAMESPACE} VIA 'iceberg-rest' "
            f"WITH DBPROPERTIES ('uri' = '{server.uri}', 'warehouse' = '{server.warehouse}'{opt_in})"
        )
    return name


@pytest.fixture
def lake(uri, iceberg_rest, orders):
    name = link(uri, iceberg_rest, "commit")
    yield name
    with HmsProxyClient(uri) as client:
        client.execute(f"DROP REMOTE DATABASE {name}")


def writer(uri: str, name: str = "writer") -> HiveCatalog:
    return HiveCatalog(name, uri=uri)


def test_hive_catalog_append_through_the_proxy_is_a_rest_commit(direct, orders, lake, uri):
    through = writer(uri).load_table(f"{lake}.{orders}")
    through.append(rows(3, 4))
    table = direct.load_table(f"{NAMESPACE}.{orders}")
    assert ids(table) == [1, 2, 3, 4]
    # The very snapshot the writer made (its id, its manifest list) is the catalog's current one.
    assert table.current_snapshot().snapshot_id == through.current_snapshot().snapshot_id
    assert table.current_snapshot().manifest_list == through.current_snapshot().manifest_list
    assert table.current_snapshot().summary.operation.value == "append"
    assert len(table.snapshots()) == 2
    # Read back through the proxy: the catalog's own metadata file now.
    again = writer(uri).load_table(f"{lake}.{orders}")
    assert again.metadata_location == table.metadata_location
    assert ids(again) == [1, 2, 3, 4]


def test_schema_and_property_changes_commit_too(direct, orders, lake, uri, proxy_client):
    through = writer(uri).load_table(f"{lake}.{orders}")
    with through.transaction() as tx:
        tx.set_properties(owner_team="sales")
        with tx.update_schema() as schema:
            schema.add_column("note", StringType())
    table = direct.load_table(f"{NAMESPACE}.{orders}")
    assert table.properties["owner_team"] == "sales"
    assert [f.name for f in table.schema().fields] == ["order_id", "customer", "note"]
    assert [c.name for c in proxy_client.get_table(lake, orders).sd.cols] == ["order_id", "customer", "note"]


def test_a_writer_that_loaded_before_another_commit_loses_and_nothing_is_lost(direct, orders, lake, uri):
    first = writer(uri, "first").load_table(f"{lake}.{orders}")
    second = writer(uri, "second").load_table(f"{lake}.{orders}")
    first.append(rows(3))
    with pytest.raises(CommitFailedException) as e:
        second.append(rows(4))
    assert "main" in str(e.value)
    assert ids(direct.load_table(f"{NAMESPACE}.{orders}")) == [1, 2, 3]


def test_a_writer_that_retries_appends_on_the_winners_version(direct, orders, lake, uri):
    with direct.load_table(f"{NAMESPACE}.{orders}").transaction() as tx:
        tx.set_properties({RETRIES: "2", "commit.retry.min-wait-ms": "10"})
    first = writer(uri, "first").load_table(f"{lake}.{orders}")
    second = writer(uri, "second").load_table(f"{lake}.{orders}")
    first.append(rows(3))
    second.append(rows(4))  # loses once, reloads through the proxy, commits on top
    table = direct.load_table(f"{NAMESPACE}.{orders}")
    assert ids(table) == [1, 2, 3, 4]
    assert table.current_snapshot().parent_snapshot_id == first.current_snapshot().snapshot_id


class RacedHiveCatalog(HiveCatalog):
    """A HiveCatalog whose commit is overtaken by a direct REST writer after it read the table
    under its lock and before its alter_table: the proxy's swap check is all that stands between."""

    race = None

    def _write_metadata(self, *args, **kwargs):
        if self.race is not None:
            self.race()
        return super()._write_metadata(*args, **kwargs)


def test_a_commit_overtaken_by_a_direct_rest_writer_is_refused_unchanged(direct, orders, lake, uri):
    raced = RacedHiveCatalog("raced", uri=uri)
    table = raced.load_table(f"{lake}.{orders}")
    raced.race = lambda: direct.load_table(f"{NAMESPACE}.{orders}").append(rows(10))
    with pytest.raises(Exception) as e:
        table.append(rows(20))
    message = str(e.value)
    assert "The table has been modified" in message and "metadata_location" in message and "nothing was changed" in message
    assert ids(direct.load_table(f"{NAMESPACE}.{orders}")) == [1, 2, 10]  # the winner's rows, none of the loser's


def test_a_link_without_the_opt_in_stays_read_only(direct, orders, uri, iceberg_rest):
    name = link(uri, iceberg_rest, None)
    try:
        table = writer(uri).load_table(f"{name}.{orders}")
        with pytest.raises(Exception) as e:
            table.append(rows(5))
        assert "read-only" in str(e.value) and iceberg_rest.uri in str(e.value)
        assert ids(direct.load_table(f"{NAMESPACE}.{orders}")) == [1, 2]
    finally:
        with HmsProxyClient(uri) as client:
            client.execute(f"DROP REMOTE DATABASE {name}")


def test_a_bad_writes_value_is_refused_naming_the_property(uri, iceberg_rest):
    with pytest.raises(HmsProxyError) as e:
        link(uri, iceberg_rest, "yes")
    assert "'hmsproxy.iceberg.writes' must be 'commit' or 'read-only'" in str(e.value)


def test_a_commit_lock_is_held_on_the_primary_for_the_links_tables_only(lake, orders, proxy_client):
    hive = idl.hive

    def lock(**component):
        parts = {"type": hive.LockType.EXCLUSIVE, "level": hive.LockLevel.TABLE, "dbname": lake, **component}
        return proxy_client.lock(hive.LockRequest(component=[hive.LockComponent(**parts)], user="w", hostname="h"))

    held = lock(tablename=orders)
    assert held.state == hive.LockState.ACQUIRED
    waiting = lock(tablename=orders)  # a second writer waits for the first: one lock, on the primary
    assert waiting.state == hive.LockState.WAITING
    proxy_client.unlock(hive.UnlockRequest(lockid=held.lockid))
    assert proxy_client.check_lock(hive.CheckLockRequest(lockid=waiting.lockid)).state == hive.LockState.ACQUIRED
    proxy_client.unlock(hive.UnlockRequest(lockid=waiting.lockid))
    with pytest.raises(Exception) as e:
        lock(level=hive.LockLevel.DB)
    assert "can only lock its tables" in str(e.value)


def test_a_remote_table_under_another_name_commits_and_other_writes_stay_refused(direct, orders, uri, iceberg_rest, proxy_client):
    shop = f"shop_{uuid.uuid4().hex[:8]}"
    proxy_client.create_database(idl.hive.Database(name=shop, parameters={}))
    try:
        with HmsProxyClient(uri) as client:
            client.execute(
                f"CREATE REMOTE TABLE {shop}.rest_orders CONNECTED TO {NAMESPACE}.{orders} VIA 'iceberg-rest' "
                f"WITH TBLPROPERTIES ('uri' = '{iceberg_rest.uri}', 'warehouse' = '{iceberg_rest.warehouse}', "
                "'hmsproxy.iceberg.writes' = 'commit')"
            )
        writer(uri).load_table(f"{shop}.rest_orders").append(rows(7))
        assert ids(direct.load_table(f"{NAMESPACE}.{orders}")) == [1, 2, 7]
        renamed = proxy_client.get_table(shop, "rest_orders")
        renamed.tableName = "other_name"
        with pytest.raises(Exception) as e:  # an alter_table that is no commit: a rename
            proxy_client.alter_table(shop, "rest_orders", renamed)
        assert "can't be renamed" in str(e.value)
        with pytest.raises(Exception) as e:
            proxy_client.create_table(idl.hive.Table(dbName=shop, tableName="rest_orders", parameters={}, sd=renamed.sd))
        assert "is read-only" in str(e.value)
        assert ids(direct.load_table(f"{NAMESPACE}.{orders}")) == [1, 2, 7]
    finally:
        with HmsProxyClient(uri) as client:
            client.execute(f"DROP REMOTE TABLE IF EXISTS {shop}.rest_orders")
        proxy_client.drop_database(shop, True, True)


def test_other_writes_to_a_database_link_that_takes_commits_are_refused(lake, orders, uri):
    catalog = writer(uri)
    with pytest.raises(Exception) as e:
        catalog.create_table(f"{lake}.new_one", schema=SCHEMA)
    assert "read-only" in str(e.value)
    with pytest.raises(Exception) as e:
        catalog.rename_table(f"{lake}.{orders}", f"{lake}.renamed")
    assert "a table can't be renamed through the proxy" in str(e.value)
    assert [t for _, t in catalog.list_tables(lake)] == [orders]

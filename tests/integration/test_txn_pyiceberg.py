"""pyiceberg's HiveCatalog, a client no one here wrote, committing to Iceberg tables through the proxy.

What a commit of pyiceberg 0.12.0's HiveCatalog (pyiceberg/catalog/hive.py, Apache Thrift, a new
connection per `with self._client`, no set_ugi) sends, in order:

* `lock(LockRequest(component=[LockComponent(EXCLUSIVE, TABLE, dbname, tablename,
  isTransactional=True)], user, hostname))`: no txnid (a lock outside any transaction) and
  operationType left at its default UNSET, which a metastore with hive.in.test=true refuses;
* `check_lock(CheckLockRequest(lockid))`, only while the lock answers WAITING (retried with
  back-off, 4 tries by default);
* `get_table(db, table)`, then the new metadata JSON written to the table's location;
* `alter_table_with_environment_context(db, table, new_tbl, EnvironmentContext(
  {"DO_NOT_UPDATE_STATS": "true"}))`, new_tbl's parameters carrying metadata_location and
  previous_metadata_location (create_table instead, for a table that did not exist);
* `unlock(UnlockRequest(lockid))`, always (in a finally), on the same connection.

create_table makes no lock (create_table + get_table); load_table is a get_table; the
database's location comes from get_database. No open_txns, commit_txn or heartbeat: the lock's
id alone must reach the metastore that granted it, for the table's database.

The stack is the module's own: a primary and a federated Hive 2.3 metastore that grant
untyped locks (tests/support/txn_metastores.py), and a proxy in front with the federated
`sales` database writable as `waggle_sales`.
"""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyiceberg.catalog.hive import HiveCatalog

from hmsproxy.protocol import idl
from tests.support.federation import FEDERATED_WRITABLE, prefixed_config, stored_in
from tests.support.served import served
from tests.support.txn_metastores import accept_untyped_locks

APPENDS = 10
ROWS_PER_APPEND = 3
SCHEMA = pa.schema([("batch", pa.int32()), ("n", pa.int64())])


@pytest.fixture(scope="module")
def stack(metastore_factory, tmp_path_factory):
    """(catalog through the proxy, {name as the client sees it: (owning metastore, its name)}, metastores)."""
    primary, federated = metastore_factory(2, name="iceberg_hms")
    accept_untyped_locks(primary, federated)
    warehouse = tmp_path_factory.mktemp("iceberg-warehouse")
    (sales,) = FEDERATED_WRITABLE
    owners = {"lake": (primary, "lake"), f"waggle_{sales}": (federated, sales)}
    for ms, db in owners.values():
        client = ms.client()
        try:
            client.create_database(idl.hive.Database(name=db, locationUri=(warehouse / f"{db}.db").as_uri(), parameters={}))
        finally:
            client.close()
    config = prefixed_config(primary.uri, federated.uri)
    with served(stored_in(config, tmp_path_factory.mktemp("iceberg-store"))) as server:
        catalog = HiveCatalog("through-proxy", uri=server.uri, warehouse=warehouse.as_uri())
        yield catalog, owners, (primary, federated)


def batch(i: int) -> pa.Table:
    return pa.table({"batch": [i] * ROWS_PER_APPEND, "n": [i * 100 + k for k in range(ROWS_PER_APPEND)]}, schema=SCHEMA)


def rows(table: pa.Table) -> list[tuple[int, int]]:
    return sorted(zip(table.column("batch").to_pylist(), table.column("n").to_pylist()))


@pytest.mark.parametrize("database", ["lake", "waggle_sales"], ids=["primary", "federated"])
def test_ten_appends_commit_on_the_owning_metastore_and_read_back(stack, database):
    catalog, owners, metastores = stack
    owner, real_db = owners[database]
    table = catalog.create_table(f"{database}.events", schema=SCHEMA)
    committed = []
    for i in range(APPENDS):
        table.append(batch(i))
        committed.append(table.metadata_location)

    reread = catalog.load_table(f"{database}.events")
    assert reread.metadata_location == committed[-1]
    snapshots = reread.snapshots()
    assert [s.summary.operation.value for s in snapshots] == ["append"] * APPENDS
    assert [s.parent_snapshot_id for s in snapshots[1:]] == [s.snapshot_id for s in snapshots[:-1]]
    # Each snapshot holds the appends up to its own, the last all ten.
    for k, snapshot in enumerate(snapshots):
        expected = [row for i in range(k + 1) for row in rows(batch(i))]
        assert rows(reread.scan(snapshot_id=snapshot.snapshot_id).to_arrow()) == expected

    client = owner.client()
    try:
        params = client.get_table(real_db, "events").parameters
    finally:
        client.close()
    assert (params["metadata_location"], params["previous_metadata_location"]) == (committed[-1], committed[-2])
    for ms in metastores:  # every lock released, on the metastore that granted it and anywhere else
        client = ms.client()
        try:
            assert client.show_locks(idl.hive.ShowLocksRequest()).locks == [], ms.name
        finally:
            client.close()

"""Calls naming several databases: each must live on the first one's metastore, and each is access-checked.

`lock` names one database per component, `add_partitions` one per partition and
`exchange_partition` a second one in `dest_db`. Before, only the first was looked at:
a lock could reach a metastore for a database it was never asked about.
"""

from __future__ import annotations

import pytest
from thriftpy2.thrift import TApplicationException

from hmsproxy.protocol import idl
from hmsproxy.routing.methods import METHOD_SPECS
from hmsproxy.testing import FakeMetastore, database, partition, table
from tests.support.fake_handlers import call, fake_federation

hive = idl.hive


@pytest.fixture
def metastores():
    primary, waggle = FakeMetastore("primary"), FakeMetastore("waggle")
    for m, db in ((primary, "shop"), (primary, "other"), (waggle, "sales"), (waggle, "hr")):
        m.create_database(database(db))
        m.create_table(table(db, "t", partition_keys=("ds",)))
    return primary, waggle


@pytest.fixture
def handler(tmp_path, metastores):
    h = fake_federation(tmp_path, *metastores)
    yield h
    h.close()


def lock(*dbs):
    components = [hive.LockComponent(type=3, level=3, dbname=db, tablename="t") for db in dbs]
    return {"rqst": hive.LockRequest(component=components, user="u", hostname="h")}


def test_lock_calls_are_writes():
    assert all(METHOD_SPECS[m].writes for m in ("lock", "unlock", "check_lock"))


def test_a_lock_across_metastores_is_refused_before_any_metastore_sees_it(handler, metastores):
    # lock declares only transaction exceptions; the refusal arrives in the first that has a message.
    with pytest.raises(hive.NoSuchTxnException, match="needs all its databases on one metastore: 'waggle_sales'"):
        call(handler, "lock", **lock("shop", "waggle_sales"))
    assert all(m.calls_to("lock") == [] for m in metastores)


def test_every_component_of_a_lock_is_access_checked(handler, metastores):
    # waggle may write only `sales` (writable-database-white-list): `hr` as the second component is refused.
    with pytest.raises(hive.NoSuchTxnException, match="writes to database 'waggle_hr' are not allowed"):
        call(handler, "lock", **lock("waggle_sales", "waggle_hr"))
    assert metastores[1].calls_to("lock") == []
    # Two databases of the writable primary: the lock reaches the primary (whose fake has no lock calls).
    with pytest.raises(TApplicationException, match="Invalid method name: 'lock'"):
        call(handler, "lock", **lock("shop", "other"))
    assert [c.args.rqst.component[1].dbname for c in metastores[0].calls_to("lock")] == ["other"]


def test_partitions_of_several_databases_must_share_a_metastore(handler, metastores):
    parts = [partition("shop", "t", ["1"]), partition("waggle_sales", "t", ["1"])]
    with pytest.raises(hive.MetaException, match="'waggle_sales' is not on 'primary'"):
        call(handler, "add_partitions", new_parts=parts)
    assert metastores[0].calls_to("add_partitions") == []


def test_exchange_partition_needs_both_databases_on_one_metastore(handler):
    with pytest.raises(hive.MetaException, match="needs all its databases on one metastore"):
        call(
            handler,
            "exchange_partition",
            partitionSpecs={"ds": "1"},
            source_db="shop",
            source_table_name="t",
            dest_db="waggle_sales",
            dest_table_name="t",
        )

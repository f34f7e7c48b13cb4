"""Transactions and locks through the proxy on real Hive 2.3 metastores: every id reaches its metastore.

The session's proxy serves the primary and the federated metastore `waggle_` (its `sales` database is
writable). A client does what Hive's DbTxnManager does (open_txns, lock with the transaction, check,
heartbeat, commit), and the locks must be the federated metastore's: visible there with its own ids,
released there. The dev metastores run with hive.in.test, which refuses locks without an operation type:
every component here names one, as Hive's own clients do.
"""

from __future__ import annotations

import contextlib
import uuid

import pytest
import thriftpy2.rpc

from hmsproxy.features.transactions.ids import SLOT_SHIFT
from hmsproxy.protocol import idl
from hmsproxy.testing import table

hive = idl.hive


@contextlib.contextmanager
def client_of(port: int):
    client = thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", port, timeout=60_000)
    try:
        yield client
    finally:
        client.close()


def open_txn(client, user: str = "alice") -> int:
    return client.open_txns(hive.OpenTxnRequest(num_txns=1, user=user, hostname="test-host")).txn_ids[0]


def lock_request(db: str, tbl: str, txnid: int | None = None, kind=hive.LockType.EXCLUSIVE, operation=hive.DataOperationType.UPDATE):
    component = hive.LockComponent(type=kind, level=hive.LockLevel.TABLE, dbname=db, tablename=tbl, operationType=operation)
    return hive.LockRequest(component=[component], txnid=txnid, user="alice", hostname="test-host")


def open_txn_ids(client) -> set[int]:
    return {t.id for t in client.get_open_txns_info().open_txns if t.state == hive.TxnState.OPEN}


@pytest.fixture(scope="module")
def tables(metastores, federated_dbs):
    """A table on the primary (default.txn_<tag>) and one on the federated metastore (sales.txn_<tag>)."""
    name = f"txn_{uuid.uuid4().hex[:8]}"
    for ms, db in ((metastores[0], "default"), (metastores[1], "sales")):
        with contextlib.closing(ms.client()) as c:
            c.create_table(table(db, name))
    return name


@pytest.mark.parametrize("where", ["primary", "federated"])
def test_open_lock_check_heartbeat_commit(proxy, metastores, tables, where):
    client_db, backend, backend_db = (
        ("default", metastores[0], "default") if where == "primary" else ("waggle_sales", metastores[1], "sales")
    )
    with client_of(proxy.port) as c, contextlib.closing(backend.client()) as direct:
        txn = open_txn(c)
        assert txn in open_txn_ids(c)
        lock = c.lock(lock_request(client_db, tables, txn))
        assert lock.state == hive.LockState.ACQUIRED
        # The lock is the owning metastore's: it shows it under its own names and ids.
        held = [e for e in direct.show_locks(hive.ShowLocksRequest()).locks if e.tablename == tables]
        assert [(e.dbname, e.state) for e in held] == [(backend_db, hive.LockState.ACQUIRED)]
        if where == "federated":
            assert lock.lockid >> SLOT_SHIFT > 0, "a federated metastore's lock id carries its slot"
            assert held[0].lockid == lock.lockid & ((1 << SLOT_SHIFT) - 1)
            assert held[0].txnid != txn or held[0].txnid in open_txn_ids(direct)
        else:
            assert held[0].lockid == lock.lockid and held[0].txnid == txn
        # Through the proxy: the client's names and ids.
        seen = [e for e in c.show_locks(hive.ShowLocksRequest()).locks if e.tablename == tables]
        assert [(e.dbname, e.lockid, e.txnid) for e in seen] == [(client_db, lock.lockid, txn)]
        assert c.check_lock(hive.CheckLockRequest(lockid=lock.lockid, txnid=txn)).state == hive.LockState.ACQUIRED
        c.heartbeat(hive.HeartbeatRequest(lockid=lock.lockid, txnid=txn))
        assert txn in open_txn_ids(c), "open transactions are merged, in the client's ids"
        c.commit_txn(hive.CommitTxnRequest(txnid=txn))
        assert not [e for e in direct.show_locks(hive.ShowLocksRequest()).locks if e.tablename == tables]
        assert txn not in open_txn_ids(c)
        assert txn in c.heartbeat_txn_range(hive.HeartbeatTxnRangeRequest(min=txn, max=txn)).nosuch


@pytest.mark.parametrize("where", ["primary", "federated"])
def test_abort_releases_the_locks(proxy, metastores, tables, where):
    client_db, backend = ("default", metastores[0]) if where == "primary" else ("waggle_sales", metastores[1])
    with client_of(proxy.port) as c, contextlib.closing(backend.client()) as direct:
        first, second = open_txn(c), open_txn(c)
        c.lock(lock_request(client_db, tables, first, kind=hive.LockType.SHARED_READ, operation=hive.DataOperationType.SELECT))
        c.lock(lock_request(client_db, tables, second, kind=hive.LockType.SHARED_READ, operation=hive.DataOperationType.SELECT))
        assert len([e for e in direct.show_locks(hive.ShowLocksRequest()).locks if e.tablename == tables]) == 2
        c.abort_txn(hive.AbortTxnRequest(txnid=first))
        c.abort_txns(hive.AbortTxnsRequest(txn_ids=[second]))
        assert not [e for e in direct.show_locks(hive.ShowLocksRequest()).locks if e.tablename == tables]
        with pytest.raises(hive.TxnAbortedException, match=f"txnid:{first}\\b"):
            c.commit_txn(hive.CommitTxnRequest(txnid=first))


def test_a_lock_without_transaction_is_checked_and_released_where_it_was_taken(proxy, metastores, tables):
    """pyiceberg's HiveCatalog: lock, check_lock, unlock, no transaction (the issue's NoSuchLockException)."""
    with client_of(proxy.port) as c, contextlib.closing(metastores[1].client()) as direct:
        for _ in range(2):
            lock = c.lock(lock_request("waggle_sales", tables))
            assert c.check_lock(hive.CheckLockRequest(lockid=lock.lockid)).state == hive.LockState.ACQUIRED
            c.unlock(hive.UnlockRequest(lockid=lock.lockid))
            assert not [e for e in direct.show_locks(hive.ShowLocksRequest()).locks if e.tablename == tables]
        # The NoSuchLockException came from checking on the wrong metastore; a lock that is gone
        # is reported by its own, in the client's id (Hive's unlock of a gone lock is a no-op).
        with pytest.raises(hive.NoSuchLockException, match=f"lockid:{lock.lockid}"):
            c.check_lock(hive.CheckLockRequest(lockid=lock.lockid))


def test_a_second_client_waits_for_an_exclusive_lock(proxy, tables):
    with client_of(proxy.port) as first, client_of(proxy.port) as second:
        t1, t2 = open_txn(first), open_txn(second)
        insert = hive.DataOperationType.INSERT  # two UPDATEs of one table: the second aborts at commit
        held = first.lock(lock_request("waggle_sales", tables, t1, operation=insert))
        assert held.state == hive.LockState.ACQUIRED
        waiting = second.lock(lock_request("waggle_sales", tables, t2, operation=insert))
        assert waiting.state == hive.LockState.WAITING
        assert second.check_lock(hive.CheckLockRequest(lockid=waiting.lockid, txnid=t2)).state == hive.LockState.WAITING
        first.commit_txn(hive.CommitTxnRequest(txnid=t1))
        assert second.check_lock(hive.CheckLockRequest(lockid=waiting.lockid, txnid=t2)).state == hive.LockState.ACQUIRED
        second.commit_txn(hive.CommitTxnRequest(txnid=t2))


def test_heartbeats_on_another_connection_reach_the_transactions_metastore(proxy, metastores, tables):
    """Hive's heartbeat thread uses a connection of its own."""
    with client_of(proxy.port) as c, client_of(proxy.port) as beats:
        txn = open_txn(c)
        beats.heartbeat(hive.HeartbeatRequest(txnid=txn))  # before any lock: the primary's transaction
        lock = c.lock(lock_request("waggle_sales", tables, txn))
        beats.heartbeat(hive.HeartbeatRequest(txnid=txn))
        beats.heartbeat(hive.HeartbeatRequest(lockid=lock.lockid, txnid=txn))
        answer = beats.heartbeat_txn_range(hive.HeartbeatTxnRangeRequest(min=txn, max=txn))
        assert (set(answer.aborted), set(answer.nosuch)) == (set(), set())
        c.commit_txn(hive.CommitTxnRequest(txnid=txn))
        answer = beats.heartbeat_txn_range(hive.HeartbeatTxnRangeRequest(min=txn, max=txn))
        assert txn in answer.nosuch


def test_a_transaction_crossing_metastores_is_refused_naming_both(proxy, tables):
    with client_of(proxy.port) as c:
        txn = open_txn(c)
        c.lock(lock_request("waggle_sales", tables, txn))
        with pytest.raises(hive.NoSuchTxnException, match="metastore 'waggle'.*metastore 'primary'"):
            c.lock(lock_request("default", tables, txn))
        c.commit_txn(hive.CommitTxnRequest(txnid=txn))
        txn = open_txn(c)
        c.lock(lock_request("default", tables, txn))
        with pytest.raises(hive.NoSuchTxnException, match="metastore 'primary'.*metastore 'waggle'"):
            c.lock(lock_request("waggle_sales", tables, txn))
        c.abort_txn(hive.AbortTxnRequest(txnid=txn))


def test_a_shared_read_lock_on_a_read_only_database_is_allowed_a_write_lock_is_not(proxy, metastores, federated_dbs):
    name = f"ro_{uuid.uuid4().hex[:8]}"
    with contextlib.closing(metastores[1].client()) as direct:
        direct.create_table(table("hr", name))
    with client_of(proxy.port) as c:
        read = c.lock(lock_request("waggle_hr", name, kind=hive.LockType.SHARED_READ, operation=hive.DataOperationType.SELECT))
        c.unlock(hive.UnlockRequest(lockid=read.lockid))
        with pytest.raises(hive.NoSuchTxnException, match="writes to database 'waggle_hr' are not allowed"):
            c.lock(lock_request("waggle_hr", name))

"""When a metastore aborts, restarts or goes away under a transaction bound to it.

The client must hear what it would hear from that metastore directly (TxnAbortedException,
NoSuchLockException), in its own ids; a metastore that is down fails only its own transactions.
"""

from __future__ import annotations

import contextlib
import time
import uuid

import pytest

from hmsproxy.protocol import idl
from hmsproxy.testing import table
from tests.integration.test_transactions import client_of, lock_request, open_txn
from tests.support.federation import prefixed_config
from tests.support.served import served

hive = idl.hive


@pytest.fixture(scope="module")
def flaky(metastore_factory, tmp_path_factory):
    """A federated metastore of this module's own (stopped and restarted here), with sales.t."""
    (ms,) = metastore_factory(1, name="txn_flaky")
    with contextlib.closing(ms.client()) as c:
        location = (tmp_path_factory.mktemp("flaky") / "sales.db").as_uri()
        c.create_database(hive.Database(name="sales", description=None, locationUri=location, parameters={}))
        c.create_table(table("sales", "t"))
    return ms


@pytest.fixture(scope="module")
def proxy_port(metastores, flaky):
    with served(prefixed_config(metastores[0].uri, flaky.uri)) as server:
        yield server.port


@pytest.fixture(scope="module")
def primary_table(metastores):
    name = f"txf_{uuid.uuid4().hex[:8]}"
    with contextlib.closing(metastores[0].client()) as c:
        c.create_table(table("default", name))
    return name


def real_txn_of_lock(ms) -> int:
    with contextlib.closing(ms.client()) as direct:
        [held] = [e for e in direct.show_locks(hive.ShowLocksRequest()).locks if e.tablename == "t"]
    return held.txnid


def test_a_transaction_its_metastore_aborted_reports_it_in_the_clients_id(proxy_port, flaky):
    with client_of(proxy_port) as c:
        txn = open_txn(c)
        lock = c.lock(lock_request("waggle_sales", "t", txn))
        with contextlib.closing(flaky.client()) as direct:  # as its timeout reaper would
            direct.abort_txn(hive.AbortTxnRequest(txnid=real_txn_of_lock(flaky)))
        with pytest.raises(hive.TxnAbortedException, match=rf"txnid:{txn}\b"):
            c.heartbeat(hive.HeartbeatRequest(txnid=txn))
        with pytest.raises(hive.NoSuchLockException, match=rf"lockid:{lock.lockid}\b"):  # the abort released it
            c.heartbeat(hive.HeartbeatRequest(lockid=lock.lockid, txnid=txn))
        with pytest.raises(hive.TxnAbortedException, match=rf"txnid:{txn}\b"):
            c.commit_txn(hive.CommitTxnRequest(txnid=txn))
        with pytest.raises(hive.NoSuchLockException, match=rf"lockid:{lock.lockid}\b"):
            c.check_lock(hive.CheckLockRequest(lockid=lock.lockid))


def test_a_restarted_metastore_still_commits_its_transaction(proxy_port, flaky):
    with client_of(proxy_port) as c:
        txn = open_txn(c)
        c.lock(lock_request("waggle_sales", "t", txn))
        flaky.restart()  # the proxy's connection to it is gone: the commit goes again on a new one
        c.commit_txn(hive.CommitTxnRequest(txnid=txn))
    with contextlib.closing(flaky.client()) as direct:
        assert [e for e in direct.show_locks(hive.ShowLocksRequest()).locks if e.tablename == "t"] == []


def test_a_metastore_that_is_down_fails_only_its_own_transactions(proxy_port, flaky, metastores, primary_table):
    with client_of(proxy_port) as c:
        there, here = open_txn(c), open_txn(c)
        lock_there = c.lock(lock_request("waggle_sales", "t", there))
        c.lock(lock_request("default", primary_table, here))
        flaky.stop()
        try:
            # check_lock declares no MetaException: the proxy's "unavailable" arrives as its first declared one.
            with pytest.raises(hive.NoSuchTxnException, match="metastore 'waggle'.*unavailable"):
                c.check_lock(hive.CheckLockRequest(lockid=lock_there.lockid))
            with pytest.raises(hive.NoSuchTxnException, match="metastore 'waggle'.*unavailable"):
                c.commit_txn(hive.CommitTxnRequest(txnid=there))
            c.heartbeat(hive.HeartbeatRequest(txnid=here))
            c.commit_txn(hive.CommitTxnRequest(txnid=here))
        finally:
            flaky.start()
        # Back: its transaction waited there; the commit lands once the breaker lets calls through again.
        deadline = time.monotonic() + 60
        while True:
            try:
                c.commit_txn(hive.CommitTxnRequest(txnid=there))
                break
            except hive.NoSuchTxnException as e:
                if "unavailable" not in e.message or time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
    with contextlib.closing(flaky.client()) as direct:
        assert [e for e in direct.show_locks(hive.ShowLocksRequest()).locks if e.tablename == "t"] == []

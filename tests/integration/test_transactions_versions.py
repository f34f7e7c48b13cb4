"""Transactions, locks and write ids through the proxy on Hive 3.1 and 4.0 metastores, as primary and federated.

test_transactions.py does this on Hive 2.3; here each of 3.1 and 4.0 is the primary of one proxy and
federated (as h31_ / h40_, database mixed_sales writable, tables t_.*) under a 2.3 primary and under
the other one; each layout has a proxy and a store of its own (layout_proxy). 3.1 and 4.0 allocate
write ids for any table name (transactional or not, existing or not): the table here is transactional
anyway, as a writer's would be.
"""

from __future__ import annotations

import contextlib
import uuid

import pytest

from hmsproxy.features.transactions.ids import REAL_MASK, SLOT_SHIFT
from hmsproxy.protocol import idl
from hmsproxy.testing import table
from tests.integration.test_transactions import client_of, lock_request, open_txn, open_txn_ids
from tests.support.mixed_versions import create_transactional_table, federation, outrun, take_ids

hive = idl.hive

#: (version under test, the primary's version): each newer version as primary, and federated under the two others.
AS_PRIMARY = [("3.1", "3.1"), ("4.0", "4.0")]
FEDERATED = [("3.1", "2.3"), ("4.0", "2.3"), ("3.1", "4.0"), ("4.0", "3.1")]


def cases(pairs: list[tuple[str, str]]) -> list:
    return [pytest.param(v, p, id=f"{v}-primary" if v == p else f"{v}-under-{p}") for v, p in pairs]


def client_db(version: str, primary: str) -> str:
    return "mixed_sales" if version == primary else f"h{version.replace('.', '')}_mixed_sales"


#: Hive's ValidTxnList for "nothing open" (Long.MAX_VALUE as the lowest open transaction).
NONE_OPEN = 2**63 - 1


@pytest.fixture(scope="module")
def tbl(metastores_by_version):
    """mixed_sales.t_<tag> on every metastore (t_.* is what the federation maps)."""
    name = f"t_{uuid.uuid4().hex[:8]}"
    for version, ms in metastores_by_version.items():
        with contextlib.closing(ms.client()) as c:
            create_transactional_table(c, version, name)
    return name


def locks_on(client, name: str) -> list:
    return [e for e in client.show_locks(hive.ShowLocksRequest()).locks if e.tablename == name]


def txn_infos(client) -> dict:
    return {t.id: t for t in client.get_open_txns_info().open_txns}


def write_ids(client, full_name: str, valid_txn_list: str):
    (answer,) = client.get_valid_write_ids(
        hive.GetValidWriteIdsRequest(fullTableNames=[full_name], validTxnList=valid_txn_list)
    ).tblValidWriteIds
    return answer


#: How each version says a transaction is gone (Hive 4's heartbeat has a wording of its own).
NO_SUCH_TXN = {"3.1": "txnid:{}\\b", "4.0": "No such txn: {}\\b"}


def snapshot_now(client) -> str:
    """What a reader without a transaction sends: the metastore's open transactions now (Hive's
    ValidReadTxnList string: highWaterMark:minOpenTxn:open,...:aborted,...)."""
    answer = client.get_open_txns_info()
    open_ = sorted(t.id for t in answer.open_txns if t.state == hive.TxnState.OPEN)
    aborted = sorted(t.id for t in answer.open_txns if t.state == hive.TxnState.ABORTED)
    return f"{answer.txn_high_water_mark}:{open_[0] if open_ else NONE_OPEN}:{','.join(map(str, open_))}:{','.join(map(str, aborted))}"


@pytest.mark.parametrize(("version", "primary"), cases(AS_PRIMARY + FEDERATED))
def test_open_lock_check_heartbeat_commit(layout_proxy, metastores_by_version, tbl, version, primary):
    proxy, db = layout_proxy(primary), client_db(version, primary)
    with client_of(proxy.port) as c, contextlib.closing(metastores_by_version[version].client()) as direct:
        outrun(direct, c)
        txn = open_txn(c)
        lock = c.lock(lock_request(db, tbl, txn))
        assert lock.state == hive.LockState.ACQUIRED
        # The lock is the metastore's own: it shows it under its names and its ids.
        (held,) = locks_on(direct, tbl)
        assert (held.dbname, held.state, held.lockid) == ("mixed_sales", hive.LockState.ACQUIRED, lock.lockid & REAL_MASK)
        real = txn_infos(direct)[held.txnid]
        assert (real.state, real.user, real.hostname) == (hive.TxnState.OPEN, "alice", "test-host")
        if version == primary:
            assert (lock.lockid, held.txnid) == (held.lockid, txn), "the primary's ids are unchanged"
        else:
            assert lock.lockid >> SLOT_SHIFT > 0, "a federated metastore's lock id carries its slot"
            assert held.txnid > txn, "the proxy opened the transaction there (outrun: its id is past the client's)"
        # Through the proxy: the client's names and ids.
        seen = [e for e in c.show_locks(hive.ShowLocksRequest()).locks if e.tablename == tbl]
        assert [(e.dbname, e.lockid, e.txnid) for e in seen] == [(db, lock.lockid, txn)]
        assert c.check_lock(hive.CheckLockRequest(lockid=lock.lockid, txnid=txn)).state == hive.LockState.ACQUIRED
        c.heartbeat(hive.HeartbeatRequest(lockid=lock.lockid, txnid=txn))
        assert txn in open_txn_ids(c)
        c.commit_txn(hive.CommitTxnRequest(txnid=txn))
        assert not locks_on(direct, tbl)
        assert held.txnid not in txn_infos(direct), "committed on the metastore that held the lock"
        assert txn not in open_txn_ids(c)
        with pytest.raises(hive.NoSuchTxnException, match=NO_SUCH_TXN[version].format(txn)):
            c.heartbeat(hive.HeartbeatRequest(txnid=txn))


@pytest.mark.parametrize(("version", "primary"), cases(AS_PRIMARY + FEDERATED))
def test_abort_releases_the_locks(layout_proxy, metastores_by_version, tbl, version, primary):
    proxy, db = layout_proxy(primary), client_db(version, primary)
    read, select = hive.LockType.SHARED_READ, hive.DataOperationType.SELECT
    with client_of(proxy.port) as c, contextlib.closing(metastores_by_version[version].client()) as direct:
        outrun(direct, c)
        first, second = open_txn(c), open_txn(c)
        c.lock(lock_request(db, tbl, first, kind=read, operation=select))
        c.lock(lock_request(db, tbl, second, kind=read, operation=select))
        reals = {e.txnid for e in locks_on(direct, tbl)}
        assert len(reals) == 2
        c.abort_txn(hive.AbortTxnRequest(txnid=first))
        c.abort_txns(hive.AbortTxnsRequest(txn_ids=[second]))
        assert not locks_on(direct, tbl)
        infos = txn_infos(direct)
        assert {infos[r].state for r in reals if r in infos} <= {hive.TxnState.ABORTED}, "aborted there, not committed"
        with pytest.raises(hive.TxnAbortedException, match=f"txnid:{first}\\b"):
            c.commit_txn(hive.CommitTxnRequest(txnid=first))


@pytest.mark.parametrize(("version", "primary"), cases(FEDERATED))
def test_write_ids_are_the_metastores_in_the_clients_names(layout_proxy, metastores_by_version, tbl, version, primary):
    proxy, db = layout_proxy(primary), client_db(version, primary)
    full_name, backend_name = f"{db}.{tbl}", f"mixed_sales.{tbl}"
    with client_of(proxy.port) as c, client_of(proxy.port) as reader, contextlib.closing(metastores_by_version[version].client()) as direct:
        # The table's write ids count on its metastore: one allocated there directly first.
        other = direct.open_txns(hive.OpenTxnRequest(num_txns=1, user="bob", hostname="elsewhere")).txn_ids[0]
        rqst = hive.AllocateTableWriteIdsRequest(dbName="mixed_sales", tableName=tbl, txnIds=[other])
        (before,) = direct.allocate_table_write_ids(rqst).txnToWriteIds
        direct.commit_txn(hive.CommitTxnRequest(txnid=other))
        outrun(direct, c)
        open_before = open_txn_ids(direct)

        txn = open_txn(c)
        answer = c.allocate_table_write_ids(hive.AllocateTableWriteIdsRequest(dbName=db, tableName=tbl, txnIds=[txn]))
        write_id = before.writeId + 1
        assert [(p.txnId, p.writeId) for p in answer.txnToWriteIds] == [(txn, write_id)]
        again = c.allocate_table_write_ids(hive.AllocateTableWriteIdsRequest(dbName=db, tableName=tbl, txnIds=[txn]))
        assert [(p.txnId, p.writeId) for p in again.txnToWriteIds] == [(txn, write_id)], "one write id per transaction and table"

        # On the metastore: its write id, of a transaction open there (opened by the proxy: not the client's id).
        there = write_ids(direct, backend_name, snapshot_now(direct))
        assert (there.writeIdHighWaterMark, there.invalidWriteIds, there.minOpenWriteId) == (write_id, [write_id], write_id)
        (real,) = open_txn_ids(direct) - open_before
        assert real > txn
        # The writer's own snapshot (Hive caps it at its transaction and leaves itself out): its write is valid.
        own_snapshot = f"{txn}:{NONE_OPEN}::"
        own = write_ids(c, full_name, own_snapshot)
        assert (own.fullTableName, own.writeIdHighWaterMark, own.invalidWriteIds) == (full_name, write_id, [])
        # Another client's snapshot ending at the same mark (the primary committed the transaction's
        # empty twin, so it looks committed there) gets the metastore's own: the write is still open.
        assert reader.get_open_txns().txn_high_water_mark == txn
        seen = write_ids(reader, full_name, own_snapshot)
        assert (seen.fullTableName, seen.writeIdHighWaterMark, seen.invalidWriteIds) == (full_name, write_id, [write_id])

        c.commit_txn(hive.CommitTxnRequest(txnid=txn))
        there = write_ids(direct, backend_name, snapshot_now(direct))
        assert (there.writeIdHighWaterMark, there.invalidWriteIds) == (write_id, [])
        seen = write_ids(reader, full_name, f"{reader.get_open_txns().txn_high_water_mark}:{NONE_OPEN}::")
        assert (seen.fullTableName, seen.writeIdHighWaterMark, seen.invalidWriteIds) == (full_name, write_id, [])


@pytest.mark.parametrize("primary", ["3.1", "4.0"])
def test_a_federated_hive_2_3_metastore_has_no_write_ids(layout_proxy, tbl, primary):
    with client_of(layout_proxy(primary).port) as c:
        txn = open_txn(c)
        with pytest.raises(hive.MetaException, match="metastore 'h23' runs Hive 2.3, which has no write ids"):
            c.allocate_table_write_ids(hive.AllocateTableWriteIdsRequest(dbName="h23_mixed_sales", tableName=tbl, txnIds=[txn]))
        with pytest.raises(hive.MetaException, match="metastore 'h23' runs Hive 2.3, which has no write ids"):
            c.get_valid_write_ids(
                hive.GetValidWriteIdsRequest(fullTableNames=[f"h23_mixed_sales.{tbl}"], validTxnList=f"{txn}:{NONE_OPEN}::")
            )
        # Refused before anything happened: the transaction is still the primary's, and commits there.
        assert txn in open_txn_ids(c)
        c.commit_txn(hive.CommitTxnRequest(txnid=txn))
        assert txn not in open_txn_ids(c)


def take_ids_up_to(direct, last: int) -> None:
    """Open and abort transactions directly until the metastore's last id is at least `last`."""
    take_ids(direct, last - direct.get_open_txns_info().txn_high_water_mark)


def test_a_new_primarys_transaction_is_not_taken_for_an_old_binding(proxy, proxy_config, metastores, metastores_by_version, federated_dbs):
    name = f"t_{uuid.uuid4().hex[:8]}"
    with contextlib.closing(metastores[1].client()) as waggle, contextlib.closing(metastores_by_version["3.1"].client()) as direct:
        waggle.create_table(table("sales", name))
        create_transactional_table(direct, "3.1", name)
        with contextlib.closing(metastores[0].client()) as old_primary:
            take_ids_up_to(old_primary, direct.get_open_txns_info().txn_high_water_mark + 5)
        with client_of(proxy.port) as c:  # the session's layout: the 2.3 primary, 'waggle' federated
            old = open_txn(c)
            c.lock(lock_request("waggle_sales", name, old))
            c.commit_txn(hive.CommitTxnRequest(txnid=old))
        take_ids_up_to(direct, old - 1)
        with proxy_config(lambda base: federation(base, metastores_by_version, "3.1")), client_of(proxy.port) as c:
            txn = open_txn(c)
            assert txn == old, "the 3.1 primary's next id is the one the 2.3 primary's transaction was bound with"
            try:
                c.lock(lock_request("mixed_sales", name, txn))
                c.commit_txn(hive.CommitTxnRequest(txnid=txn))
            finally:
                with contextlib.suppress(hive.NoSuchTxnException, hive.TxnAbortedException):
                    direct.abort_txn(hive.AbortTxnRequest(txnid=txn))

"""Transaction ids that every proxy process understands: two workers, two proxies on one PostgreSQL
store, and a proxy SIGKILLed between `lock` and `commit_txn`.

A transaction bound to the federated metastore by one process is heartbeated, checked and committed
through another (or through the same one after a restart): the binding lives in the store, and the
commit must land on the federated metastore, releasing the lock there.
"""

from __future__ import annotations

import contextlib
import re
import signal
import subprocess
import uuid
from dataclasses import replace
from pathlib import Path

import pytest
import thriftpy2.rpc

from hmsproxy.config.model import StoreConfig
from hmsproxy.dev.ports import free_port
from hmsproxy.protocol import idl
from hmsproxy.testing import table
from tests.integration.test_cli import HMSPROXY, own_pid_file, stop, wait_for_line
from tests.integration.test_transactions import client_of, lock_request, open_txn
from tests.support.federation import federation_yaml, prefixed_config
from tests.support.served import served_many

hive = idl.hive


@pytest.fixture(scope="module")
def sales_table(metastores, federated_dbs):
    name = f"txp_{uuid.uuid4().hex[:8]}"
    with contextlib.closing(metastores[1].client()) as c:
        c.create_table(table("sales", name))
    return name


def locks_on(metastore, name: str) -> list:
    with contextlib.closing(metastore.client()) as direct:
        return [e for e in direct.show_locks(hive.ShowLocksRequest()).locks if e.tablename == name]


def open_on(metastore) -> set[int]:
    with contextlib.closing(metastore.client()) as direct:
        return {t.id for t in direct.get_open_txns_info().open_txns if t.state == hive.TxnState.OPEN}


def lock_here_commit_there(first, second, metastore, name: str) -> None:
    """Open and lock through `first`; check, heartbeat and commit through `second`."""
    txn = open_txn(first)
    lock = first.lock(lock_request("waggle_sales", name, txn))
    assert lock.state == hive.LockState.ACQUIRED
    [held] = locks_on(metastore, name)
    assert held.txnid in open_on(metastore)
    assert second.check_lock(hive.CheckLockRequest(lockid=lock.lockid, txnid=txn)).state == hive.LockState.ACQUIRED
    second.heartbeat(hive.HeartbeatRequest(lockid=lock.lockid, txnid=txn))
    second.commit_txn(hive.CommitTxnRequest(txnid=txn))
    assert locks_on(metastore, name) == []
    assert held.txnid not in open_on(metastore)


def serve(cfg, *extra: str):
    serving = [*HMSPROXY, "serve", "--config", str(cfg), *own_pid_file(Path(cfg)), *extra]
    return subprocess.Popen(serving, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def federation_file(tmp_path, metastores, port: int):
    cfg = tmp_path / "hmsproxy.yml"
    values = dict(port=port, primary_uri=metastores[0].uri, federated_uri=metastores[1].uri, state_dir=tmp_path)
    cfg.write_text(federation_yaml(prefix="waggle_", writable=("sales",), **values))
    return cfg


def test_two_workers_share_transaction_ids(tmp_path, metastores, sales_table):
    port = free_port()
    proc = serve(federation_file(tmp_path, metastores, port), "--workers", "2")
    try:
        for _ in range(2):
            wait_for_line(proc, f"serving thrift://127.0.0.1:{port}", 60)
        by_worker: dict[int, object] = {}
        spare = []
        for _ in range(40):  # each new connection lands on one worker: keep one on each
            c = thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", port, timeout=60_000)
            pid = int(re.search(r"\(pid (\d+)\)", c.getStatusDetails()).group(1))
            if pid in by_worker:
                spare.append(c)
            else:
                by_worker[pid] = c
            if len(by_worker) == 2:
                break
        try:
            assert len(by_worker) == 2, "both workers answered"
            first, second = by_worker.values()
            lock_here_commit_there(first, second, metastores[1], sales_table)
            lock_here_commit_there(second, first, metastores[1], sales_table)
        finally:
            for c in [*by_worker.values(), *spare]:
                c.close()
    finally:
        stop(proc)


def test_two_proxies_on_one_postgresql_store_share_transaction_ids(pg_url, metastores, sales_table):
    config = replace(prefixed_config(metastores[0].uri, metastores[1].uri), store=StoreConfig(pg_url))
    with served_many(config, 2) as servers, client_of(servers[0].port) as first, client_of(servers[1].port) as second:
        lock_here_commit_there(first, second, metastores[1], sales_table)
        lock_here_commit_there(second, first, metastores[1], sales_table)


def test_a_proxy_killed_between_lock_and_commit_loses_no_binding(tmp_path, metastores, sales_table):
    port = free_port()
    cfg = federation_file(tmp_path, metastores, port)
    proc = serve(cfg)
    try:
        wait_for_line(proc, f"serving thrift://127.0.0.1:{port}", 60)
        with client_of(port) as c:
            txn = open_txn(c)
            lock = c.lock(lock_request("waggle_sales", sales_table, txn))
        [held] = locks_on(metastores[1], sales_table)
        stop(proc, signal.SIGKILL)
        proc = serve(cfg)
        wait_for_line(proc, f"serving thrift://127.0.0.1:{port}", 60)
        with client_of(port) as c:
            assert c.check_lock(hive.CheckLockRequest(lockid=lock.lockid, txnid=txn)).state == hive.LockState.ACQUIRED
            c.commit_txn(hive.CommitTxnRequest(txnid=txn))
        assert locks_on(metastores[1], sales_table) == []
        assert held.txnid not in open_on(metastores[1])
    finally:
        stop(proc)

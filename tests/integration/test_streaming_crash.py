"""A streaming writer SIGKILLed mid-transaction: nothing of it becomes visible, the metastore aborts its
transaction when it times out, and the next writer of the partition removes what it left.

The metastore here runs Hive's timeout reaper (hive.compactor.initiator.on starts the house keeper)
with a four-second transaction timeout, behind a proxy of this module's own.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from urllib.parse import urlparse

import pyarrow.parquet as pq
import pytest

from hmsproxy.protocol import idl
from hmsproxy.streaming import DelimitedInputWriter, HiveEndPoint
from hmsproxy.streaming.publish import STAGING, publishing
from hmsproxy.testing.builders import parquet_table
from tests.support.federation import primary_only_config
from tests.support.served import served

hive = idl.hive

REAPER = {
    "hive.compactor.initiator.on": "true",
    "hive.compactor.worker.threads": "0",
    "hive.txn.timeout": "4s",
    "hive.timedout.txn.reaper.start": "1s",
    "hive.timedout.txn.reaper.interval": "1s",
}


@pytest.fixture(scope="module")
def reaping_proxy(metastore_factory, tmp_path_factory):
    (ms,) = metastore_factory(1, name="stream_reaper", hive_conf=REAPER)
    warehouse = tmp_path_factory.mktemp("stream-crash")
    with contextlib.closing(ms.client()) as c:
        columns, keys = (("id", "int"), ("msg", "string")), (("ds", "string"),)
        c.create_table(parquet_table("default", "events", (warehouse / "events").as_uri(), columns=columns, partition_keys=keys))
    with served(primary_only_config(ms.uri)) as server:
        yield server


KILLED_WRITER = textwrap.dedent(
    """
    import os, signal, sys
    from hmsproxy.streaming import DelimitedInputWriter, HiveEndPoint
    from hmsproxy.streaming.batch import TransactionBatch

    real_call = TransactionBatch._call

    def call(self, method, *args, **kwargs):
        if method == "commit_txn":  # the files are staged; the commit never reaches the metastore
            print(self.current_transaction_id(), flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
        return real_call(self, method, *args, **kwargs)

    TransactionBatch._call = call
    ep = HiveEndPoint(sys.argv[1], "default", "events", ["2026-11-25"])
    batch = ep.new_connection(auto_create_partition=True).fetch_transaction_batch(2, DelimitedInputWriter(["id", "msg"], ",", ep))
    batch.begin_next_transaction()
    for i in range(100):
        batch.write(f"{i},lost {i}".encode())
    batch.commit()
    """
)


def visible_rows(location: str) -> list[tuple]:
    root = Path(urlparse(location).path)
    files = [p for p in root.iterdir() if p.is_file() and not p.name.startswith(("_", "."))]
    return sorted((r["id"], r["msg"]) for f in files for r in pq.read_table(f).to_pylist())


def test_a_killed_writer_leaves_nothing_visible_and_the_next_one_cleans_up(reaping_proxy):
    uri = f"thrift://127.0.0.1:{reaping_proxy.port}"
    proc = subprocess.run([sys.executable, "-c", KILLED_WRITER, uri], capture_output=True, text=True, timeout=300)
    assert proc.returncode == -9, proc.stderr
    txnid = int(proc.stdout.strip())
    ep = HiveEndPoint(uri, "default", "events", ["2026-11-25"])
    with ep.new_connection() as conn:
        location = conn.location(conn.ms)
        staged = Path(urlparse(location).path) / STAGING
        assert [p.name for p in staged.iterdir()] == [str(txnid)], "its files were staged"
        assert visible_rows(location) == []
        # The metastore aborts the dead writer's transaction and drops its batch's lock once they miss
        # their heartbeats (the lock, taken a moment after the transaction opened, may outlive it by that moment).
        deadline = time.monotonic() + 60
        while True:
            states = {t.id: t.state for t in conn.ms.call("get_open_txns_info").open_txns}
            locks = conn.ms.call("show_locks", hive.ShowLocksRequest(dbname="default", tablename="events")).locks or []
            if states.get(txnid) != hive.TxnState.OPEN and txnid not in publishing(lock.agentInfo for lock in locks):
                break
            assert time.monotonic() < deadline, "the transaction was never aborted, or its lock never dropped"
            time.sleep(1)
        batch = conn.fetch_transaction_batch(1, DelimitedInputWriter(["id", "msg"], ",", ep))
        batch.begin_next_transaction()  # the partition's next writer removes what the dead one left
        assert not staged.exists() or list(staged.iterdir()) == []
        batch.write(b"1,kept")
        batch.commit()
        batch.close()
        assert visible_rows(location) == [(1, "kept")]


def test_an_idle_batch_is_kept_alive_by_its_heartbeats(reaping_proxy):
    """The metastore aborts after four silent seconds; the batch heartbeats every two on its own."""
    uri = f"thrift://127.0.0.1:{reaping_proxy.port}"
    ep = HiveEndPoint(uri, "default", "events", ["2026-11-24"])
    with ep.new_connection(auto_create_partition=True) as conn:
        batch = conn.fetch_transaction_batch(2, DelimitedInputWriter(["id", "msg"], ",", ep))
        assert batch.heartbeats.interval_s == 2.0
        batch.begin_next_transaction()
        batch.write(b"1,slow")
        time.sleep(10)  # well past the timeout: only the heartbeats keep it open
        batch.commit()
        batch.begin_next_transaction()  # the unused one was heartbeated too
        batch.write(b"2,later")
        batch.commit()
        batch.close()
        assert visible_rows(conn.location(conn.ms)) == [(1, "slow"), (2, "later")]


def test_a_writer_publishing_right_now_is_left_alone_by_the_next_one(reaping_proxy, monkeypatch):
    """Writer A's commit is marked and renaming when writer B's first transaction recovers the partition:
    A's batch lock names its transactions, so B leaves A's files to A (CI once saw B rename them first)."""
    import threading

    from hmsproxy.streaming import publish

    uri = f"thrift://127.0.0.1:{reaping_proxy.port}"
    ep = HiveEndPoint(uri, "default", "events", ["2026-11-23"])
    renaming, recovered = threading.Event(), threading.Event()
    real_publish, a_thread = publish._publish, []

    def paused_publish(filesystem, staging, root):
        if threading.current_thread() in a_thread:  # A: marked, about to rename; B recovers now
            renaming.set()
            assert recovered.wait(60)
        return real_publish(filesystem, staging, root)

    monkeypatch.setattr(publish, "_publish", paused_publish)
    errors = []

    def writer_a() -> None:
        try:
            with ep.new_connection(auto_create_partition=True) as conn:
                batch = conn.fetch_transaction_batch(1, DelimitedInputWriter(["id", "msg"], ",", ep))
                batch.begin_next_transaction()
                batch.write(b"1,from a")
                batch.commit()
                batch.close()
        except Exception as e:  # reported in the test's thread
            errors.append(e)

    a = threading.Thread(target=writer_a)
    a_thread.append(a)
    a.start()
    assert renaming.wait(60), f"writer A never reached its rename: {errors}"
    try:
        with ep.new_connection() as conn:
            batch = conn.fetch_transaction_batch(1, DelimitedInputWriter(["id", "msg"], ",", ep))
            batch.begin_next_transaction()  # recovers the partition while A renames
            recovered.set()
            batch.write(b"2,from b")
            batch.commit()
            batch.close()
            location = conn.location(conn.ms)
    finally:
        recovered.set()
        a.join(60)
    assert not errors, errors
    assert visible_rows(location) == [(1, "from a"), (2, "from b")]

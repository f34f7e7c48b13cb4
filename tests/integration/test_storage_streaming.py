"""Streaming transactions on real stores (s3proxy, an HDFS minicluster) through the proxy, without
Spark, and the CLIs' one-line errors on a store with wrong keys or no server.

- A writer SIGKILLed before the metastore's commit: nothing of it is ever visible, and the next
  writer deletes its staging once the metastore has aborted the transaction (its timeout, 4 s here).
- A writer SIGKILLed mid-publish (committed and marked, one bucket file moved): the next writer
  finishes the publish, every row exactly once.
- A reader listing and reading the location over and over while a transaction commits (its
  publish slowed down so the reader certainly looks in the middle) and while one aborts.
- `hmsproxy stream`, `hmsproxy lookup` and `hmsproxy job compact`, `skew-layout` and `rebuild-index`
  with wrong S3 keys and with an S3 endpoint on a closed port: exit 1, one line naming the location and what to set, within 10 s,
  nothing written, the metastore unchanged.

The metastore runs Hive's timeout reaper (as tests/integration/test_streaming_crash.py's) with S3A
on its classpath; one for the module.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from hmsproxy.files.storage import ArrowStorage, arrow_filesystem, data_files
from hmsproxy.protocol import idl
from hmsproxy.streaming import DelimitedInputWriter, HiveEndPoint
from hmsproxy.streaming.publish import STAGING, publishing
from hmsproxy.testing.builders import parquet_table
from tests.integration.test_streaming_crash import REAPER
from tests.support.federation import primary_only_config
from tests.support.served import served
from tests.support.storage_stack import s3a_jars, site_xml
from tests.support.storage_stack import thrift_client as metastore

hive = idl.hive
HMSPROXY = str(Path(sys.executable).with_name("hmsproxy"))
DB = "stream_stores"
BUCKETS = 4


@pytest.fixture(scope="module")
def proxy(storage_conf, metastore_factory):
    conf = {**storage_conf.s3a, **REAPER}
    (ms,) = metastore_factory(1, name="stream_stores_hms", extra_classpath=[str(j) for j in s3a_jars()], hive_conf=conf)
    with contextlib.closing(ms.client()) as c:
        c.create_database(hive.Database(name=DB, description="", locationUri=None, parameters={}))
    try:
        with served(primary_only_config(ms.uri)) as server:
            yield server
    finally:
        ms.stop()


def make_table(proxy, storage_conf, store: str, buckets: int = 0) -> tuple[str, str]:
    """A Parquet table (id INT, msg STRING) on `store`, bucketed by id when `buckets`; (name, location)."""
    name = f"t_{uuid.uuid4().hex[:8]}"
    location = storage_conf.root(store, f"{DB}/{name}")
    table = parquet_table(DB, name, location, columns=(("id", "int"), ("msg", "string")))
    if buckets:
        table.sd.bucketCols, table.sd.numBuckets = ["id"], buckets
    with metastore(proxy) as ms:
        ms.create_table(table)
    return name, location


def visible_rows(location: str) -> list[tuple]:
    """What a reader sees: the location's data files (hidden names skipped), read whole."""
    rows = []
    for entry in data_files(ArrowStorage().list(location)):
        filesystem, path = arrow_filesystem(entry.path)
        rows.extend((r["id"], r["msg"]) for r in pq.read_table(path, filesystem=filesystem).to_pylist())
    return sorted(rows)


def staged(location: str) -> list[str]:
    return sorted(e.name for e in ArrowStorage().list(f"{location}/{STAGING}") if e.is_dir)


# The child writes 100 rows in one transaction and dies by SIGKILL at the point `argv[3]` names.
KILLED_WRITER = textwrap.dedent(
    """
    import os, signal, sys
    from hmsproxy.streaming import DelimitedInputWriter, HiveEndPoint, publish
    from hmsproxy.streaming.batch import TransactionBatch

    uri, table, where = sys.argv[1:4]
    if where == "before-commit":  # the files are staged; the commit never reaches the metastore
        real_call = TransactionBatch._call

        def call(self, method, *args, **kwargs):
            if method == "commit_txn":
                print(self.current_transaction_id(), flush=True)
                os.kill(os.getpid(), signal.SIGKILL)
            return real_call(self, method, *args, **kwargs)

        TransactionBatch._call = call
    else:  # "mid-publish": committed and marked; dies right after the first file moved into place
        real_publish = publish._publish

        class DiesAfterOneMove:
            def __init__(self, filesystem):
                self.filesystem = filesystem

            def __getattr__(self, name):
                return getattr(self.filesystem, name)

            def move(self, source, target):
                self.filesystem.move(source, target)
                print("moved", flush=True)
                os.kill(os.getpid(), signal.SIGKILL)

        publish._publish = lambda filesystem, staging, root: real_publish(DiesAfterOneMove(filesystem), staging, root)
    ep = HiveEndPoint(uri, "DATABASE", table)
    batch = ep.new_connection().fetch_transaction_batch(2, DelimitedInputWriter(["id", "msg"], ",", ep))
    batch.begin_next_transaction()
    batch.write_many([f"{i},lost {i}".encode() for i in range(100)])
    batch.commit()
    """
).replace("DATABASE", DB)


def kill_a_writer(proxy, table: str, where: str) -> str:
    done = subprocess.run([sys.executable, "-c", KILLED_WRITER, proxy.uri, table, where], capture_output=True, text=True, timeout=300)
    assert done.returncode == -9, done.stderr[-3000:]
    return done.stdout.strip()


def wait_until_the_metastore_forgets(proxy, table: str, txnid: int | None) -> None:
    """The reaper aborts the dead writer's open transaction and drops its batch's lock (heartbeats missed)."""
    deadline = time.monotonic() + 60
    while True:
        with metastore(proxy) as ms:
            states = {t.id: t.state for t in ms.get_open_txns_info().open_txns}
            locks = ms.show_locks(hive.ShowLocksRequest(dbname=DB, tablename=table)).locks or []
        held = publishing(lock.agentInfo for lock in locks)
        if (txnid is None or states.get(txnid) != hive.TxnState.OPEN) and not held:
            return
        assert time.monotonic() < deadline, "the transaction was never aborted, or its lock never dropped"
        time.sleep(1)


def write_one(proxy, table: str, rows: list[str]) -> None:
    ep = HiveEndPoint(proxy.uri, DB, table)
    with ep.new_connection() as conn:
        batch = conn.fetch_transaction_batch(1, DelimitedInputWriter(["id", "msg"], ",", ep))
        batch.begin_next_transaction()  # recovers the location first
        batch.write_many([r.encode() for r in rows])
        batch.commit()
        batch.close()


@pytest.mark.parametrize("store", ["s3", "hdfs"])
def test_writers_killed_before_the_commit_and_mid_publish(store, proxy, storage_conf):
    """Two tables, one wait for the metastore's reaper. Killed before the commit: never visible, the next
    writer deletes its staging. Killed mid-publish (committed, one bucket's file moved): the next writer
    moves the rest, each row once."""
    before, before_at = make_table(proxy, storage_conf, store)
    txnid = int(kill_a_writer(proxy, before, "before-commit"))
    assert staged(before_at) == [str(txnid)]  # its file was staged...
    assert visible_rows(before_at) == []  # ...where no reader looks

    mid, mid_at = make_table(proxy, storage_conf, store, buckets=BUCKETS)
    assert kill_a_writer(proxy, mid, "mid-publish") == "moved"
    partly = visible_rows(mid_at)  # committed in the metastore; one bucket's file moved before the kill
    assert partly and len(partly) < 100 and len(data_files(ArrowStorage().list(mid_at))) == 1

    wait_until_the_metastore_forgets(proxy, before, txnid)
    wait_until_the_metastore_forgets(proxy, mid, None)
    assert visible_rows(before_at) == []
    write_one(proxy, before, ["1,kept"])
    assert staged(before_at) == []  # the next writer deleted the aborted transaction's staging
    assert visible_rows(before_at) == [(1, "kept")]
    write_one(proxy, mid, ["1000,next"])
    assert staged(mid_at) == []
    assert visible_rows(mid_at) == sorted([(i, f"lost {i}") for i in range(100)] + [(1000, "next")])


class Reader(threading.Thread):
    """Lists and reads the location as fast as it can: (started, finished, rows) per look."""

    def __init__(self, location: str):
        super().__init__(daemon=True)
        self.location, self.looks, self.stop, self.errors = location, [], threading.Event(), []

    def run(self) -> None:
        while not self.stop.is_set():
            started = time.monotonic()
            try:
                rows = visible_rows(self.location)
            except OSError as e:  # a file listed, then moved away under the read: not what we test
                self.errors.append(str(e))
                continue
            self.looks.append((started, time.monotonic(), rows))


@contextlib.contextmanager
def slow_publish(monkeypatch, pause_s: float):
    """Each move of a publish takes `pause_s` longer, so a reader looks in the middle of it."""
    from hmsproxy.streaming import publish

    real = publish._publish

    class SlowMoves:
        def __init__(self, filesystem):
            self.filesystem = filesystem

        def __getattr__(self, name):
            return getattr(self.filesystem, name)

        def move(self, source, target):
            time.sleep(pause_s)
            self.filesystem.move(source, target)

    monkeypatch.setattr(publish, "_publish", lambda filesystem, staging, root: real(SlowMoves(filesystem), staging, root))
    yield


@pytest.mark.parametrize("store, buckets", [("s3", 0), ("s3", BUCKETS), ("hdfs", 0)])
def test_a_reader_during_commit_and_abort_sees_nothing_early_and_whole_files(store, buckets, proxy, storage_conf, monkeypatch):
    table, location = make_table(proxy, storage_conf, store, buckets=buckets)
    rows = [(i, f"r{i}") for i in range(2000)]
    ep = HiveEndPoint(proxy.uri, DB, table)
    reader = Reader(location)
    with ep.new_connection() as conn, slow_publish(monkeypatch, 0.5):
        batch = conn.fetch_transaction_batch(2, DelimitedInputWriter(["id", "msg"], ",", ep))
        batch.begin_next_transaction()
        batch.write_many([f"{i},{m}".encode() for i, m in rows])
        reader.start()
        time.sleep(0.5)
        calling = time.monotonic()
        batch.commit()
        returned = time.monotonic()
        time.sleep(0.5)
        batch.begin_next_transaction()
        batch.write_many([f"{i},aborted".encode() for i in range(5000, 5100)])
        batch.abort()
        aborted = time.monotonic()
        time.sleep(0.5)
        reader.stop.set()
        reader.join(30)
        batch.close()
    looks = reader.looks
    before = [r for s, f, r in looks if f < calling]
    during = [r for s, f, r in looks if s >= calling and f <= returned]
    after = [r for s, f, r in looks if s > returned]
    assert before and during and after, (len(before), len(during), len(after), reader.errors[:3])
    assert all(r == [] for r in before)  # nothing before commit() was called
    assert all(r == rows for r in after)  # all after it returned; the aborted rows never
    assert [r for s, f, r in looks if s > aborted] and all(r == rows for s, f, r in looks if s > aborted)
    if not buckets:
        assert all(r in ([], rows) for r in during)  # one file: all of the transaction's rows or none
    else:  # a file per bucket, moved one after another: whole buckets appear, in turn
        from hmsproxy.streaming.buckets import bucket_of

        for r in during:
            seen = {bucket_of([i], ["int"], BUCKETS) for i, _ in r}
            assert r == sorted(x for x in rows if bucket_of([x[0]], ["int"], BUCKETS) in seen)
        assert any(r and r != rows for r in during)  # the reader did look between two buckets
    assert staged(location) == []


# -- bad input through the CLIs ---------------------------------------------------------------------


def conf_dir_with(tmp_path: Path, storage_conf, **changes: str) -> Path:
    conf = dict(storage_conf.s3a, **{k.replace("_", "."): v for k, v in changes.items()})
    (tmp_path / "core-site.xml").write_text(site_xml(conf))
    return tmp_path


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("fault", ["wrong-keys", "closed-port"])
def test_the_clis_on_s3_with_wrong_keys_or_no_server_fail_in_one_line(fault, proxy, storage_conf, tmp_path):
    name, location = make_table(proxy, storage_conf, "s3")
    if fault == "wrong-keys":
        conf_dir = conf_dir_with(tmp_path, storage_conf, fs_s3a_secret_key="wrong-secret")
        words = ["refused the keys", "fs.s3a.secret.key"]
    else:
        conf_dir = conf_dir_with(tmp_path, storage_conf, fs_s3a_endpoint=f"http://127.0.0.1:{closed_port()}")
        words = ["did not answer", "fs.s3a.endpoint"]
    env = dict(os.environ, HADOOP_CONF_DIR=str(conf_dir))
    table = f"{DB}.{name}"
    created = subprocess.run(  # with the right keys: the index is metastore-only, rebuild-index reads the base's files
        [HMSPROXY, "sql", "--uri", proxy.uri, "-e", f"CREATE INDEX idx ON TABLE {table} (id) AS 'COMPACT' WITH DEFERRED REBUILD"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert created.returncode == 0, created.stderr[-3000:]
    with metastore(proxy) as ms:
        before = ms.get_table(DB, name)
    for argv, stdin in (
        (["stream", table, "--uri", proxy.uri], "1,a\n2,b\n"),
        (["lookup", table, "--uri", proxy.uri, "--where", "id=1"], ""),
        (["job", "compact", table, "--uri", proxy.uri], ""),
        (["job", "skew-layout", table, "--detect", "--columns", "id", "--uri", proxy.uri], ""),
        (["job", "rebuild-index", f"{table}.idx", "--uri", proxy.uri], ""),
    ):
        started = time.monotonic()
        done = subprocess.run([HMSPROXY, *argv], input=stdin, capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
        took = time.monotonic() - started
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 1, (argv, done.stderr[-3000:])
        assert len(lines) == 1 and location in lines[0] and all(w in lines[0] for w in words), (argv, done.stderr[-3000:])
        assert took < 10, (argv, took)
    assert visible_rows(location) == [] and staged(location) == []  # nothing written (read with the right keys)
    with metastore(proxy) as ms:
        after = ms.get_table(DB, name)
        assert ms.get_open_txns_info().open_txns is None or all(t.state != hive.TxnState.OPEN for t in ms.get_open_txns_info().open_txns)
    assert after.sd.location == before.sd.location and after.parameters == before.parameters

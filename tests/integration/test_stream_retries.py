"""`hmsproxy stream` when time and the metastore misbehave: an idle input commits on time, a batch's
close aborts its unused transactions, and a metastore frozen, killed and restarted mid-run behind the
proxy (its breaker opens, then closes) costs retries, never a row nor a duplicate.

The metastore is this module's own (it is killed here), behind a proxy of this module's own.
"""

from __future__ import annotations

import contextlib
import subprocess
import threading
import time
import uuid
from pathlib import Path
from urllib.parse import urlparse

import pyarrow.parquet as pq
import pytest

from hmsproxy.protocol import idl
from hmsproxy.streaming import DelimitedInputWriter, HiveEndPoint
from hmsproxy.testing.builders import parquet_table
from tests.integration.test_cli import HMSPROXY
from tests.integration.test_transactions import client_of
from tests.support.federation import primary_only_config
from tests.support.served import served
from tests.support.stopped import Stopper

hive = idl.hive

#: Bounds on waits that end much sooner unless something is broken.
PATIENCE_S = 60.0


@pytest.fixture(scope="module")
def outage(metastore_factory, tmp_path_factory):
    """(metastore, proxy, table name): a partitioned Parquet table (id int, msg string) by ds."""
    (ms,) = metastore_factory(1, name="stream_outage")
    name = f"events_{uuid.uuid4().hex[:6]}"
    warehouse = tmp_path_factory.mktemp("stream-outage")
    with contextlib.closing(ms.client()) as c:
        columns, keys = (("id", "int"), ("msg", "string")), (("ds", "string"),)
        c.create_table(parquet_table("default", name, (warehouse / name).as_uri(), columns=columns, partition_keys=keys))
    with served(primary_only_config(ms.uri)) as server:
        yield ms, server, name
    ms.stop()


def rows_through_the_proxy(server, table: str, ds: str) -> list[tuple]:
    """The partition's rows, as a reader finds them: its location asked of the proxy, its visible files read."""
    with client_of(server.port) as c:
        try:
            location = c.get_partition("default", table, [ds]).sd.location
        except hive.NoSuchObjectException:  # made by the stream's first transaction
            return []
    root = Path(urlparse(location).path)
    files = [p for p in root.iterdir() if p.is_file() and not p.name.startswith(("_", "."))]
    return sorted((r["id"], r["msg"]) for f in files for r in pq.read_table(f).to_pylist())


def start_stream(server, table: str, ds: str, *extra: str, cwd: Path) -> subprocess.Popen:
    command = [*HMSPROXY, "stream", f"default.{table}", "--uri", server.uri, "--partition", f"ds={ds}", *extra]
    err = open(cwd / f"stream-{ds}.err", "w")  # noqa: SIM115 - the child holds it; closed when the test ends
    return subprocess.Popen(command, stdin=subprocess.PIPE, stderr=err, stdout=subprocess.DEVNULL, cwd=cwd)


def send(proc: subprocess.Popen, ids: range) -> None:
    proc.stdin.write(b"".join(b"%d,row %d\n" % (i, i) for i in ids))
    proc.stdin.flush()


def finish(proc: subprocess.Popen, cwd: Path, ds: str) -> str:
    """Close the input, wait for the end; the stream's standard error."""
    proc.stdin.close()
    try:
        proc.wait(timeout=PATIENCE_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = (cwd / f"stream-{ds}.err").read_text()
    assert proc.returncode == 0, text
    return text


def wait_until(predicate, what: str, timeout_s: float = PATIENCE_S) -> float:
    """Seconds until predicate() held (polled every 50 ms)."""
    started = time.monotonic()
    while not predicate():
        assert time.monotonic() - started < timeout_s, f"{what}: not within {timeout_s} s"
        time.sleep(0.05)
    return time.monotonic() - started


def test_an_idle_stream_commits_what_it_holds_after_t_seconds(outage, tmp_path):
    ms, server, table = outage
    proc = start_stream(server, table, "idle", "--seconds-per-txn", "1", "--rows-per-txn", "1000", cwd=tmp_path)
    try:
        send(proc, range(3))  # far below --rows-per-txn, and then nothing: the input stays open
        waited = wait_until(lambda: len(rows_through_the_proxy(server, table, "idle")) == 3, "the idle commit")
        assert proc.poll() is None  # committed by the clock, not by the end of the input
        assert waited >= 1.0  # the lines were read after they were sent, and held --seconds-per-txn
        assert rows_through_the_proxy(server, table, "idle") == [(i, f"row {i}") for i in range(3)]
        send(proc, range(3, 5))
    finally:
        err = finish(proc, tmp_path, "idle")
    assert "commits 2" in err.splitlines()[-1]
    assert rows_through_the_proxy(server, table, "idle") == [(i, f"row {i}") for i in range(5)]


def test_close_aborts_the_unused_and_the_open_transactions(outage, tmp_path):
    ms, server, table = outage
    ep = HiveEndPoint(server.uri, "default", table, ["close"])
    with ep.new_connection(auto_create_partition=True) as conn:
        batch = conn.fetch_transaction_batch(4, DelimitedInputWriter(["id", "msg"], ",", ep))
        batch.begin_next_transaction()
        batch.write(b"1,kept")
        batch.commit()
        batch.begin_next_transaction()
        batch.write(b"2,never")  # open when the batch closes
        first, *rest = batch.txn_ids
        with client_of(server.port) as c:
            before = {t.id: t.state for t in c.get_open_txns_info().open_txns}
            assert first not in before and all(before[t] == hive.TxnState.OPEN for t in rest)
            batch.close()
            after = {t.id: t.state for t in c.get_open_txns_info().open_txns}
    assert first not in after and {t: after.get(t) for t in rest} == dict.fromkeys(rest, hive.TxnState.ABORTED)
    assert rows_through_the_proxy(server, table, "close") == [(1, "kept")]


class BreakerWatch:
    """When the proxy's breaker tripped the metastore and when it let calls through again (polled)."""

    def __init__(self, server, metastore: str):
        self.breaker, self.metastore = server.handler.backends.breaker, metastore
        self.opened = self.closed = None
        self.reason = ""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.02):
            trip = self.breaker.trip(self.metastore)
            if trip is not None and self.opened is None:
                self.opened, self.reason = time.monotonic(), str(trip.error(self.metastore))
            if trip is None and self.opened is not None and self.closed is None:
                self.closed = time.monotonic()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def test_a_metastore_killed_and_restarted_mid_stream_loses_and_repeats_nothing(outage, tmp_path):
    ms, server, table = outage
    before, during, after = range(0, 200), range(200, 400), range(400, 600)
    options = ("--rows-per-txn", "50", "--seconds-per-txn", "0.5", "--retries", "30")
    proc = start_stream(server, table, "outage", *options, "--retry-backoff", "0.25", "--retry-backoff-max", "2", cwd=tmp_path)
    watch = BreakerWatch(server, "primary")
    try:
        send(proc, before)
        wait_until(lambda: len(rows_through_the_proxy(server, table, "outage")) == len(before), "the rows before the outage")
        with Stopper(ms.pid) as frozen:
            went = time.monotonic()
            frozen.stop()  # calls hang: the breaker probes, trips, and cuts them
            send(proc, during)  # held by the stream meanwhile
            wait_until(lambda: watch.opened is not None, "the breaker opening")
            ms.stop(grace_s=0.1)  # SIGTERM waits behind SIGSTOP: SIGKILL
            frozen.stopped = False  # nothing left to resume
            killed = time.monotonic()
        ms.start()
        back = time.monotonic()
        wait_until(lambda: watch.closed is not None, "the breaker closing")
        send(proc, after)
    finally:
        watch.stop()
        err = finish(proc, tmp_path, "outage")
    assert rows_through_the_proxy(server, table, "outage") == [(i, f"row {i}") for i in range(600)]  # each once
    retries = [line for line in err.splitlines() if "stream: retry " in line]
    assert retries and f"retries {len(retries)}" in err.splitlines()[-1]
    print(
        f"\nstream outage: metastore frozen {killed - went:.1f} s (breaker open {watch.opened - went:.1f} s after the freeze: "
        f"{watch.reason}), killed and restarted in {back - killed:.1f} s, breaker closed {watch.closed - went:.1f} s after the "
        f"freeze; {len(retries)} retries; rows 600, each once\n  first retry: {retries[0]}\n  last retry: {retries[-1]}"
    )


def test_retries_run_out_the_last_committed_line_is_printed_and_skip_resumes_after_it(outage, tmp_path):
    ms, server, table = outage
    lines = range(120)
    proc = start_stream(server, table, "resume", "--rows-per-txn", "50", "--retries", "1", "--retry-backoff", "0.1", cwd=tmp_path)
    try:
        send(proc, lines[:100])
        wait_until(lambda: len(rows_through_the_proxy(server, table, "resume")) == 100, "the first 100 rows")
        ms.stop()
        send(proc, lines[100:])
        proc.stdin.close()
        proc.wait(timeout=PATIENCE_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        ms.start()
    err = (tmp_path / "stream-resume.err").read_text()
    assert proc.returncode == 1, err
    assert "(gave up after 1 retries)" in err and "retry 1 of 1 in 0.1 s" in err
    assert err.splitlines()[-1] == "hmsproxy: stream: input lines 1-100 are committed (or dead-lettered); resume with --skip 100"
    resumed = start_stream(server, table, "resume", "--skip", "100", cwd=tmp_path)
    send(resumed, lines)  # the same input again, from its first line
    finish(resumed, tmp_path, "resume")
    assert rows_through_the_proxy(server, table, "resume") == [(i, f"row {i}") for i in lines]

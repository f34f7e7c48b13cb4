"""AUTO REBUILD indexes kept fresh as writes land (issue 41): `rebuild-index --watch` as users run
it, a process of its own with its own SparkSession, picks up partitions a Spark INSERT made stale or
added, rebuilds only those, lookups then read through the index again, and SIGTERM ends it with exit
0. And the lock around a rebuild: a compact holding its exclusive lock on a partition makes a rebuild
of that partition wait, so the rebuild's build describes the compacted files."""

from __future__ import annotations

import io
import os
import queue
import signal
import subprocess
import threading
import time

import pytest

from hmsproxy.clients.index_lookup import arrow_lookup
from hmsproxy.clients.spark import sql
from hmsproxy.jobs import compact as compact_job
from hmsproxy.jobs.cli import build_parser, run_job_command
from hmsproxy.jobs.context import JobContext
from hmsproxy.jobs.skew_layout import open_metastore
from hmsproxy.protocol import idl
from hmsproxy.streaming import DelimitedInputWriter, HiveEndPoint
from tests.spark.test_index_entry_points_spark import HMSPROXY, env
from tests.spark.test_index_rebuild_spark import DAYS, full_scan, make_events, states

pytestmark = pytest.mark.spark

NEW_DAY = "2026-11-04"


@pytest.fixture(scope="module")
def db(spark):
    spark.sql("CREATE DATABASE IF NOT EXISTS index_watch")
    return "index_watch"


class Watcher:
    """`hmsproxy job rebuild-index --watch` in a process group of its own; its standard output read by a thread."""

    def __init__(self, argv: list[str], cwd):
        self.proc = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd, env=env(), start_new_session=True
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        self.errors: list[str] = []
        threading.Thread(target=self._read, args=(self.proc.stdout, self.lines), daemon=True).start()
        threading.Thread(target=self._read, args=(self.proc.stderr, None), daemon=True).start()

    def _read(self, stream, into) -> None:
        for line in stream:
            (into.put if into is not None else self.errors.append)(line.rstrip("\n"))

    def wait_for(self, text: str, timeout_s: float) -> str:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=1)
            except queue.Empty:
                assert self.proc.poll() is None, f"the watcher ended ({self.proc.returncode}):\n" + "\n".join(self.errors[-40:])
                continue
            self.seen.append(line)
            if text in line:
                return line
        raise AssertionError(f"no line with {text!r} in {timeout_s:.0f} s; saw {self.seen}; stderr:\n" + "\n".join(self.errors[-40:]))

    def stop(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # its Spark JVM too, should it outlive its Python
        except ProcessLookupError:
            pass
        self.proc.wait(30)


def test_watch_rebuilds_what_writes_made_stale_and_stops_on_sigterm(spark, proxy, db, tmp_path):
    table = make_events(spark, db)
    created = sql(spark, f"CREATE INDEX user_idx ON TABLE {table} (user_id) AS 'COMPACT' AUTO REBUILD").collect()
    assert created[0].result.endswith("kept fresh by hmsproxy job rebuild-index --watch")
    shown = sql(spark, f"SHOW FORMATTED INDEX ON {table}").collect()
    assert {r.idx_properties for r in shown} == {"hmsproxy.index.auto-rebuild=true"}
    assert {r.state for r in shown} == {"fresh"}  # built at once, as without DEFERRED REBUILD

    # No index named: every AUTO REBUILD index the proxy holds is watched.
    watcher = Watcher([HMSPROXY, "job", "rebuild-index", "--watch", "--interval", "1", "--uri", proxy.uri], tmp_path)
    try:
        watcher.wait_for("rebuild-index --watch: watching every AUTO REBUILD index every 1 s", 240)
        spark.sql(f"INSERT INTO {table} PARTITION (ds='{DAYS[0]}') VALUES (3, 'late', 1.5)")  # a new file: day 0 is stale
        spark.sql(f"INSERT INTO {table} PARTITION (ds='{NEW_DAY}') VALUES (3, 'newday', 2.5)")  # a partition added: never built
        rebuilt = {watcher.wait_for(f"rebuilt {table}.user_idx ds=", 240).split(" ds=")[1].split(":")[0] for _ in range(2)}
        assert rebuilt == {DAYS[0], NEW_DAY}
        assert not [line for line in watcher.seen if f"{table}.user_idx ds={DAYS[1]}" in line]  # fresh ones are left alone
        assert set(states(spark, table).values()) == {"fresh"}

        # A streaming commit publishes a file into day 2: stale, and rebuilt in its turn.
        stream_one_row(proxy.uri, table, DAYS[2], b"3,streamed,3.5")
        assert watcher.wait_for(f"rebuilt {table}.user_idx ds=", 240).split(" ds=")[1].split(":")[0] == DAYS[2]
        assert set(states(spark, table).values()) == {"fresh"}

        # Lookups read through the index again: user 3 lives on day 0 and the new day, in one file each.
        expected = full_scan(spark, table, "user_id = 3")
        assert {"late", "newday", "streamed"} <= {r[1] for r in expected}
        result = arrow_lookup(proxy.uri, table, {"user_id": 3})
        assert sorted(tuple(r.values()) for r in result.table.to_pylist()) == expected
        assert {r.state for r in result.plan.reads} == {"fresh"}
        # Day 0's original file and the INSERT's, the new day's, the streamed file; day 1 not at all.
        assert result.files_opened == 4

        watcher.proc.send_signal(signal.SIGTERM)
        assert watcher.proc.wait(120) == 0, "\n".join(watcher.errors[-40:])
        watcher.wait_for("rebuild-index --watch: stopped by SIGTERM after 3 rebuild(s)", 10)
    finally:
        watcher.stop()
    spark.sql(f"DROP TABLE {table}")


def stream_one_row(uri: str, table: str, day: str, row: bytes) -> None:
    """One transaction of the streaming API through the proxy into a day of `table`."""
    db_name, name = table.split(".")
    endpoint = HiveEndPoint(uri, db_name, name, [day])
    connection = endpoint.new_connection(user="streamer")
    try:
        batch = connection.fetch_transaction_batch(1, DelimitedInputWriter(["user_id", "action", "amount"], ",", endpoint))
        batch.begin_next_transaction()
        batch.write(row)
        batch.commit()
        batch.close()
    finally:
        connection.close()


def _waiting_locks(proxy, db: str, table: str, partition: str) -> list:
    with open_metastore(proxy.uri) as ms:
        return [e for e in ms.locks_on(db, table, partition) if e.state == idl.hive.LockState.WAITING]


def test_a_rebuild_waits_for_a_compact_of_its_partition(spark, proxy, db, monkeypatch):
    """The compact job holds its exclusive lock on day 0 (paused inside it); a rebuild of day 0 waits
    for it, then builds from the compacted files: fresh afterwards, the lookups whole."""
    table = make_events(spark, db)
    db_name, name = table.split(".")
    partition = f"ds={DAYS[0]}"
    sql(spark, f"CREATE INDEX user_idx ON TABLE {table} (user_id) AS 'COMPACT' WITH DEFERRED REBUILD")
    inside, release = threading.Event(), threading.Event()
    original = compact_job.compact_target

    def paused_compact(*args, **kwargs):
        inside.set()
        assert release.wait(300), "the test never let the compact go on"
        return original(*args, **kwargs)

    monkeypatch.setattr(compact_job, "compact_target", paused_compact)
    results: dict[str, object] = {}

    def run(job: str, *argv: str) -> None:
        ctx = JobContext(proxy.uri, spark=spark, stdout=io.StringIO(), stderr=io.StringIO())
        results[job] = (run_job_command(build_parser().parse_args([job, *argv]), ctx), ctx, time.monotonic())

    compacting = threading.Thread(target=run, args=("compact", table, "--files", "1", "--partition", partition))
    compacting.start()
    try:
        assert inside.wait(180), "the compact never took its lock"
        rebuilding = threading.Thread(target=run, args=("rebuild-index", f"{table}.user_idx", "--partition", partition))
        rebuilding.start()
        deadline = time.monotonic() + 60
        while not _waiting_locks(proxy, db_name, name, partition) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert _waiting_locks(proxy, db_name, name, partition), "the rebuild asked for no lock on the partition"
        time.sleep(2)
        assert rebuilding.is_alive() and "rebuild-index" not in results  # still waiting
        released_at = time.monotonic()
        release.set()
        compacting.join(300)
        rebuilding.join(300)
        assert not compacting.is_alive() and not rebuilding.is_alive()
    finally:
        release.set()
    (compact_status, compact_ctx, compact_done), (rebuild_status, rebuild_ctx, rebuild_done) = results["compact"], results["rebuild-index"]
    assert compact_status == 0, compact_ctx.stderr.getvalue()
    assert rebuild_status == 0, rebuild_ctx.stderr.getvalue()
    assert released_at < compact_done < rebuild_done  # the rebuild went on only once the compact was done
    assert states(spark, table)[partition] == "fresh"  # built from the compacted file, not the files it replaced
    assert "1 rewritten" in compact_ctx.stdout.getvalue()
    result = arrow_lookup(proxy.uri, table, {"user_id": 3, "ds": DAYS[0]})
    assert sorted(tuple(r.values()) for r in result.table.to_pylist()) == full_scan(spark, table, f"user_id = 3 AND ds = '{DAYS[0]}'")
    assert [r.state for r in result.plan.reads] == ["fresh"] and result.files_opened == 1  # the one compacted file, through the index
    spark.sql(f"DROP TABLE {table}")

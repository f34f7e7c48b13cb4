"""rebuild-index --watch: keep AUTO REBUILD indexes fresh as writes land, until told to stop.

    hmsproxy job rebuild-index --watch [--interval 30] [--max-per-round 8] [DB.TABLE.INDEX ...]

Each round lists the indexes to keep (those named, else every index the proxy holds with
`hmsproxy.index.auto-rebuild`=true), checks each index partition against its base partitions'
files with the staleness digest (builds.py) and rebuilds the stale or never-built ones, at most
`--max-per-round` of them, so one round stays bounded however much was written; the rest wait for
the next round. A line per rebuild goes to standard output. Until it is rebuilt a stale partition
is read whole by lookups, so the answers stay complete meanwhile.

SIGTERM or SIGINT stops the loop: the partition being rebuilt is finished (its swap is one
metastore call, so it is either swapped or left as it was) and the job exits 0. A second signal
abandons that partition at once (its new files are deleted, the previous index stays; exit 130).
A round that fails (the proxy restarting, an index dropped meanwhile) is reported and the next
round tries again.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from hmsproxy.features.indexes.auto_rebuild import is_auto_rebuild
from hmsproxy.jobs.errors import JobError, one_line
from hmsproxy.jobs.progress import OK, SKIPPED

#: Seconds between rounds, and index partitions rebuilt at most per round.
DEFAULT_INTERVAL_S = 30.0
DEFAULT_MAX_PER_ROUND = 8


class StopSignals:
    """SIGTERM/SIGINT set `stopping`; a second one raises KeyboardInterrupt (abandon the current work)."""

    def __init__(self) -> None:
        self.stopping = threading.Event()
        self.signal_name = ""
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> StopSignals:
        for sig in (signal.SIGTERM, signal.SIGINT):
            self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)

    def _handle(self, signum: int, _frame) -> None:
        if self.stopping.is_set():
            raise KeyboardInterrupt
        self.signal_name = signal.Signals(signum).name
        self.stopping.set()


def auto_rebuild_indexes(ms: Any, report: Callable[[str], None]) -> Iterator[tuple[str, str, str]]:
    """(db, table, index) of every AUTO REBUILD index the proxy holds; a database it can't list is reported and skipped."""
    for db in ms.databases():
        try:
            tables = ms.table_names(db)
            for table in tables:
                for index in ms.indexes(db, table):
                    if is_auto_rebuild(index.parameters):
                        yield db, table, index.indexName.lower()
        except Exception as e:  # a remote or unreachable database: the others are still watched
            report(f"skipped database {db}: {one_line(e)}")


def watch_round(spark: Any, ms: Any, named: list[tuple[str, str, str]], context: Any, budget: int, stopping: threading.Event) -> int:
    """One round: rebuild up to `budget` stale or never-built index partitions; how many were rebuilt."""
    from hmsproxy.jobs.rebuild_index import NAME, load_index, pieces_for, rebuild_piece

    def report(line: str) -> None:
        context.out(f"{NAME} --watch: {line}")

    rebuilt = 0
    for db, table, name in named or list(auto_rebuild_indexes(ms, report)):
        try:
            index = load_index(ms, db, table, name)
            pieces = pieces_for(ms, index, [])
        except JobError as e:
            report(f"{db}.{table}.{name}: {one_line(e)}")
            continue
        for piece in pieces:
            if rebuilt >= budget or stopping.is_set():
                return rebuilt
            what = f"{db}.{table}.{name} {piece.name or '(whole table)'}"
            started = time.monotonic()
            try:
                result = rebuild_piece(spark, ms, index, piece, only_stale=True, connect=context.metastore)
            except Exception as e:  # left as it was; the next round tries again
                report(f"{what}: failed, left as it was: {one_line(e)}")
                continue
            if result.status == OK:
                rebuilt += 1
                report(f"rebuilt {what}: {result.rows} index rows, {result.note}, in {time.monotonic() - started:.1f} s")
            elif result.status != SKIPPED:
                report(f"{what}: {result.status} {result.note}")
    return rebuilt


def watch(context: Any, named: list[tuple[str, str, str]], *, interval_s: float, max_per_round: int) -> int:
    """Rounds until SIGTERM/SIGINT; exit status 0 when stopped by one."""
    from hmsproxy.jobs.skew_layout import open_metastore
    from hmsproxy.jobs.spark_sessions import spark_user

    what = ", ".join(".".join(n) for n in named) if named else "every AUTO REBUILD index"
    with StopSignals() as signals:
        spark = context.spark
        context.out(f"rebuild-index --watch: watching {what} every {interval_s:g} s (at most {max_per_round} rebuilds a round)")
        total = 0
        while not signals.stopping.is_set():
            try:
                with open_metastore(context.uri, user=spark_user(spark), sasl_principal=context.sasl_principal) as ms:
                    total += watch_round(spark, ms, named, context, max_per_round, signals.stopping)
            except Exception as e:  # e.g. the proxy restarting: the next round reconnects
                context.out(f"rebuild-index --watch: round failed: {one_line(e)}")
            signals.stopping.wait(interval_s)
        context.out(f"rebuild-index --watch: stopped by {signals.signal_name} after {total} rebuild(s)")
    return 0

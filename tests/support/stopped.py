"""SIGSTOP that has taken effect: a process whose every thread is stopped.

kill(pid, SIGSTOP) returns once the signal is queued. The kernel wakes one thread to take it,
and that thread stops the others as they next reach the kernel: on a loaded machine the JVM's
other threads may run on for a while, long enough to answer a call sent just after kill()
returned (test_operations.py's frozen primary once answered within its 500 ms deadline that
way). `sigstop` returns only when /proc shows every thread stopped, so nothing answers after it.
Also: `Stopper`, a stop that a test's end undoes whatever happened; `in_flight`, a call left
waiting on its own thread; `empty_table`, one to ask for.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

from hmsproxy.testing.builders import parquet_table

#: A bound on waiting for the stop to take effect, reached only if it never does.
STOP_PATIENCE_S = 30.0


def _states(pid: int) -> list[str]:
    """Each thread's state letter (R, S, D, T for stopped, t for traced...)."""
    states = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            stat = (task / "stat").read_text()
        except FileNotFoundError:  # the thread ended meanwhile
            continue
        states.append(stat[stat.rindex(")") + 2])  # the name, in parentheses, may hold anything
    return states


def all_stopped(pid: int) -> bool:
    return all(state in "Tt" for state in _states(pid))


def sigstop(pid: int) -> float:
    """Stop process `pid` and wait until all its threads are stopped; seconds that took."""
    started = time.monotonic()
    os.kill(pid, signal.SIGSTOP)
    while not all_stopped(pid):
        assert time.monotonic() - started < STOP_PATIENCE_S, f"process {pid} not stopped {STOP_PATIENCE_S} s after SIGSTOP"
        time.sleep(0.005)
    return time.monotonic() - started


def sigcont(pid: int) -> None:
    os.kill(pid, signal.SIGCONT)


class Stopper:
    """SIGSTOP (`stop`, as sigstop) and SIGCONT (`resume`) of process `pid` for a `with` block,
    which resumes it if it is still stopped when the block ends: a stopped metastore must not
    outlive a failed test (nothing would answer the next one, nor stop it)."""

    def __init__(self, pid: int):
        self.pid = pid
        self.stopped = False

    def __enter__(self) -> Stopper:
        return self

    def stop(self) -> float:
        """Seconds until every thread had stopped (sigstop)."""
        self.stopped = True  # from the signal on: a stop still taking effect is resumed too
        return sigstop(self.pid)

    def resume(self) -> None:
        sigcont(self.pid)
        self.stopped = False

    def __exit__(self, *exc) -> None:
        if self.stopped:
            self.resume()


def in_flight(fn, since: float | None = None) -> tuple[threading.Thread, dict]:
    """fn() on a thread of its own, started (a call left waiting on a stopped metastore): the dict
    gets its "result" or "error", and "at", the seconds from `since` (default: now) to its end."""
    since = time.monotonic() if since is None else since
    outcome: dict = {}

    def run():
        try:
            outcome["result"] = fn()
        except Exception as e:
            outcome["error"] = e
        outcome["at"] = time.monotonic() - since

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


def empty_table(metastore, name: str) -> None:
    """An empty Parquet table `default.<name>` on `metastore` (a dev LocalMetastore), made directly."""
    client = metastore.client()
    try:
        client.create_table(parquet_table("default", name, (metastore.warehouse_dir / name).as_uri()))
    finally:
        client.close()

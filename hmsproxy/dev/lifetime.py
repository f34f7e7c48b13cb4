"""No metastore JVM outlives the Python process that started it.

Two guards: an ``atexit`` hook stops every JVM still registered when Python
exits normally, and a tiny watchdog process per JVM (``sh``, reading a pipe
only this Python process holds) kills the JVM's process group when Python dies
abruptly (SIGKILL, a crash) and the pipe hits EOF.
"""

from __future__ import annotations

import atexit
import os
import subprocess
import threading
from typing import Protocol


class Stoppable(Protocol):
    def stop(self, grace_s: float = ...) -> None: ...


_live_lock = threading.Lock()
_live: dict[int, Stoppable] = {}

# Reads one line from its stdin, a pipe whose write end only the Python
# process holds. EOF means Python is gone, so kill the process group.
# stop_watchdog() kills the watchdog first, so a normal stop never reaches the kill lines.
_WATCHDOG_SCRIPT = 'read _ignored; kill -TERM -"$1" 2>/dev/null || exit 0; sleep 5; kill -KILL -"$1" 2>/dev/null; exit 0'


def register(process_owner: Stoppable) -> None:
    """Stop ``process_owner`` at interpreter exit unless :func:`unregister` ran first."""
    with _live_lock:
        _live[id(process_owner)] = process_owner


def unregister(process_owner: Stoppable) -> None:
    with _live_lock:
        _live.pop(id(process_owner), None)


def _stop_all_at_exit() -> None:
    with _live_lock:
        running = list(_live.values())
    for owner in running:
        try:
            owner.stop(grace_s=3.0)
        except Exception:  # noqa: BLE001 - best effort at interpreter exit
            pass


atexit.register(_stop_all_at_exit)


def start_watchdog(pgid: int) -> subprocess.Popen:
    """A watchdog that kills process group ``pgid`` once this Python process is gone.

    Raises OSError if there is no ``sh`` (then only the atexit hook guards).
    """
    return subprocess.Popen(
        ["sh", "-c", _WATCHDOG_SCRIPT, "hmsproxy-devstack-watchdog", str(pgid)],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )


def stop_watchdog(watchdog: subprocess.Popen | None) -> None:
    """Kill the watchdog before it sees EOF (a normal stop) and reap it."""
    if watchdog is None:
        return
    if watchdog.poll() is None:
        try:
            watchdog.kill()
        except ProcessLookupError:
            pass
    try:
        watchdog.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    if watchdog.stdin is not None:
        try:
            watchdog.stdin.close()
        except OSError:
            pass


def killpg(pgid: int, sig: int) -> None:
    """Signal a process group that may already be gone."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass

"""Several worker processes on one port: fork, supervise, restart, forward signals.

Each worker is a whole proxy (handler, listener bound with SO_REUSEPORT, its own
metrics); the kernel spreads new connections over them. The parent only
supervises: a worker that dies is started again, SIGHUP is passed on to every
worker (each reloads its config), SIGTERM/SIGINT stop them all.

Fork happens before the parent starts any thread, so each child starts clean.
"""

from __future__ import annotations

import logging
import os
import signal
import time
import traceback
from collections.abc import Callable

log = logging.getLogger(__name__)

#: A worker that dies this soon after its start waits this long before the next try.
RESTART_BACKOFF_S = 1.0
STOP_GRACE_S = 30.0


def _spawn(index: int, run_worker: Callable[[int], int]) -> int:
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:  # the child: never return into the parent's code
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_DFL)
        # SIGHUP would kill a worker still starting up; it reads the newest config anyway.
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        code = run_worker(index)
    except BaseException:
        traceback.print_exc()
    finally:
        os._exit(code)


def supervise(count: int, run_worker: Callable[[int], int], on_hup: Callable[[], None] | None = None) -> int:
    """Run `run_worker(i)` in `count` child processes until SIGTERM/SIGINT; returns 0.

    `on_hup` runs in the parent on SIGHUP, before the signal is passed on (e.g. to
    re-read the config that workers started later will use).
    """
    stop = False
    hups = 0

    def on_stop(*_):
        nonlocal stop
        stop = True

    def count_hup(*_):
        nonlocal hups
        hups += 1

    signal.signal(signal.SIGINT, on_stop)
    signal.signal(signal.SIGTERM, on_stop)
    signal.signal(signal.SIGHUP, count_hup)
    children: dict[int, tuple[int, float]] = {}  # pid -> (worker index, started at)
    for i in range(count):
        children[_spawn(i, run_worker)] = (i, time.monotonic())
    forwarded = 0
    while not stop:
        if hups != forwarded:
            forwarded = hups
            if on_hup is not None:
                on_hup()
            _signal_all(children, signal.SIGHUP)
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            time.sleep(0.2)
            continue
        index, started = children.pop(pid, (None, 0.0))
        if index is None or stop:
            continue
        log.error("worker %d (pid %d) died (%s); starting it again", index, pid, _describe(status))
        if time.monotonic() - started < RESTART_BACKOFF_S:
            time.sleep(RESTART_BACKOFF_S)
        children[_spawn(index, run_worker)] = (index, time.monotonic())
    _stop_all(children)
    return 0


def _signal_all(children: dict, sig: int) -> None:
    for pid in list(children):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def _stop_all(children: dict) -> None:
    _signal_all(children, signal.SIGTERM)
    deadline = time.monotonic() + STOP_GRACE_S
    while children and time.monotonic() < deadline:
        pid, _ = os.waitpid(-1, os.WNOHANG)
        if pid:
            children.pop(pid, None)
        else:
            time.sleep(0.1)
    _signal_all(children, signal.SIGKILL)  # a worker that ignored SIGTERM
    for pid in list(children):
        os.waitpid(pid, 0)


def _describe(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"signal {os.WTERMSIG(status)}"
    return f"exit code {os.waitstatus_to_exitcode(status)}"

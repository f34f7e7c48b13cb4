"""Which hmsproxy package boundaries one call crosses on the proxy's thread, measured, not told.

A profile hook on the threads started while `watching()` is active records every Python call into
an hmsproxy module; a call crosses a boundary when its package (`pipeline`, `upstream`, ...: the
first folder under hmsproxy/) differs from that of the nearest hmsproxy frame that called it
(thriftpy2 or the standard library in between are not packages of ours). C calls are not seen:
what runs in C (the walker, the Gate, the hit loop) is part of the Python function that called it.

docs/architecture.md's walks are lists of these crossings (tests/contract/test_walks.py).
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from contextlib import contextmanager

import hmsproxy

_ROOT = os.path.dirname(hmsproxy.__file__) + os.sep


def _package(filename: str) -> str | None:
    """`pipeline` for .../hmsproxy/pipeline/handler.py, None outside hmsproxy."""
    if not filename.startswith(_ROOT):
        return None
    rest = filename[len(_ROOT) :]
    return rest.split(os.sep, 1)[0] if os.sep in rest else "hmsproxy"


def _where(frame) -> str:
    return f"{frame.f_code.co_filename[len(_ROOT) :].replace(os.sep, '/')}:{frame.f_code.co_name}"


class Walk:
    """The crossings seen while `recording` is set: (from "pkg/module.py:function", to ...)."""

    def __init__(self):
        self.recording = False
        self.crossings: list[tuple[str, str]] = []
        self._threads: list[int] = []  # the thread of each crossing, in step with `crossings`

    def _hook(self, frame, event, _arg):
        if event != "call" or not self.recording:
            return
        package = _package(frame.f_code.co_filename)
        if package is None or package == "testing":  # the fake metastore's threads are not the proxy's
            return
        caller = frame.f_back
        while caller is not None and _package(caller.f_code.co_filename) is None:
            caller = caller.f_back
        if caller is not None and _package(caller.f_code.co_filename) != package:
            self.crossings.append((_where(caller), _where(frame)))
            self._threads.append(threading.get_ident())

    @contextmanager
    def recorded(self):
        """Crossings of what runs inside the block (only those: set up and tear down outside it), on
        the thread that crossed most: the call's. The proxy's background threads (watchdogs, probes)
        may cross at any moment; they are not the walk."""
        self.crossings, self._threads = [], []
        self.recording = True
        try:
            yield self.crossings
        finally:
            self.recording = False
            if self._threads:
                [(busiest, _)] = Counter(self._threads).most_common(1)
                self.crossings[:] = [c for c, t in zip(self.crossings, self._threads) if t == busiest]


@contextmanager
def watching():
    """A Walk hooked into every thread started inside the block (start the proxy's connection here)."""
    walk = Walk()
    threading.setprofile(walk._hook)
    try:
        yield walk
    finally:
        threading.setprofile(None)


def packages(crossings: list[tuple[str, str]]) -> list[str]:
    """["downstream → pipeline", ...]: the crossings by package only."""
    return [f"{a.split('/')[0]} → {b.split('/')[0]}" for a, b in crossings]

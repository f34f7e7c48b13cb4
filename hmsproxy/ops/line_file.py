"""Whole lines appended to a file the configuration may move (the audit log, lineage events)."""

from __future__ import annotations

import sys
import threading


class LineFile:
    def __init__(self):
        self._lock = threading.Lock()  # one writer at a time keeps lines whole
        self._path: str | None = None
        self._file = None

    def write(self, path: str | None, line: str) -> None:
        """Append `line` (with its newline) to `path`, reopened when a reload moved it; None: standard error."""
        with self._lock:
            self._stream(path).write(line)

    def _stream(self, path: str | None):
        if path is None:
            return sys.stderr
        if path != self._path:
            self._close()
            self._file = open(path, "a", buffering=1, encoding="utf-8")
            self._path = path
        return self._file

    def _close(self) -> None:
        if self._file is not None:
            self._file.close()
        self._file, self._path = None, None

    def close(self) -> None:
        with self._lock:
            self._close()

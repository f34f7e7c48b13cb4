"""The audit log: one JSON line per call (on_complete).

The settings are read from each call's config snapshot, so a reload that turns
audit on or off, changes its level or moves its file takes effect with the next
call. Lines go to `audit.file` (appended, line-buffered) or to standard error.
"""

from __future__ import annotations

import json
import sys
import threading
from datetime import UTC, datetime

from hmsproxy.call import Call
from hmsproxy.config_model import AuditConfig
from hmsproxy.features.base import Feature, Platform


def wanted(cfg: AuditConfig, call: Call) -> bool:
    if not cfg.enabled:
        return False
    if cfg.level == "writes":
        return call.spec.writes
    if cfg.level == "errors":
        return call.outcome != "ok"
    return True


def audit_record(call: Call, max_arg_chars: int) -> dict:
    args = repr(call.args)  # as sent to the backend: database names already rewritten
    if len(args) > max_arg_chars:
        args = args[:max_arg_chars] + "..."
    return {
        "ts": datetime.now(UTC).isoformat(timespec="milliseconds"),
        "client": call.session.client_address,
        "user": call.session.user,
        "method": call.method,
        "db": call.client_db,
        "table": call.table,
        "backend": call.backend,
        "ms": round(call.elapsed_s * 1000, 3),
        "outcome": call.outcome,
        "error": call.error,
        "args": args,
    }


class Audit(Feature):
    name = "audit"

    def __init__(self, platform: Platform):
        super().__init__(platform)
        self._lock = threading.Lock()  # one writer at a time keeps lines whole
        self._path: str | None = None
        self._file = None

    def on_complete(self, call: Call) -> None:
        cfg = call.router.config.audit
        if not wanted(cfg, call):
            return
        line = json.dumps(audit_record(call, cfg.max_arg_chars), default=str) + "\n"
        with self._lock:
            self._stream(cfg.file).write(line)

    def record(self, event: dict) -> None:
        """A line another feature adds to the audit log (dependent tables' lineage events), when audit is on."""
        cfg = self.platform.config().audit
        if not cfg.enabled:
            return
        line = json.dumps({"ts": datetime.now(UTC).isoformat(timespec="milliseconds"), **event}, default=str) + "\n"
        with self._lock:
            self._stream(cfg.file).write(line)

    def _stream(self, path: str | None):
        if path is None:
            return sys.stderr
        if path != self._path:  # first line, or a reload moved the file
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

"""The audit log: one JSON line per call (on_complete).

The settings are read from each call's config snapshot, so a reload that turns
audit on or off, changes its level or moves its file takes effect with the next
call. Lines go to `audit.file` (appended, line-buffered) or to standard error.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

from hmsproxy.config.model import AuditConfig
from hmsproxy.ops.line_file import LineFile
from hmsproxy.pipeline.call import Call
from hmsproxy.pipeline.platform import Feature, Platform


def wanted(cfg: AuditConfig, call: Call) -> bool:
    if not cfg.enabled:
        return False
    if cfg.level == "writes":
        return call.spec.writes
    if cfg.level == "errors":
        return call.outcome != "ok"
    return True


#: Calls whose arguments are credentials: a delegation token's string form logs in as its owner.
CREDENTIAL_ARGS = frozenset({"renew_delegation_token", "cancel_delegation_token", "add_token"})


def audit_record(call: Call, max_arg_chars: int) -> dict:
    # As sent to the backend (database names already rewritten); never a credential.
    args = "(a token: withheld)" if call.method in CREDENTIAL_ARGS else repr(call.args)
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
        **({"stale": True} if call.session.served_stale else {}),
    }


class Audit(Feature):
    name = "audit"

    def __init__(self, platform: Platform):
        super().__init__(platform)
        self._out = LineFile()

    def completes_after_answer(self, config) -> bool:
        return not config.audit.enabled  # a line per call, written before its answer

    def on_complete(self, call: Call) -> None:
        cfg = call.router.config.audit
        if not wanted(cfg, call):
            call.session.served_stale = False
            return
        self._out.write(cfg.file, json.dumps(audit_record(call, cfg.max_arg_chars), default=str) + "\n")
        call.session.served_stale = False

    def record(self, event: dict) -> None:
        """A line another feature adds to the audit log (dependent tables' lineage events), when audit is on."""
        cfg = self.platform.config().audit
        if not cfg.enabled:
            return
        self._out.write(cfg.file, json.dumps({"ts": datetime.now(UTC).isoformat(timespec="milliseconds"), **event}, default=str) + "\n")

    def close(self) -> None:
        self._out.close()

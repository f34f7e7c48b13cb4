"""Who may write where: Waggle Dance's access-control types and write white lists."""

from __future__ import annotations

import threading

from hmsproxy.config.model import AccessControlType as ACT
from hmsproxy.pipeline.call import Call
from hmsproxy.pipeline.errors import AccessDenied
from hmsproxy.pipeline.platform import Feature, Platform
from hmsproxy.routing.methods import MethodSpec, other_databases
from hmsproxy.routing.router import Route

CAN_CREATE = frozenset({ACT.READ_AND_WRITE_AND_CREATE, ACT.READ_AND_WRITE_AND_CREATE_ON_DATABASE_WHITELIST})
WHITELISTED = frozenset({ACT.READ_AND_WRITE_ON_DATABASE_WHITELIST, ACT.READ_AND_WRITE_AND_CREATE_ON_DATABASE_WHITELIST})


class AccessControl(Feature):
    name = "access"
    memoizable_verdict = True  # its verdicts read only the call, the caller and its records

    def __init__(self, platform: Platform):
        super().__init__(platform)
        # Databases created through the proxy under *_AND_CREATE_ON_DATABASE_WHITELIST
        # become writable, as in Waggle Dance (kept for the life of the process).
        self._created: set[tuple[str, str]] = set()
        self._lock = threading.Lock()

    def wants(self, spec: MethodSpec) -> bool:
        return spec.writes and not any(spec.name in f.checks_own_writes for f in self.platform.features)

    def on_routed(self, call: Call) -> None:
        if not call.client_db:
            return
        self.check(call.spec, call.route, call.client_db)
        for db in other_databases(call.spec, call.args):  # every database a call writes to, not only the first
            self.check(call.spec, call.router.route(db), db)

    def check(self, spec: MethodSpec, route: Route, client_db: str) -> None:
        """Raise AccessDenied if `spec` writes and the route's metastore does not allow it."""
        if not spec.writes:
            return
        ms = route.metastore
        act = ms.access_control_type
        where = f"metastore '{ms.name}' has access-control-type {act.value}"
        if spec.creates_database:
            if act not in CAN_CREATE:
                raise AccessDenied(f"hmsproxy: creating database '{client_db}' is not allowed: {where}")
            if act in WHITELISTED:
                with self._lock:
                    self._created.add((ms.name, route.backend_db))
            return
        if act is ACT.READ_AND_WRITE_AND_CREATE:
            return
        if act is ACT.READ_ONLY:
            raise AccessDenied(f"hmsproxy: writes to database '{client_db}' are not allowed: {where}")
        with self._lock:
            created = (ms.name, route.backend_db) in self._created
        if not (created or route.naming.db_writable(route.backend_db)):
            raise AccessDenied(
                f"hmsproxy: writes to database '{client_db}' are not allowed: it is not in "
                f"writable-database-white-list of metastore '{ms.name}' ({act.value})"
            )

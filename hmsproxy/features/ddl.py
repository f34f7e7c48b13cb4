"""hmsproxy_execute: the proxy's own statements (CREATE/DROP/SHOW/DESCRIBE REMOTE ...) over Thrift.

The statements run as the connection's set_ugi user against the store opened
by app.build_handler. Every error (syntax, validation, store) reaches the
client as MetaException naming the failing statement.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from hmsproxy import idl
from hmsproxy.call import Call
from hmsproxy.config_model import Config
from hmsproxy.ddl.executor import DdlError, ExecContext, NoSuchObject, NotPermitted, RemoteAlreadyExists, execute
from hmsproxy.ddl.parser import DdlSyntaxError, parse
from hmsproxy.ddl.results import ResultSet
from hmsproxy.ddl.statements import Statement
from hmsproxy.errors import AccessDenied, Conflict, InvalidRequest, NotFound, ProxyError
from hmsproxy.store import Store, StoreError

log = logging.getLogger(__name__)

METHOD = "hmsproxy_execute"


class DdlStatements:
    def __init__(
        self,
        store: Store,
        config: Callable[[], Config],
        exists_locally: Callable[[str], bool] | None = None,
        table_exists_locally: Callable[[str, str], bool] | None = None,
    ):
        self.store = store
        self._config = config  # read per call, so a reload's remotes.creators applies at once
        #: Lent by the remotes feature, which knows the backends' databases (None: not checked).
        self.exists_locally = exists_locally
        self.table_exists_locally = table_exists_locally

    def on_request(self, call: Call):
        if call.method != METHOD:
            return None
        rs = self.run(call.args.statements or "", call.session.user, call.args.current_database)
        result = call.spec.result_cls()
        result.success = idl.hms.HmsProxyResult(columns=list(rs.columns), rows=[list(r) for r in rs.rows])
        return result

    def context(self, user: str | None, current_database: str | None) -> ExecContext:
        return ExecContext(
            self.store,
            user,
            current_database or "default",
            self._config().remotes.creators,
            self.exists_locally,
            self.table_exists_locally,
        )

    def run(self, text: str, user: str | None, current_database: str | None) -> ResultSet:
        """Run a script; answers the last statement's result (an empty one for an empty script)."""
        ctx = self.context(user, current_database)
        try:
            statements = parse(text)
        except DdlSyntaxError as e:
            raise ProxyError(f"hmsproxy: syntax error at {e}") from None
        result = ResultSet([], [])
        for n, statement in enumerate(statements, start=1):
            where = f" (statement {n} of {len(statements)})" if len(statements) > 1 else ""
            result = self.execute(statement, ctx, where)
        return result

    def execute(self, statement: Statement, ctx: ExecContext, where: str = "") -> ResultSet:
        """Run one statement; its refusal becomes the ProxyError a client's call declares best.

        Both ways to make a remote come through here: hmsproxy_execute, and plain
        clients' CREATE DATABASE/TABLE with hmsproxy.remote.* properties (features/remotes.py).
        """
        try:
            result = execute(statement, ctx)
        except DdlError as e:
            error = _PROXY_ERRORS.get(type(e), InvalidRequest)
            raise error(f"hmsproxy: {e}{where}") from None
        except StoreError as e:
            log.warning("store error executing %r: %s", statement.source or statement, e)
            raise ProxyError(f"hmsproxy: the proxy's store failed: {e}{where}") from None
        log.info("user %s: %s", ctx.user, statement.source or statement)
        return result


#: How each kind of refused statement reaches a client.
_PROXY_ERRORS = {RemoteAlreadyExists: Conflict, NotPermitted: AccessDenied, NoSuchObject: NotFound}

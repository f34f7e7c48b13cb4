"""hmsproxy's own statements over Thrift: hmsproxy_execute_script (one result per statement) and
hmsproxy_execute (the last result, for clients from before it).

The grammar is composed from the installed features' StatementSets and each statement
runs with the runner its feature gives (Feature.statement_runners), as the connection's
set_ugi user. Errors reach the client as MetaException naming the failing statement.
"""

from __future__ import annotations

import logging
from functools import cached_property

from hmsproxy.ddl import executor
from hmsproxy.ddl.errors import DdlSyntaxError
from hmsproxy.ddl.registry import Grammar
from hmsproxy.ddl.results import ResultSet
from hmsproxy.ddl.statements import Statement
from hmsproxy.pipeline.call import Call
from hmsproxy.pipeline.errors import ProxyError
from hmsproxy.pipeline.platform import Feature
from hmsproxy.protocol import idl
from hmsproxy.store import StoreError

log = logging.getLogger(__name__)


class Statements(Feature):
    name = "statements"
    memoizable_verdict = True  # its verdicts read only the call, the caller and its records
    methods = frozenset({"hmsproxy_execute", "hmsproxy_execute_script"})

    @cached_property
    def grammar(self) -> Grammar:
        return Grammar(f.statements for f in self.platform.features if f.statements is not None)

    def on_request(self, call: Call):
        args = call.args
        results = self.run_script(args.statements or "", call.session.user, args.current_database, call=call)
        answer = call.spec.result_cls()
        if call.method == "hmsproxy_execute_script":
            answer.success = [_as_thrift(rs) for rs in results]
        else:
            answer.success = _as_thrift(results[-1] if results else ResultSet([], []))
        return answer

    def run_script(self, text: str, user: str | None, current_database: str | None, *, call: Call | None = None) -> list[ResultSet]:
        """Every statement's result, in order; the first error stops the script (nothing runs on a syntax error).
        `call`: the client call being handled (its side effects then use its session's connections)."""
        try:
            statements = self.grammar.parse(text)
        except DdlSyntaxError as e:
            raise DdlSyntaxError(f"hmsproxy: syntax error at {e}", e.line, e.column, e.expected) from None
        results = []
        for n, statement in enumerate(statements, start=1):
            where = f" (statement {n} of {len(statements)})" if len(statements) > 1 else ""
            results.append(self.execute(statement, user, current_database, where, call=call))
        return results

    def execute(
        self, statement: Statement, user: str | None, current_database: str | None, where: str = "", *, call: Call | None = None
    ) -> ResultSet:
        """Run one statement as `user` (`call`'s client, over its session's connections, when one is
        being handled; else on a private session); a refusal becomes the ProxyError a client's call declares best.

        Other features run statements through here too (remotes: a plain client's CREATE DATABASE
        with hmsproxy.remote.* properties is the CREATE REMOTE DATABASE it means).
        """
        runners = {t: r for f in self.platform.features for t, r in f.statement_runners().items()}
        with self.platform.client_for(call) if call is not None else self.platform.client(user) as client:
            ctx = executor.StatementContext(user, current_database, client, self.platform.config())
            try:
                result = executor.run(statement, runners, ctx)
            except ProxyError as e:
                message = str(e) if str(e).startswith("hmsproxy:") else f"hmsproxy: {e}"
                raise type(e)(f"{message}{where}") from None
            except StoreError as e:
                log.warning("store error executing %r: %s", statement.source or statement, e)
                raise ProxyError(f"hmsproxy: the proxy's store failed: {e}{where}") from None
        log.info("user %s: %s", user, statement.source or statement)
        return result


def _as_thrift(rs: ResultSet):
    return idl.hms.HmsProxyResult(columns=list(rs.columns), rows=[list(r) for r in rs.rows])

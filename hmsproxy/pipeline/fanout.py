"""Calls asked of every metastore at once, each within its own deadline.

A backend that is slow or down is left out of the answer (and logged) instead
of delaying or failing it; only the primary's failure fails the call, since
the primary holds the databases a client expects to be there (set_ugi, which
lists nothing, fails for none). An application error the primary answers is
passed on as it is: it is the metastore's answer to the request, not an outage.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

from thriftpy2.thrift import TApplicationException

from hmsproxy.pipeline.errors import AccessDenied, InvalidRequest
from hmsproxy.protocol import idl
from hmsproxy.routing.methods import METHOD_SPECS
from hmsproxy.routing.naming import MetastoreNaming, split_catalog
from hmsproxy.routing.patterns import hive_match, is_literal
from hmsproxy.routing.router import Router, UnknownDatabase
from hmsproxy.upstream.session import Session
from hmsproxy.upstream.wire import BackendUnavailable

log = logging.getLogger(__name__)


class FanOutFailed(Exception):
    pass


class FanOut:
    def __init__(self, executor: ThreadPoolExecutor, base_timeout_ms: int):
        self.executor = executor
        self.base_timeout_ms = base_timeout_ms

    def gather(self, session: Session, namings: list[MetastoreNaming], method: str, make_args, *, primary_required: bool = True):
        """[(naming, result struct)] for every metastore that answered in time, in config order.
        `primary_required=False`: the primary's failure leaves it out too (a call that lists nothing)."""
        start = time.monotonic()
        read_only = METHOD_SPECS[method].reads
        # Each leg on connections of its own (session.Leg): one left behind at its deadline never
        # shares a connection with this session's next calls.
        legs = [(n, session.leg(n.name)) for n in namings]
        futures = [(n, leg, self.executor.submit(leg.run, n.metastore, method, make_args(n), read_only=read_only)) for n, leg in legs]
        answers = []
        for naming, leg, fut in futures:
            deadline = start + (self.base_timeout_ms + naming.metastore.latency_ms) / 1000
            try:
                answers.append((naming, fut.result(timeout=max(0.0, deadline - time.monotonic()))))
                continue
            except FutureTimeout:
                reason = f"no answer within {self.base_timeout_ms + naming.metastore.latency_ms} ms"
                leg.abandon(f"{reason} (the fan-out's deadline)")  # its call ends now, its connection is closed
                session.backends.note_timeout(naming.name, reason)  # also counted for /metrics
            except BackendUnavailable as e:
                reason = e.reason
            except TApplicationException as e:  # the metastore's own answer to this request
                if naming.metastore.primary and primary_required:
                    raise  # the client gets it as the primary gave it (show_compact without its request on Hive 4)
                reason = str(e)
            except Exception as e:
                reason = str(e)
            log.warning("%s: left metastore '%s' out: %s", method, naming.name, reason)
            if naming.metastore.primary and primary_required:
                raise FanOutFailed(f"{method}: primary metastore '{naming.name}' failed: {reason}")
        return answers


def _no_args(method: str):
    args = getattr(idl.HmsProxy, method + "_args")()
    return lambda _naming: args


class FanOutCalls:
    """The merged answers of the fan-out methods."""

    def __init__(self, fanout: FanOut):
        self.fanout = fanout

    def client_databases(self, session: Session, router: Router) -> list[str]:
        seen: dict[str, str] = {}
        names = []
        for naming, result in self.fanout.gather(session, router.namings, "get_all_databases", _no_args("get_all_databases")):
            for remote in result.success or []:
                for client in router.client_names(naming, remote):
                    if client in seen:
                        router.report_clash(client, [seen[client], naming.name])
                        continue
                    seen[client] = naming.name
                    names.append(client)
        return names

    def get_all_databases(self, session: Session, router: Router, args):
        return self.client_databases(session, router)

    def get_databases(self, session: Session, router: Router, args):
        _, pattern = split_catalog(args.pattern or "*")
        return [n for n in self.client_databases(session, router) if hive_match(pattern, n)]

    def get_table_meta(self, session: Session, router: Router, args):
        namings = router.namings
        _, db_patterns = split_catalog(args.db_patterns or "*")
        if is_literal(db_patterns):
            try:
                namings = [router.route(db_patterns).naming]
            except UnknownDatabase:
                return []

        def make_args(naming):
            # Ask each backend for all its databases; names are matched on the client side.
            return idl.HmsProxy.get_table_meta_args(db_patterns="*", tbl_patterns=args.tbl_patterns, tbl_types=args.tbl_types)

        metas = []
        for naming, result in self.fanout.gather(session, namings, "get_table_meta", make_args):
            for meta in result.success or []:
                client = router.client_name(naming, meta.dbName)
                if client is None or not hive_match(db_patterns, client):
                    continue
                if not naming.table_visible(meta.dbName, meta.tableName):
                    continue
                meta.dbName = client
                metas.append(meta)
        return metas

    def get_all_functions(self, session: Session, router: Router, args):
        functions = []
        for naming, result in self.fanout.gather(session, router.namings, "get_all_functions", _no_args("get_all_functions")):
            for fn in (result.success.functions if result.success else None) or []:
                client = router.client_name(naming, fn.dbName) if fn.dbName else None
                if client is None:
                    continue
                fn.dbName = client
                functions.append(fn)
        return idl.hive.GetAllFunctionsResponse(functions=functions)

    def set_ugi(self, session: Session, router: Router, args):
        # Who the caller is lists no database: with the primary down, statements on the proxy's own
        # store (SHOW REMOTE DATABASES, ...) and federated databases still serve this client. A
        # connection opened later sends set_ugi itself (Session). A Kerberos-authenticated client
        # cannot claim another name: the metastores hear its own.
        if not session.accepts_set_ugi:
            args = idl.HmsProxy.set_ugi_args(user_name=session.user, group_names=session.groups)
        elif args.user_name is None:  # Hive fails on it (an internal error); no answer could carry it
            raise InvalidRequest("hmsproxy: set_ugi needs a user name")
        elif session.principal is not None:  # a proxy user's user, as Hadoop's createProxyUser: alice@REALM acts as alice
            user = session.short_name(args.user_name)
            if user is None:
                raise AccessDenied(f"hmsproxy: no auth-to-local rule gives {args.user_name} a user name")
            args = idl.HmsProxy.set_ugi_args(user_name=user, group_names=args.group_names)
        refused = session.impersonation_refusal(args.user_name)  # a proxy user beyond its hosts/users/groups
        if refused:
            raise AccessDenied(f"hmsproxy: {refused}")
        answers = self.fanout.gather(session, router.namings, "set_ugi", lambda _n: args, primary_required=False)
        # Recorded after the fan-out so connections it opened don't send set_ugi twice.
        session.set_ugi(args.user_name, args.group_names)
        return answers[0][1].success if answers else [args.user_name]

"""Every call's path through the proxy, and the one error boundary.

dispatch() finds the method's spec, lets local, fan-out, primary and routed
calls take their ways, and turns anything that goes wrong into an exception
the IDL declares for the method, or a TApplicationException in Java's words.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from thriftpy2.thrift import TApplicationException

from hmsproxy import __version__, idl
from hmsproxy.backends import Backends
from hmsproxy.call import (
    APPLICATION_ERROR,
    HOOKS,
    INTERNAL_ERROR,
    NOT_FOUND,
    UNAVAILABLE,
    Call,
    result_outcome,
)
from hmsproxy.config_model import Config
from hmsproxy.errors import (
    NOT_FOUND_TYPES,
    UNAVAILABLE_TYPES,
    NotFound,
    ProxyError,
    declared_result,
    internal_error,
)
from hmsproxy.features.access import AccessControl
from hmsproxy.routing.fanout import FanOut, FanOutCalls, FanOutFailed
from hmsproxy.routing.methods import METHOD_SPECS, TABLE_CREATING, Kind, MethodSpec, locate
from hmsproxy.routing.rewrite import rewrite_struct, rewrite_value
from hmsproxy.routing.router import DatabaseDirectory, Route, Router, UnknownDatabase
from hmsproxy.routing.visibility import filter_tables, has_table_lists
from hmsproxy.session import Session
from hmsproxy.wire import BackendUnavailable

log = logging.getLogger(__name__)

#: Routed calls naming two databases that must live on the same metastore.
SECOND_DB_ARG = {"exchange_partition": "dest_db", "exchange_partitions": "dest_db"}


class Handler:
    def __init__(self, config: Config):
        self.started_at = int(time.time())
        self.backends = Backends(config)
        self.executor = ThreadPoolExecutor(max_workers=32, thread_name_prefix="fanout")
        self._directory_session = Session(self.backends, "directory")
        self._directory_lock = threading.Lock()
        self.directory = DatabaseDirectory(self._list_databases)
        self.access = AccessControl()
        self._hooks: dict[str, list] = {name: [] for name in HOOKS}
        #: Called by close(), last added first (e.g. the store's close).
        self.closers: list = []
        self.add_feature(self.access)
        self.router: Router
        self.fanout: FanOutCalls
        self.apply_config(config)

    def add_feature(self, feature):
        """Plug in a feature (returned): its hook methods run in the order features were added."""
        for name in HOOKS:
            hook = getattr(feature, name, None)
            if hook is not None:
                self._hooks[name].append(hook)
        return feature

    # -- configuration -------------------------------------------------------------

    def apply_config(self, config: Config) -> None:
        """Swap in a new config snapshot; calls already routed finish on the old one."""
        self.backends.reconfigure(config)
        self.directory.forget()
        self.fanout = FanOutCalls(FanOut(self.executor, config.server.fanout_timeout_ms))
        self.router = Router(config, self.directory)

    @property
    def config(self) -> Config:
        return self.router.config

    def _list_databases(self, metastore_name: str) -> set[str] | None:
        with self._directory_lock:
            try:
                ms = self.backends.metastore(metastore_name)
                result = self._directory_session.call(ms, "get_all_databases", idl.HmsProxy.get_all_databases_args(), read_only=True)
            except (BackendUnavailable, TApplicationException, KeyError) as e:
                log.warning("can't list databases of metastore '%s': %s", metastore_name, e)
                return None
        return {d.lower() for d in result.success or []}

    # -- the error boundary ----------------------------------------------------------

    def dispatch(self, session: Session, method: str, args):
        """Handle one call; returns the `<method>_result` struct or raises TApplicationException."""
        spec = METHOD_SPECS[method]
        call = Call(session, spec, args, self.router)  # one config snapshot for the whole call
        try:
            result = self._handle(call)
            call.outcome, call.error = result_outcome(result)
            return result
        except TApplicationException as e:
            call.outcome, call.error = APPLICATION_ERROR, str(e)
            raise
        except ProxyError as e:
            call.outcome, call.error = e.outcome, str(e)
            return declared_result(spec, e.preferred, str(e))
        except UnknownDatabase as e:
            call.outcome, call.error = NOT_FOUND, str(e)
            return declared_result(spec, NOT_FOUND_TYPES, f"hmsproxy: {e}")
        except (BackendUnavailable, FanOutFailed) as e:
            call.outcome, call.error = UNAVAILABLE, str(e)
            subject = f"{call.subject}: " if call.subject else ""
            return declared_result(spec, UNAVAILABLE_TYPES, f"hmsproxy: {subject}{e}")
        except Exception as e:
            call.outcome, call.error = INTERNAL_ERROR, repr(e)
            log.exception("internal error processing %s", method)
            raise internal_error(method) from e
        finally:
            call.elapsed_s = time.perf_counter() - call.started
            for hook in self._hooks["on_complete"]:
                try:
                    hook(call)
                except Exception:  # an observer's failure must never fail the call
                    log.exception("on_complete hook %r failed", hook)

    def _run(self, hook_name: str, call: Call):
        """Run one kind of hook; the first that answers wins."""
        for hook in self._hooks[hook_name]:
            answer = hook(call)
            if answer is not None:
                return answer
        return None

    def _handle(self, call: Call):
        spec, router = call.spec, call.router
        if spec.kind is Kind.LOCAL:
            call.backend = "hmsproxy"
            # Features may answer the proxy's own calls (e.g. hmsproxy_execute: features/ddl.py).
            answer = self._run("on_request", call)
            return answer if answer is not None else self._local(spec, call.args)
        if spec.kind is Kind.FANOUT:
            call.backend = "*"
            result = spec.result_cls()
            result.success = getattr(self.fanout, spec.name)(call.session, router, call.args)
            for hook in self._hooks["on_response"]:  # e.g. remotes add their databases
                hook(call, result)
            return result
        if spec.kind is Kind.ROUTED:
            call.client_db = locate(call.args, spec.db)
            call.table = locate(call.args, spec.table) if spec.table else None
        answer = self._run("on_request", call)
        if answer is not None:
            call.backend = call.backend or "hmsproxy"
            return answer
        if call.route is None:
            call.route = router.route(call.client_db) if call.client_db else router.route_primary()
        call.backend = call.route.metastore.name
        if call.client_db:
            self._check_second_db(spec, router, call.route, call.args)
            self._check_table_visible(spec, call.route, call.table)
        answer = self._run("on_routed", call)
        if answer is not None:
            return answer
        result = self._forward(call.session, spec, call.route, call.args)
        if call.client_db and has_table_lists(spec.name) and result.success is not None:
            result.success = filter_tables(spec.name, call.route, result.success)
        for hook in self._hooks["on_response"]:
            hook(call, result)
        return result

    def _forward(self, session: Session, spec: MethodSpec, route: Route, args):
        rewrite = not route.naming.identity
        if rewrite and route.backend_db:
            rewrite_struct(args, route.inbound)
        # As in Waggle Dance, only get_* calls may use a metastore's read-only URIs.
        result = session.call(route.metastore, spec.name, args, read_only=spec.name.startswith("get"))
        if rewrite and spec.success_type is not None and result.success is not None:
            rewrite_value(result.success, spec.success_type, route.outbound)
        return result

    @staticmethod
    def _check_table_visible(spec: MethodSpec, route: Route, table: str | None) -> None:
        if spec.name in TABLE_CREATING:
            return
        if table and not route.naming.table_visible(route.backend_db, table):
            raise NotFound(f"hmsproxy: table {route.outbound(route.backend_db)}.{table} is not mapped (mapped-tables)")

    @staticmethod
    def _check_second_db(spec: MethodSpec, router: Router, route: Route, args) -> None:
        other = SECOND_DB_ARG.get(spec.name)
        if other is None or not getattr(args, other, None):
            return
        if router.route(getattr(args, other)).metastore is not route.metastore:
            raise ProxyError(f"hmsproxy: {spec.name} needs both databases on the same metastore")

    # -- answered by the proxy itself ------------------------------------------------

    def _local(self, spec: MethodSpec, args):
        result = spec.result_cls()
        answers = {
            "getName": lambda: "hmsproxy",
            "getVersion": lambda: __version__,
            "getStatus": lambda: idl.fb303.fb_status.ALIVE,
            # The pid tells apart the worker processes sharing one port.
            "getStatusDetails": lambda: f"hmsproxy {__version__} (pid {os.getpid()}) serving {len(self.config.metastores)} metastores",
            "getCounters": dict,
            "getCounter": lambda: 0,
            "getOption": lambda: "",
            "getOptions": dict,
            "getCpuProfile": lambda: "",
            "aliveSince": lambda: self.started_at,
            "hmsproxy_describe": self.describe,
        }
        answer = answers.get(spec.name)
        if answer is not None:  # setOption, shutdown and reinitialize are accepted and ignored
            result.success = answer()
        return result

    def describe(self) -> str:
        from hmsproxy.config import describe

        lines = [describe(self.config), "", "backends:"]
        for m in self.config.metastores:
            st = self.backends.state(m.name)
            state = {None: "not contacted", True: "up", False: "DOWN"}[st.up]
            version = self.backends.version(m.name) or "?"
            err = f" (last error: {st.last_error})" if st.up is False and st.last_error else ""
            lines.append(f"  {m.name}: {state}, hive {version}{err}")
        for db, owners in sorted(self.router.clashes.items()):
            lines.append(f"clash: database '{db}' is on {', '.join(owners)}; served from '{owners[0]}'")
        if getattr(self, "remotes", None) is not None:  # features/remotes.py, wired by app.py
            lines += ["", *self.remotes.describe()]
        return "\n".join(lines)

    def close(self) -> None:
        for close in reversed(self.closers):
            try:
                close()
            except Exception:
                log.exception("closing %r failed", close)
        self._directory_session.close()
        self.executor.shutdown(wait=False, cancel_futures=True)

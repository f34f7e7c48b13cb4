"""Every call's path through the proxy, and the one error boundary.

dispatch() finds the method's spec, lets local, fan-out, primary and routed
calls take their ways, and turns anything that goes wrong into an exception
the IDL declares for the method, or a TApplicationException in Java's words.
Which quicker way a routed or primary call takes (shortcut, relay, metadata
cache, or the full path here) is decided in one place: fastpath.py.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from prometheus_client import CollectorRegistry
from thriftpy2.thrift import TApplicationException

from hmsproxy import __version__
from hmsproxy.config.model import Config
from hmsproxy.pipeline.answered_hits import AnsweredHits
from hmsproxy.pipeline.call import (
    APPLICATION_ERROR,
    INTERNAL_ERROR,
    NOT_FOUND,
    UNAVAILABLE,
    Call,
    result_outcome,
)
from hmsproxy.pipeline.error_names import in_client_names
from hmsproxy.pipeline.errors import (
    NOT_FOUND_TYPES,
    UNAVAILABLE_TYPES,
    InvalidRequest,
    Limited,
    NotFound,
    ProxyError,
    declared_result,
    internal_error,
)
from hmsproxy.pipeline.fanout import FanOut, FanOutCalls, FanOutFailed
from hmsproxy.pipeline.fastpath import RELAYED, FastPath
from hmsproxy.pipeline.internal_client import InternalClient
from hmsproxy.pipeline.plan import MethodPlan
from hmsproxy.pipeline.platform import Feature, FeatureRegistry, Platform
from hmsproxy.pipeline.shortcuts import changes_nothing
from hmsproxy.protocol import idl
from hmsproxy.protocol.framing import Message
from hmsproxy.protocol.relay import RelayBroken
from hmsproxy.protocol.required import missing_argument, unset_required
from hmsproxy.routing.default_catalog import fill_default_catalog, without_default_catalog
from hmsproxy.routing.methods import METHOD_SPECS, Kind, MethodSpec, other_databases
from hmsproxy.routing.rewrite import rewrite_struct, rewrite_value
from hmsproxy.routing.router import DatabaseDirectory, Route, Router, UnknownDatabase
from hmsproxy.routing.visibility import filter_tables
from hmsproxy.upstream.backends import Backends
from hmsproxy.upstream.cache.metadata import cache_summary
from hmsproxy.upstream.session import Session
from hmsproxy.upstream.slots import BackendBusy
from hmsproxy.upstream.wire import BackendUnavailable

log = logging.getLogger(__name__)


class Handler:
    def __init__(self, config: Config, *, store=None, connect=None):
        """`store`: the proxy's own database (features keep their state there); `connect`: how
        backend connections are made (hmsproxy.testing's fakes in unit tests; default Thrift)."""
        self.started_at = int(time.time())
        self.backends = Backends(config) if connect is None else Backends(config, connect=connect)
        self.store = store
        self.executor = ThreadPoolExecutor(max_workers=32, thread_name_prefix="fanout")
        self._directory_session = Session(self.backends, "directory")
        self._directory_lock = threading.Lock()
        self.directory = DatabaseDirectory(self._list_databases)
        self.features = FeatureRegistry()
        #: Shortcut, relay, metadata cache or the full path: the one decision (fastpath.py).
        self.fastpath = FastPath(self.backends, self.features)
        #: Relay decisions reused for repeated reads (shortcuts.py).
        self.shortcuts = self.fastpath.shortcuts
        #: Shortcut hits the server answered in C, their on_complete hooks to run (answered_hits.py).
        self.answered_hits = AnsweredHits(self.completed)
        self.platform = Platform(
            backends=self.backends,
            features=self.features,
            executor=self.executor,
            metrics=CollectorRegistry(),
            config=lambda: self.config,
            store=store,
            client=self.internal_client,
            client_for=self.internal_client_for,
            router=lambda: self.router,
            complete_answered=self.answered_hits.complete,
        )
        self.router: Router
        self.fanout: FanOutCalls
        #: Which code answers repeated reads (downstream/server.py sets it when it serves this handler).
        self.serving_path = "Python (no server attached)"
        #: Set when a SIGTERM drain begins (ops/drain.py): /readyz fails from then on.
        self.draining = threading.Event()
        self.apply_config(config)

    def install(self, *feature_classes: type[Feature]) -> None:
        """Build and plug in features, in hook order, and hand them the current config."""
        for cls in feature_classes:
            self.features.add(cls(self.platform)).configure(self.config)
        self.features.reindex()  # configured: their idle hooks are known now
        self.fastpath.features_changed()

    def internal_client(self, user: str | None) -> InternalClient:
        """Calls through this proxy's own routing as `user`, on a private session: it opens its own
        backend connections (close it after use)."""
        session = Session(self.backends, "hmsproxy")
        if user is not None:
            session.set_ugi(user, [])
        return InternalClient(self.dispatch, session)

    def internal_client_for(self, call: Call) -> InternalClient:
        """Calls through this proxy's own routing as `call`'s client, over its session's backend
        connections (Session.borrowed): for hooks and statements while `call` is handled."""
        return InternalClient(self.dispatch, call.session.borrowed())

    # -- configuration -------------------------------------------------------------

    def apply_config(self, config: Config) -> None:
        """Swap in a new config snapshot; calls already routed finish on the old one."""
        self.backends.reconfigure(config)
        self.directory.forget()
        self.fanout = FanOutCalls(FanOut(self.executor, config.server.fanout_timeout_ms))
        self.router = Router(config, self.directory)
        # Shortcuts name the router they were made on; dropping them all here also keeps the hit loop
        # in C, which compares them with the router it was given, from serving one made before.
        self.shortcuts.forget_all()
        self.features.configure(config)
        self.fastpath.features_changed()  # which hooks are idle may have changed with the config

    # -- client sessions (server.py) -----------------------------------------------------

    def session_opened(self, session: Session) -> None:
        self.features.session_opened(session)

    def session_closed(self, session: Session) -> None:
        self.features.session_closed(session)
        session.close()

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

    def dispatch(self, session: Session, method: str, args, message: Message | None = None, replay: tuple | None = None, reply_sink=None):
        """Handle one call; returns the `<method>_result` struct or raises TApplicationException.
        `message`: the call as the client sent it (server.py), decoded only if needed (then `args` is
        None); a read may be forwarded as it is. `replay`: Call.replay. `reply_sink`: Call.reply_sink."""
        spec = METHOD_SPECS[method]
        if not changes_nothing(method):
            self.shortcuts.forget_all()  # before it takes effect: no read decided from here on reuses an older decision
        call = Call(session, spec, args, self.router, message, reply_sink)  # one config snapshot for the whole call
        call.replay = replay
        try:
            for hook in self.features.hooks("on_arrival", spec):  # limits: before any work
                hook(call)
            result = self._handle(call)
            if result is RELAYED:  # already sent to the client undecoded
                call.outcome, call.error = call.relayed_outcome
                return result
            call.outcome, call.error = result_outcome(result)
            return result
        except TApplicationException as e:
            call.outcome, call.error = APPLICATION_ERROR, str(e)
            raise
        except ProxyError as e:
            call.outcome, call.error = e.outcome, str(e)
            return declared_result(spec, e.preferred, str(e))
        except BackendBusy as e:  # the metastore's concurrency cap (upstream/slots.py)
            call.outcome, call.error = Limited.outcome, str(e)
            return declared_result(spec, Limited.preferred, str(e))
        except UnknownDatabase as e:
            call.outcome, call.error = NOT_FOUND, str(e)
            return declared_result(spec, NOT_FOUND_TYPES, f"hmsproxy: {e}")
        except (BackendUnavailable, FanOutFailed) as e:
            call.outcome, call.error = UNAVAILABLE, str(e)
            subject = f"{call.subject}: " if call.subject else ""
            return declared_result(spec, UNAVAILABLE_TYPES, f"hmsproxy: {subject}{e}")
        except RelayBroken as e:  # part of the answer reached the client: server.py closes its connection
            call.outcome, call.error = UNAVAILABLE, str(e)
            raise
        except Exception as e:
            unset = _unset_required(call)
            if unset is not None:  # a request the metastore would refuse while reading it: say so as it would
                call.outcome, call.error = APPLICATION_ERROR, unset
                raise TApplicationException(TApplicationException.PROTOCOL_ERROR, unset) from e
            missing = missing_argument(call.args, method)
            if missing is not None:  # Hive fails on it too (a NullPointerException): the client's mistake, said so
                call.outcome, call.error = InvalidRequest.outcome, missing
                if not spec.exceptions:  # Java's processor answers such a failure as an internal error
                    raise internal_error(method, missing) from e
                return declared_result(spec, InvalidRequest.preferred, missing)
            call.outcome, call.error = INTERNAL_ERROR, repr(e)
            log.exception("internal error processing %s", method)
            raise internal_error(method) from e
        finally:
            if not changes_nothing(method):
                self.shortcuts.forget_all()  # again once it took effect: reads decided meanwhile saw the old state
            call.elapsed_s = time.perf_counter() - call.started
            self.completed(call)

    def completed(self, call: Call) -> None:
        """The on_complete hooks of a call that ended (here, or in the hit loop: downstream/hits.py)."""
        for hook in self.features.hooks("on_complete", call.spec):
            try:
                hook(call)
            except Exception:  # an observer's failure must never fail the call
                log.exception("on_complete hook %r failed", hook)

    def _run(self, hook_name: str, call: Call):
        """Run one kind of hook; the first that answers wins."""
        for hook in self.features.hooks(hook_name, call.spec):
            answer = hook(call)
            if answer is not None:
                return answer
        return None

    def _handle(self, call: Call):
        spec, router, fastpath = call.spec, call.router, self.fastpath
        remember = fastpath.shortcut(call)  # 1. a shortcut (only reads routed by database or to the primary)
        if remember is RELAYED:
            return RELAYED
        if spec.kind is Kind.LOCAL:
            call.backend = "hmsproxy"
            # Features may answer the proxy's own calls (e.g. hmsproxy_execute: features/statements.py).
            answer = self._run("on_request", call)
            return answer if answer is not None else self._local(spec, call.args)
        if spec.kind is Kind.FANOUT:
            call.backend = "*"
            result = spec.result_cls()
            result.success = getattr(self.fanout, spec.name)(call.session, router, call.args)
            for hook in self.features.hooks("on_response", spec):  # e.g. the catalog adds virtual databases
                hook(call, result)
            return result
        method = fastpath.method_plans[spec.name]
        if spec.kind is Kind.ROUTED:
            call.client_db, call.table = spec.named(call.args)
        answer = self._run("on_request", call)
        if answer is not None:
            call.backend = call.backend or "hmsproxy"
            return answer
        routed_by_feature = call.route is not None
        if call.route is None:
            call.route = router.route(call.client_db) if call.client_db else router.route_primary()
        route = call.route
        call.backend = route.metastore.name
        if call.client_db:
            if method.several_databases:
                self._check_same_metastore(spec, router, route, call.args)
            if method.checks_table and call.table and route.naming.hides_any_tables:
                self._check_table_visible(route, call.table)
        answer = self._run("on_routed", call)
        if answer is not None:
            return answer
        try:
            plan = fastpath.plan(call, method, remember, routed_by_feature=routed_by_feature)
            if plan.relay is not None:  # 2. the relay
                fastpath.relay(call, plan, remember)
                return RELAYED
            result = self._forward(call.session, method, call.route, call.args)  # 3. the metadata cache (Session.call), else 4.
        except BackendUnavailable as e:  # nothing reached the client yet: a feature may answer instead
            for hook in self.features.hooks("on_unavailable", spec):
                answer = hook(call, e)
                if answer is not None:
                    return answer
            raise
        in_client_names(call, result)  # a declared exception's message, in the names the client used
        if call.client_db and method.lists_tables and result.success is not None:
            result.success = filter_tables(spec, call.route, result.success)
        for hook in self.features.hooks("on_response", spec):
            hook(call, result)
        return result

    def _forward(self, session: Session, method: MethodPlan, route: Route, args):
        spec, metastore = method.spec, route.metastore
        rewrite = not route.naming.identity
        if rewrite and route.backend_db:
            rewrite_struct(args, route.inbound)
        if route.catalog is not None and not session.knows_catalogs(metastore):
            rewrite_struct(args, without_default_catalog)  # "@hive#db" is plain "db" to a Hive 2.3 metastore
        # As in Waggle Dance, only reads (get_* calls) may use a metastore's read-only URIs.
        result = session.call(metastore, spec.name, args, read_only=spec.reads)
        if spec.success_type is not None and result.success is not None:
            if rewrite:
                rewrite_value(result.success, spec.success_type, route.outbound)
            if method.catalog_fill is not None:
                fill_default_catalog(result.success, spec.success_type)  # Hive 3+ clients expect it
        return result

    @staticmethod
    def _check_table_visible(route: Route, table: str) -> None:
        if not route.naming.table_visible(route.backend_db, table):
            # Waggle Dance's words (a client may look for them), in the database name the client used.
            raise NotFound(f"hmsproxy: {route.outbound(route.backend_db)}.{table} table not found in any mappings (mapped-tables)")

    @staticmethod
    def _check_same_metastore(spec: MethodSpec, router: Router, route: Route, args) -> None:
        """A call naming several databases goes to one metastore, so they must all live there."""
        for db in other_databases(spec, args):
            if router.route(db).metastore is not route.metastore:
                raise ProxyError(
                    f"hmsproxy: {spec.name} needs all its databases on one metastore: {db!r} is not on '{route.metastore.name}'"
                )

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

        sections = [f.config_section for f in self.features if f.config_section is not None]
        lines = [describe(self.config, sections), "", f"repeated reads: {self.serving_path}", "", "backends:"]
        for m in self.config.metastores:
            st = self.backends.state(m.name)
            state = {None: "not contacted", True: "up", False: "DOWN"}[st.up]
            version = self.backends.version_label(m.name) or "?"
            err = f" (last error: {st.last_error})" if st.up is False and st.last_error else ""
            lines.append(f"  {m.name}: {state}, hive {version}{err}")
            cache = self.backends.caches.get(m.name)
            if cache is not None:
                lines.append(f"    cache: {cache_summary(cache, self.backends.follower(m.name))}")
        for db, owners in sorted(self.router.clashes.items()):
            lines.append(f"clash: database '{db}' is on {', '.join(owners)}; served from '{owners[0]}'")
        lines += self.features.describe()
        return "\n".join(lines)

    def close(self) -> None:
        self.features.close()
        if self.store is not None:
            self.store.close()
        self._directory_session.close()
        self.backends.close()
        self.executor.shutdown(wait=False, cancel_futures=True)


def _unset_required(call: Call) -> str | None:
    """Java's refusal of a request missing a required field, if the call's arguments decode to one."""
    try:
        return unset_required(call.args)
    except Exception:  # arguments that don't even decode: the internal error stands
        return None

"""The feature platform: what a feature is, what it is given, and the registry that runs features.

A feature is a class (see ``Feature``) that may bring any of:

- hooks on the calls it cares about (``methods`` or ``wants``): ``on_arrival``, ``on_request``, ``on_routed``,
  ``on_unavailable``, ``on_response``, ``on_complete`` (see call.py for the verdicts each may give);
- its own config section (``config_section``), parsed and validated by the config loader and
  handed over again on every reload through ``configure``;
- its own tables in the proxy's store (``store_schema``: a component with its own migrations
  and generation counter);
- its own statements (``statements``: a grammar fragment, see ddl/registry.py) and their runners
  (``statement_runners``);
- virtual databases and tables in every listing (``virtual_databases`` / ``virtual_tables``,
  read by ``features/catalog.py``);
- readiness checks, metrics (in ``platform.metrics``), lines for ``hmsproxy status``, and
  typed per-session state (``new_session_state``).

The composition root (app.py) lists the feature classes; the core (handler.py, server.py)
knows only this module. Features find each other by name: ``platform.features.get("remotes")``.

Everything a feature may declare is declared on ``Feature``; ``FeatureRegistry.add`` refuses at
start-up a feature with a hook-like name that is no hook (``on_reqest``), a hook that can't take
the pipeline's arguments (``HOOK_ARGUMENTS``) or a method in ``methods`` that the IDL does not
have, naming the feature and the closest known name (``FeatureError``).
"""

from __future__ import annotations

import difflib
import inspect
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from hmsproxy.config.sections import ConfigSection
from hmsproxy.routing.methods import METHOD_SPECS, MethodSpec

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

    from hmsproxy.config.model import Config
    from hmsproxy.ddl.registry import StatementSet
    from hmsproxy.ops.readiness import Check
    from hmsproxy.pipeline.call import Call
    from hmsproxy.pipeline.internal_client import InternalClient
    from hmsproxy.routing.router import Router
    from hmsproxy.store import Store
    from hmsproxy.store.schema import StoreSchema
    from hmsproxy.upstream.backends import Backends
    from hmsproxy.upstream.session import Session

log = logging.getLogger(__name__)

#: The hooks a feature may have, in the order a call meets them (call.py says what each may do).
HOOKS = ("on_arrival", "on_request", "on_routed", "on_unavailable", "on_response", "on_complete")
#: What the pipeline (handler.py) passes each hook, after the feature itself.
HOOK_ARGUMENTS = {
    "on_arrival": ("call",),
    "on_request": ("call",),
    "on_routed": ("call",),
    "on_unavailable": ("call", "error"),
    "on_response": ("call", "result"),
    "on_complete": ("call",),
}


class FeatureError(ValueError):
    """A feature that can't be installed as written (a misspelled hook, a method the IDL lacks):
    raised at start-up, before the proxy serves anything."""


@dataclass(frozen=True)
class Platform:
    """What every feature is given: the proxy's shared parts, never the handler itself."""

    backends: Backends
    features: FeatureRegistry
    executor: Executor
    #: Where features register their Prometheus metrics (rendered by the metrics feature).
    metrics: CollectorRegistry
    #: The current config snapshot (follows reloads).
    config: Callable[[], Config]
    #: The proxy's store; None when the handler runs without one (unit tests).
    store: Store | None
    #: ``client_for(call)``: calls metastores through the proxy's own routing (in process, through
    #: ``Handler.dispatch``) as `call`'s client, so access control, name rewriting and every
    #: feature's hooks apply; over the caller's own backend connections, so a hook that reads
    #: state opens none. For hooks and statements while `call` is being handled.
    client_for: Callable[[Call], InternalClient]
    #: ``client(user)``: the same as `user` on a private session with its own connections (connects,
    #: set_ugi, version probe): only for work that no client's call is waiting on.
    client: Callable[[str | None], InternalClient]
    #: The current router (follows reloads): which metastore and backend database a client name means.
    router: Callable[[], Router] = lambda: None  # type: ignore[assignment,return-value]
    #: Runs the on_complete hooks of calls already answered whose hooks wait (shortcut hits served in
    #: C: pipeline/answered_hits.py); the metrics feature asks before each scrape.
    complete_answered: Callable[[], None] = lambda: None


class Feature:
    """Base class of features: every attribute and method here is optional to override."""

    name: ClassVar[str] = ""
    #: The calls whose hooks run; None: every call (narrow it: hooks cost time on every call).
    methods: ClassVar[frozenset[str] | None] = None
    config_section: ClassVar[ConfigSection | None] = None
    store_schema: ClassVar[StoreSchema | None] = None
    statements: ClassVar[StatementSet | None] = None
    #: Writes this feature answers itself and checks against the write rules itself (access control
    #: skips them): where such a call writes is not the database it names.
    checks_own_writes: ClassVar[frozenset[str]] = frozenset()
    #: True when the feature routes every call on its virtual tables itself (on_request gives them a
    #: route, e.g. remote tables): the catalog then never answers their get_table.
    routes_its_tables: ClassVar[bool] = False
    #: Whether this feature's on_request/on_routed verdict on a call may be remembered: it depends on
    #: nothing but the method, the arguments, the caller's set_ugi user and groups and the feature's
    #: records (whose writes drop remembered decisions). False, the safe default: no relay decision on
    #: a call its hooks want is remembered (pipeline/fastpath.py, step 1), so its hooks see every such
    #: call, as a rule on how often, when or from where must. Declare True only for such pure rules.
    memoizable_verdict: ClassVar[bool] = False

    def __init__(self, platform: Platform):
        self.platform = platform

    def wants(self, spec: MethodSpec) -> bool:
        """Whether this feature's hooks run for `spec` (asked once per method, then cached)."""
        return self.methods is None or spec.name in self.methods

    def settings(self, config: Config):
        """This feature's section of `config` (its default when the file has none)."""
        section = self.config_section
        if section is None:
            return None
        return config.sections.get(section.key, section.default)

    # -- lifecycle -----------------------------------------------------------------------

    def configure(self, config: Config) -> None:
        """A config snapshot was applied (at start and on every reload)."""

    def session_opened(self, session: Session) -> None:
        """A client connected."""

    def session_closed(self, session: Session) -> None:
        """A client left (its session's backend connections are closed after this)."""

    def new_session_state(self) -> object | None:
        """This feature's state for one client, made when ``session.state(feature)`` is first asked."""
        return None

    def close(self) -> None:
        """The handler is shutting down."""

    # -- what operations see -------------------------------------------------------------

    def readiness_checks(self) -> list[Check]:
        return []

    def describe(self) -> list[str]:
        """Lines for ``hmsproxy status``."""
        return []

    def idle(self, hook: str) -> bool:
        """Whether this feature's `hook` has nothing to do under the config it was last given (asked
        after every configure): the registry then leaves it out of every call's hooks until the next
        one, so a feature that is not configured costs calls nothing (limits without `limits:`)."""
        return False

    def completes_after_answer(self, config: Config) -> bool:
        """Whether this feature's on_complete may run after the client has its answer, for a batch of
        calls at once (shortcut hits served in C, downstream/hits.py: within HIT_BATCH calls or
        IDLE_MS). False keeps every call its hooks want on the Python path, recorded before it is
        answered (audit's promise)."""
        return False

    def needs_result(self, call) -> bool:
        """Whether on_response must see this call's decoded answer (else it may be relayed as bytes,
        relay.py, and on_response does not run). Asked only of features whose on_response wants the call."""
        return True

    def statement_runners(self) -> Mapping[type, Callable]:
        """statement type -> ``run(statement, StatementContext) -> ResultSet`` for this feature's statements."""
        return {}

    # -- the virtual catalog (features/catalog.py asks only the features that override these) ----

    def virtual_databases(self, call) -> Iterable:
        """The ``VirtualDatabase``s this feature adds to every database listing; none by default."""
        return ()

    def virtual_tables(self, call, db: str | None) -> Iterable:
        """The ``VirtualTable``s it adds to local database `db`'s listings (None: of every database)."""
        return ()


class FeatureRegistry:
    """The handler's features in hook order, found by name; hooks indexed by method."""

    def __init__(self):
        self._features: list[Feature] = []
        self._by_name: dict[str, Feature] = {}
        self._hook_index: dict[tuple[str, str], tuple[Callable, ...]] = {}
        #: Counts reindex(): what was decided from the hooks holds while it stays (downstream/hits.py).
        self.version = 0

    def add(self, feature: Feature) -> Feature:
        if not feature.name:
            raise FeatureError(f"{type(feature).__name__} has no name")
        if feature.name in self._by_name:
            raise FeatureError(f"two features are called {feature.name!r}")
        check(feature)
        self._features.append(feature)
        self._by_name[feature.name] = feature
        self.reindex()
        return feature

    def get(self, name: str) -> Feature | None:
        return self._by_name.get(name)

    def __iter__(self) -> Iterator[Feature]:
        return iter(self._features)

    def hooks(self, hook: str, spec: MethodSpec) -> tuple[Callable, ...]:
        """The `hook` methods of the features that want `spec` and are not idle, in order (computed
        once per method and config)."""
        key = (hook, spec.name)
        index = self._hook_index
        found = index.get(key)
        if found is None:
            if hook not in HOOKS:
                raise ValueError(f"{hook!r} is not a hook ({', '.join(HOOKS)})")
            found = tuple(
                getattr(f, hook) for f in self._features if getattr(type(f), hook, None) is not None and f.wants(spec) and not f.idle(hook)
            )
            index[key] = found  # into the index it was read from: one made before a reindex is dropped with it
        return found

    def reindex(self) -> None:
        """The features' idle hooks may have changed (they were configured): hooks are looked up anew."""
        self._hook_index = {}  # a new dict, not clear(): a look-up under way stores into the old one
        self.version += 1

    # -- lifecycle, for every feature ------------------------------------------------------

    def configure(self, config: Config) -> None:
        for f in self._features:
            f.configure(config)
        self.reindex()

    def session_opened(self, session: Session) -> None:
        for f in self._features:
            f.session_opened(session)

    def session_closed(self, session: Session) -> None:
        for f in self._features:
            try:
                f.session_closed(session)
            except Exception:  # one feature's cleanup must not stop the others'
                log.exception("feature %s: session_closed failed", f.name)

    def close(self) -> None:
        for f in reversed(self._features):
            try:
                f.close()
            except Exception:
                log.exception("feature %s: close failed", f.name)

    def readiness_checks(self) -> list[Check]:
        return [check for f in self._features for check in f.readiness_checks()]

    def describe(self) -> list[str]:
        lines: list[str] = []
        for f in self._features:
            more = f.describe()
            if more:
                lines += ["", *more]
        return lines


def check(feature: Feature) -> None:
    """Raise FeatureError if `feature` names a hook or a method that does not exist (it would never
    run, silently) or has a hook that can't be called."""
    cls = type(feature)
    what = f"feature {feature.name!r} ({cls.__module__}.{cls.__qualname__})"
    for attr in dir(feature):
        if attr.startswith("on_") and attr not in HOOKS:
            raise FeatureError(f"{what}: {attr!r} is not a hook{_closest(attr, HOOKS)}; hooks are {', '.join(HOOKS)}")
    for hook in HOOKS:
        value = getattr(cls, hook, None)
        if value is None:
            continue
        if not callable(value):
            raise FeatureError(f"{what}: {hook} is {type(value).__name__}, not a method")
        _check_signature(what, hook, getattr(feature, hook))
    methods = feature.methods
    if methods is None:
        return
    if isinstance(methods, str) or not isinstance(methods, Iterable):
        raise FeatureError(f"{what}: methods must be a set of method names, not {type(methods).__name__}")
    for method in sorted(methods):
        if method not in METHOD_SPECS:
            raise FeatureError(f"{what}: methods names {method!r}, which the metastore IDL does not have{_closest(method, METHOD_SPECS)}")


def _check_signature(what: str, hook: str, bound: Callable) -> None:
    """A hook that the pipeline's arguments can't be bound to would fail on the first call it meets."""
    arguments = HOOK_ARGUMENTS[hook]
    try:
        inspect.signature(bound).bind(*arguments)
    except TypeError as e:
        raise FeatureError(f"{what}: {hook} must take ({', '.join(arguments)}): {e}") from None
    except ValueError:  # a builtin without a signature: nothing to check
        pass


def _closest(name: str, known: Iterable[str]) -> str:
    found = difflib.get_close_matches(name, list(known), n=1)
    return f" (did you mean {found[0]!r}?)" if found else ""

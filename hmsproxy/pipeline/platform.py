"""The feature platform: what a feature is, what it is given, and the registry that runs features.

A feature is a class (see ``Feature``) that may bring any of:

- hooks on the calls it cares about (``methods`` or ``wants``): ``on_request``, ``on_routed``,
  ``on_response``, ``on_complete`` (see call.py for the verdicts each may give);
- its own config section (``config_section``), parsed and validated by the config loader and
  handed over again on every reload through ``configure``;
- its own tables in the proxy's store (``store_schema``: a component with its own migrations
  and generation counter);
- its own statements (``statements``: a grammar fragment, see ddl/registry.py) and their runners
  (``statement_runners``);
- virtual databases and tables in every listing (``features/catalog.py``'s ``CatalogSource``);
- readiness checks, metrics (in ``platform.metrics``), lines for ``hmsproxy status``, and
  typed per-session state (``new_session_state``).

The composition root (app.py) lists the feature classes; the core (handler.py, server.py)
knows only this module. Features find each other by name: ``platform.features.get("remotes")``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from hmsproxy.config.sections import ConfigSection
from hmsproxy.routing.methods import MethodSpec

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

    from hmsproxy.config.model import Config
    from hmsproxy.ddl.registry import StatementSet
    from hmsproxy.ops.readiness import Check
    from hmsproxy.pipeline.internal_client import InternalClient
    from hmsproxy.routing.router import Router
    from hmsproxy.store import Store
    from hmsproxy.store.schema import StoreSchema
    from hmsproxy.upstream.backends import Backends
    from hmsproxy.upstream.session import Session

log = logging.getLogger(__name__)


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
    #: ``client(user)``: calls metastores through the proxy's own routing as that user, so
    #: access control, name rewriting and every feature's hooks apply (DDL side effects).
    client: Callable[[str | None], InternalClient]
    #: The current router (follows reloads): which metastore and backend database a client name means.
    router: Callable[[], Router] = lambda: None  # type: ignore[assignment,return-value]


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
    #: Whether this feature's on_request/on_routed verdict holds for one call only: it depends on more
    #: than the method, the arguments, the caller's set_ugi user and groups and the feature's records
    #: (how often they asked, the time, where they connect from). Then no relay decision on a call its
    #: hooks want is remembered (pipeline/fastpath.py, step 1), and its hooks see every such call.
    #: Remembered decisions are per caller already: a verdict on who asks needs no more.
    verdict_per_call: ClassVar[bool] = False

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

    def needs_result(self, call) -> bool:
        """Whether on_response must see this call's decoded answer (else it may be relayed as bytes,
        relay.py, and on_response does not run). Asked only of features whose on_response wants the call."""
        return True

    def statement_runners(self) -> Mapping[type, Callable]:
        """statement type -> ``run(statement, StatementContext) -> ResultSet`` for this feature's statements."""
        return {}


class FeatureRegistry:
    """The handler's features in hook order, found by name; hooks indexed by method."""

    def __init__(self):
        self._features: list[Feature] = []
        self._by_name: dict[str, Feature] = {}
        self._hook_index: dict[tuple[str, str], tuple[Callable, ...]] = {}

    def add(self, feature: Feature) -> Feature:
        if not feature.name:
            raise ValueError(f"{type(feature).__name__} has no name")
        if feature.name in self._by_name:
            raise ValueError(f"two features are called {feature.name!r}")
        self._features.append(feature)
        self._by_name[feature.name] = feature
        self._hook_index.clear()
        return feature

    def get(self, name: str) -> Feature | None:
        return self._by_name.get(name)

    def __iter__(self) -> Iterator[Feature]:
        return iter(self._features)

    def hooks(self, hook: str, spec: MethodSpec) -> tuple[Callable, ...]:
        """The `hook` methods of the features that want `spec`, in order (computed once per method)."""
        key = (hook, spec.name)
        found = self._hook_index.get(key)
        if found is None:
            found = tuple(getattr(f, hook) for f in self._features if getattr(type(f), hook, None) is not None and f.wants(spec))
            self._hook_index[key] = found
        return found

    # -- lifecycle, for every feature ------------------------------------------------------

    def configure(self, config: Config) -> None:
        for f in self._features:
            f.configure(config)

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

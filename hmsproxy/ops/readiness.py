"""Is this proxy ready to serve? A list of checks, each a callable returning a CheckResult.

/readyz runs them all: the config, a live call on the primary, the store when the
handler has one, and whatever checks features contribute (Feature.readiness_checks).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from thriftpy2.thrift import TApplicationException

from hmsproxy.protocol import idl
from hmsproxy.store import StoreError
from hmsproxy.upstream.wire import BackendUnavailable, ThriftConnection

#: The primary check is a real call; one per second at most, however often /readyz is asked.
PRIMARY_CHECK_CACHE_S = 1.0
PRIMARY_CHECK_TIMEOUT_S = 2.0


@dataclass(frozen=True)
class CheckResult:
    name: str
    ok: bool
    detail: str = ""


Check = Callable[[], CheckResult]


class Readiness:
    def __init__(self, checks: list[Check] | None = None):
        self.checks: list[Check] = list(checks or [])

    def add(self, check: Check) -> None:
        self.checks.append(check)

    def run(self) -> tuple[bool, list[CheckResult]]:
        results = []
        for check in list(self.checks):
            try:
                results.append(check())
            except Exception as e:  # a broken check means "not ready", never a crashed endpoint
                results.append(CheckResult(getattr(check, "__name__", repr(check)), False, repr(e)))
        return all(r.ok for r in results), results


def config_check(handler) -> Check:
    def config() -> CheckResult:
        cfg = handler.config
        return CheckResult("config", True, ", ".join(cfg.sources) or "built in code")

    return config


class PrimaryCheck:
    """get_all_databases on the primary over a fresh short-timeout connection, cached briefly."""

    def __init__(self, handler, *, cache_s: float = PRIMARY_CHECK_CACHE_S, timeout_s: float = PRIMARY_CHECK_TIMEOUT_S):
        self.handler = handler
        self.cache_s = cache_s
        self.timeout_s = timeout_s
        self._lock = threading.Lock()
        self._last: tuple[float, CheckResult] | None = None

    def __call__(self) -> CheckResult:
        with self._lock:  # concurrent probes wait for one answer instead of each calling the primary
            if self._last is not None and time.monotonic() - self._last[0] < self.cache_s:
                return self._last[1]
            result = self._probe()
            self._last = (time.monotonic(), result)
            return result

    def _probe(self) -> CheckResult:
        primary = self.handler.config.primary  # the current snapshot: follows reloads
        trip = self.handler.backends.breaker.trip(primary.name)
        if trip is not None:  # calls fail at once: not ready, whatever a call right now would say
            return CheckResult("primary", False, f"metastore '{primary.name}' {trip.reason}")
        conn = ThriftConnection(
            primary.name,
            primary.uris,
            connect_timeout_s=self.timeout_s,
            call_timeout_s=self.timeout_s,
            **self.handler.backends.sasl_for(primary),  # a Kerberized primary: as the proxy's calls reach it
        )
        try:
            conn.call("get_all_databases", idl.HmsProxy.get_all_databases_args())
        except (BackendUnavailable, TApplicationException) as e:
            return CheckResult("primary", False, f"metastore '{primary.name}': {e}")
        finally:
            conn.close()
        return CheckResult("primary", True, f"metastore '{primary.name}' answered")


def serving_path_check(handler) -> Check:
    """Says which code answers repeated reads (the C hit loop or Python): never fails, it informs."""

    def serving_path() -> CheckResult:
        return CheckResult("serving-path", True, handler.serving_path)

    return serving_path


def draining_check(draining: threading.Event) -> Check:
    """Fails once a SIGTERM drain has begun (ops/drain.py): first, so a load balancer sees it at once."""

    def draining_() -> CheckResult:
        if draining.is_set():
            return CheckResult("draining", False, "stopping: finishing the calls in flight, taking no new connections")
        return CheckResult("draining", True, "serving")

    draining_.__name__ = "draining"
    return draining_


def default_readiness(handler) -> Readiness:
    return Readiness([draining_check(handler.draining), config_check(handler), PrimaryCheck(handler), serving_path_check(handler)])


def readiness_of(handler) -> Readiness:
    """Every check of a handler: the defaults, its store's, its features'."""
    readiness = default_readiness(handler)
    if handler.store is not None:
        readiness.add(store_check(handler.store))
    for check in handler.features.readiness_checks():
        readiness.add(check)
    return readiness


def store_check(store):
    """A /readyz check: the store answers a trivial query."""

    def store_reachable():
        try:
            store.ping()
        except StoreError as e:
            return CheckResult("store", False, str(e))
        return CheckResult("store", True, store.where)

    return store_reachable

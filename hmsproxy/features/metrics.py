"""Prometheus metrics: an on_complete feature plus gauges read from the backend registry.

Each Metrics owns its CollectorRegistry (not prometheus_client's global one), so
several handlers in one process (tests, workers) keep separate counts. render()
is the one place that turns them into the text format served on /metrics.
"""

from __future__ import annotations

import threading
from bisect import bisect_left

from prometheus_client import Counter, Gauge
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.utils import floatToGoString

from hmsproxy.pipeline.call import Call
from hmsproxy.pipeline.platform import Feature, Platform
from hmsproxy.upstream.backends import Backends
from hmsproxy.upstream.session import Session

#: Error texts become label values; keep them short so one bad backend can't bloat a scrape.
MAX_ERROR_LABEL = 200

#: Metastore calls take from a millisecond (cached answers) to minutes (big partition lists).
DURATION_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)


class _BackendCollector:
    """Per-metastore state, read from the registry at scrape time (so reloads show at once)."""

    def __init__(self, backends: Backends):
        self.backends = backends

    def collect(self):
        up = GaugeMetricFamily(
            "hmsproxy_backend_up",
            "1 if the metastore answered its last call, 0 if it failed, absent before first contact",
            labels=["backend"],
        )
        error = GaugeMetricFamily(
            "hmsproxy_backend_last_error_info", "The last error a metastore gave (value is always 1)", labels=["backend", "error"]
        )
        timeouts = CounterMetricFamily(
            "hmsproxy_fanout_timeouts", "Fan-out answers given without this metastore because it was too slow", labels=["backend"]
        )
        relayed = CounterMetricFamily("hmsproxy_relayed_calls", "Answers forwarded as bytes without decoding them", labels=["backend"])
        for name, state in list(self.backends.states.items()):
            if state.up is not None:
                up.add_metric([name], 1.0 if state.up else 0.0)
            if state.last_error:
                error.add_metric([name, state.last_error[:MAX_ERROR_LABEL]], 1.0)
            timeouts.add_metric([name], state.fanout_timeouts)
            relayed.add_metric([name], state.relayed)
        return [up, error, timeouts, relayed, *_cache_metrics(self.backends.caches), *_hedge_metrics(self.backends.hedging.stats)]


class _CallCounts:
    """hmsproxy_requests and hmsproxy_request_duration_seconds, kept as plain numbers under one lock:
    prometheus_client's Counter and Histogram cost about ten Python calls per observation, and
    this runs on every call the proxy handles."""

    def __init__(self):
        self._lock = threading.Lock()
        self._requests: dict[tuple[str, str, str], int] = {}
        #: (method, backend) -> calls per bucket (DURATION_BUCKETS, then +Inf), then the sum of seconds.
        self._durations: dict[tuple[str, str], list] = {}

    def count(self, method: str, backend: str, outcome: str, seconds: float) -> None:
        key = (method, backend, outcome)
        with self._lock:
            self._requests[key] = self._requests.get(key, 0) + 1
            spread = self._durations.get(key[:2])
            if spread is None:
                spread = self._durations[key[:2]] = [0] * (len(DURATION_BUCKETS) + 1) + [0.0]
            spread[bisect_left(DURATION_BUCKETS, seconds)] += 1  # the first bucket whose bound is >= seconds
            spread[-1] += seconds

    def collect(self):
        with self._lock:
            requests = list(self._requests.items())
            durations = [(key, list(spread)) for key, spread in self._durations.items()]
        calls = CounterMetricFamily(
            "hmsproxy_requests", "Calls handled, by method, answering metastore and outcome", labels=["method", "backend", "outcome"]
        )
        for key, n in requests:
            calls.add_metric(list(key), n)
        duration = HistogramMetricFamily(
            "hmsproxy_request_duration_seconds", "Time from a call's arrival to its answer", labels=["method", "backend"]
        )
        bounds = [floatToGoString(b) for b in DURATION_BUCKETS] + ["+Inf"]
        for key, spread in durations:
            cumulative, total = [], 0
            for bound, n in zip(bounds, spread[:-1], strict=True):
                total += n
                cumulative.append((bound, total))
            duration.add_metric(list(key), cumulative, sum_value=spread[-1])
        return [calls, duration]


def _hedge_metrics(stats: dict) -> list:
    """Hedged reads per metastore (upstream/hedging.py): how many, which side answered first, the threshold."""
    hedged = CounterMetricFamily("hmsproxy_hedged", "Reads also sent to the next URI after the hedge threshold", labels=["backend"])
    wins = CounterMetricFamily("hmsproxy_hedge_wins", "Hedged reads by the side whose answer was used", labels=["backend", "winner"])
    threshold = GaugeMetricFamily(
        "hmsproxy_hedge_threshold_seconds",
        "How long a read waits before it is hedged (a percentile of recent reads, bounded)",
        labels=["backend"],
    )
    for name, st in list(stats.items()):
        hedged.add_metric([name], st.hedged)
        wins.add_metric([name, "primary"], st.primary_wins)
        wins.add_metric([name, "hedge"], st.hedge_wins)
        if st.threshold_s is not None:
            threshold.add_metric([name], st.threshold_s)
    return [hedged, wins, threshold]


def _cache_metrics(caches: dict) -> list:
    """The metadata caches' counters (hmsproxy/upstream/cache/), per metastore."""
    families = {
        "hits": CounterMetricFamily("hmsproxy_cache_hits", "Calls answered from the metadata cache", labels=["backend"]),
        "misses": CounterMetricFamily("hmsproxy_cache_misses", "Cacheable calls the cache could not answer", labels=["backend"]),
        "stale": CounterMetricFamily(
            "hmsproxy_cache_stale_served", "Calls answered from the cache while the metastore was down", labels=["backend"]
        ),
        "entries": GaugeMetricFamily("hmsproxy_cache_entries", "Answers in the metadata cache", labels=["backend"]),
        "bytes": GaugeMetricFamily("hmsproxy_cache_bytes", "Bytes of answers in the metadata cache", labels=["backend"]),
    }
    invalidations = CounterMetricFamily(
        "hmsproxy_cache_invalidations", "Invalidations of the metadata cache, by what caused them", labels=["backend", "reason"]
    )
    for name, cache in list(caches.items()):
        families["hits"].add_metric([name], cache.hits)
        families["misses"].add_metric([name], cache.misses)
        families["stale"].add_metric([name], cache.stale_served)
        families["entries"].add_metric([name], cache.entries)
        families["bytes"].add_metric([name], cache.bytes)
        for reason, count in sorted(cache.invalidations.items()):
            invalidations.add_metric([name, reason], count)
    return [*families.values(), invalidations]


class Metrics(Feature):
    """Counts every call; other features register their own metrics in the same registry."""

    name = "metrics"

    def __init__(self, platform: Platform):
        super().__init__(platform)
        self.registry = platform.metrics
        self._calls = _CallCounts()
        self.registry.register(self._calls)
        self.client_connections = Gauge("hmsproxy_client_connections", "Open client connections", registry=self.registry)
        self.store_errors = Counter("hmsproxy_store_errors", "Failed operations on the proxy's own store", registry=self.registry)
        if platform.store is not None:
            platform.store.on_error = self.store_errors.inc
        self.registry.register(_BackendCollector(platform.backends))

    def session_opened(self, session: Session) -> None:
        self.client_connections.inc()

    def session_closed(self, session: Session) -> None:
        self.client_connections.dec()

    def completes_after_answer(self, config) -> bool:
        return True  # counts may lag a scrape by a moment

    def on_complete(self, call: Call) -> None:
        self._calls.count(call.spec.name, call.backend or "-", call.outcome, call.elapsed_s)

    def render(self) -> tuple[bytes, str]:
        """The scrape body and its content type."""
        self.platform.complete_answered()  # hits answered in C count before the scrape
        return generate_latest(self.registry), CONTENT_TYPE_LATEST

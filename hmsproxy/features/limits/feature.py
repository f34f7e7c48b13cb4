"""The limits feature: on_arrival takes each call's tokens (buckets.py) before the proxy does any work,
configure() makes the buckets and the metastores' caps anew when a reload changes them, and /metrics
counts refusals and waits per limit.

Nothing is kept per client connection: every call asks the current Limiter, so a reload applies
to connections already open. Without rates the hook returns after one check; without caps
upstream/slots.py costs a dict lookup per backend call.
"""

from __future__ import annotations

import math
import threading
import time

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from hmsproxy.config.model import Config
from hmsproxy.features.limits.buckets import Limiter, Verdict
from hmsproxy.features.limits.classes import CLASS_OF
from hmsproxy.features.limits.config import ANONYMOUS, EVERYONE, SECTION, LimitsConfig
from hmsproxy.pipeline.call import Call
from hmsproxy.pipeline.errors import Limited
from hmsproxy.pipeline.platform import Feature, Platform
from hmsproxy.upstream.slots import SlotRule

#: The address of the sessions the proxy's own hooks and statements call through (internal_client.py):
#: their calls are part of a client's call that was admitted already.
INTERNAL = "hmsproxy"


def address_of(client_address: str) -> str:
    """The IP of "host:port" (IPv6 hosts hold colons too)."""
    return client_address.rsplit(":", 1)[0]


class _Counts:
    """hmsproxy_limited and hmsproxy_limit_waits by limit label (kept across reloads)."""

    def __init__(self):
        self._lock = threading.Lock()
        self.refused: dict[str, int] = {}
        self.waited: dict[str, int] = {}

    def add(self, counts: dict[str, int], label: str) -> None:
        with self._lock:
            counts[label] = counts.get(label, 0) + 1


class _Collector:
    def __init__(self, counts: _Counts, platform: Platform):
        self.counts = counts
        self.platform = platform

    def collect(self):
        limited = CounterMetricFamily(
            "hmsproxy_limited", "Calls refused by a limit (user:, address:, class:, metastore: and the rule's name)", labels=["limit"]
        )
        waited = CounterMetricFamily("hmsproxy_limit_waits", "Calls that waited for room under a limit (limits.queue-s)", labels=["limit"])
        for label, n in sorted(self.counts.refused.items()):
            limited.add_metric([label], n)
        for label, n in sorted(self.counts.waited.items()):
            waited.add_metric([label], n)
        in_flight = GaugeMetricFamily("hmsproxy_metastore_calls_in_flight", "Calls holding a capped metastore's slots", labels=["backend"])
        cap = GaugeMetricFamily("hmsproxy_metastore_concurrency_cap", "A metastore's cap on concurrent calls", labels=["backend"])
        for name, slots_cap, in_use, refused, waits in self.platform.backends.slots.counts():
            if slots_cap is not None:
                cap.add_metric([name], slots_cap)
                in_flight.add_metric([name], in_use)
            if refused:
                limited.add_metric([f"metastore:{name}"], refused)
            if waits:
                waited.add_metric([f"metastore:{name}"], waits)
        return [limited, waited, in_flight, cap]


class Limits(Feature):
    name = "limits"
    config_section = SECTION

    def __init__(self, platform: Platform):
        super().__init__(platform)
        self._settings: LimitsConfig | None = None
        #: None while no rate is configured: on_arrival's one check.
        self._limiter: Limiter | None = None
        self._counts = _Counts()
        platform.metrics.register(_Collector(self._counts, platform))

    def configure(self, config: Config) -> None:
        settings: LimitsConfig = self.settings(config)
        if settings != self._settings:  # unchanged limits keep their buckets' state
            self._limiter = Limiter(settings) if settings.rates else None
            self._settings = settings
        self.platform.backends.slots.configure(caps(settings, [ms.name for ms in config.metastores]))

    def idle(self, hook: str) -> bool:
        return hook == "on_arrival" and self._limiter is None  # no rate configured: calls skip on_arrival

    def on_arrival(self, call: Call) -> None:
        limiter = self._limiter
        if limiter is None:  # a call that looked up its hooks just before a reload took the rates away
            return
        session = call.session
        if session.client_address == INTERNAL:
            return
        user = session.user
        if call.spec.name == "set_ugi":  # counts for the user it names, not for every new connection together
            user = call.args.user_name
        verdict = limiter.admit(user or ANONYMOUS, address_of(session.client_address), CLASS_OF[call.spec.name])
        if verdict.__class__ is Verdict:
            self._counts.add(self._counts.refused, verdict.label)
            raise Limited(f"hmsproxy: limit '{verdict.limit}' reached; retry in {math.ceil(verdict.retry_s * 10) / 10:.1f} s")
        wait, label = verdict
        if wait > 0.0:
            self._counts.add(self._counts.waited, label)
            time.sleep(wait)

    def describe(self) -> list[str]:
        settings = self._settings
        return SECTION.describe(settings) if settings is not None and (settings.rates or settings.concurrency) else []


def caps(settings: LimitsConfig, metastores: list[str]) -> dict[str, SlotRule]:
    """Each metastore's cap: its own, else the one for every metastore ("*"), else none."""
    named = dict(settings.concurrency)
    everyone = named.pop(EVERYONE, None)
    rules = {}
    for name in metastores:
        cap = named.get(name, everyone)
        if cap is not None:
            rules[name] = SlotRule(cap, settings.queue_s)
    return rules

"""A cap on concurrent calls per metastore: each backend call holds one of its metastore's slots.

The limits feature (features/limits/) sets the caps (`BackendSlots.configure`, at start and on
every reload); sessions take a slot around every backend call (session.py), before the breaker
sees the call, so time spent waiting for a slot is never taken for a hung metastore. Without a
cap for a metastore there is nothing to take: `capped` has no entry for it, and the sessions' one
dict look-up per call finds none (`taken()` hands back a shared do-nothing context for others).

A call that finds every slot taken waits up to the configured queue time for one, then is refused
with `BackendBusy` (the error boundary answers it as the method's MetaException, outcome "limited").
Caps are per process: `server.workers` processes each have their own.
"""

from __future__ import annotations

import threading
from contextlib import nullcontext
from dataclasses import dataclass

from hmsproxy.protocol._thriftwalk import Gate

_FREE = nullcontext()

#: The retry hint of a refusal: a slot frees when some call ends, which nobody can foresee.
RETRY_BUSY_S = 0.1


class BackendBusy(Exception):
    """Every slot of a metastore stayed taken for the queue time."""

    def __init__(self, metastore: str, cap: int, retry_s: float):
        self.metastore = metastore
        self.limit = f"metastore {metastore}: {cap} concurrent calls"
        self.retry_s = retry_s
        super().__init__(f"hmsproxy: limit '{self.limit}' reached; retry in {retry_s:.1f} s")


@dataclass(frozen=True)
class SlotRule:
    cap: int
    queue_s: float


class _Counts:
    """A metastore's refusals and waits, kept across reloads (Prometheus counters never go back)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.refused = 0
        self.waited = 0


class _Slots:
    """One metastore's cap: a semaphore, and how many slots are taken."""

    def __init__(self, metastore: str, rule: SlotRule, counts: _Counts):
        self.metastore = metastore
        self.rule = rule
        self.counts = counts
        self._free = threading.BoundedSemaphore(rule.cap)
        self.in_use = 0

    def __enter__(self):
        counts = self.counts
        if not self._free.acquire(blocking=False):
            queue_s = self.rule.queue_s
            if queue_s <= 0 or not self._free.acquire(timeout=queue_s):
                with counts.lock:
                    counts.refused += 1
                raise BackendBusy(self.metastore, self.rule.cap, max(queue_s, RETRY_BUSY_S))
            with counts.lock:
                counts.waited += 1
        with counts.lock:
            self.in_use += 1
        return self

    def __exit__(self, *exc):
        with self.counts.lock:
            self.in_use -= 1
        self._free.release()
        return False


class BackendSlots:
    """Every metastore's cap (none by default), kept in the admission `gate` (Backends.gate): the hit
    loop in C leaves a capped metastore's calls to this module."""

    def __init__(self, gate: Gate | None = None, on_configure=lambda: None):
        self._gate = gate if gate is not None else Gate(lambda name: None)
        self._counts: dict[str, _Counts] = {}
        #: Told after every configure: the metastores' stacks hold their slots (stack.py).
        self._on_configure = on_configure

    @property
    def capped(self) -> dict[str, _Slots]:
        """Metastore name -> its slots (a context that holds one: raises BackendBusy), for those with
        a cap only; replaced whole on configure."""
        return self._gate.capped

    def taken(self, metastore: str):
        """A context holding one of `metastore`'s slots (raises BackendBusy), or a do-nothing one."""
        slots = self.capped.get(metastore)
        return _FREE if slots is None else slots

    def configure(self, rules: dict[str, SlotRule]) -> None:
        """Caps by metastore name. An unchanged cap keeps its semaphore (calls holding slots keep
        counting); a changed one starts afresh, so while calls taken under the old cap last, the two
        together may exceed the new one."""
        current = self.capped
        fresh: dict[str, _Slots] = {}
        for name, rule in rules.items():
            kept = current.get(name)
            if kept is not None and kept.rule == rule:
                fresh[name] = kept
            else:
                fresh[name] = _Slots(name, rule, self._counts.setdefault(name, _Counts()))
        self._gate.capped = fresh  # one reference swap: calls read either map whole
        self._on_configure()

    def counts(self) -> list[tuple[str, int | None, int, int, int]]:
        """(metastore, cap or None, in use, refused, waited) per metastore that ever had a cap, for /metrics."""
        rows = []
        for name, counts in list(self._counts.items()):
            slots = self.capped.get(name)
            cap, in_use = (slots.rule.cap, slots.in_use) if slots is not None else (None, 0)
            rows.append((name, cap, in_use, counts.refused, counts.waited))
        return rows

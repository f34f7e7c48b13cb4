"""Token buckets, and the rules that choose a call's buckets (by user, client address, method class).

A bucket holds up to `burst` tokens and gains `rate` a second; a call takes one. With a queue time,
a call that finds the bucket empty reserves the next token (the count goes below zero) when it will
be there within the queue time, and waits for it; else nothing is taken and the call is refused with
the time until a token is free. Each bucket has its own lock: one thread per client connection.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from hmsproxy.features.limits.config import EVERYONE, LimitsConfig, Rate

#: Buckets kept per rule before full ones (callers idle long enough to refill) are forgotten.
MAX_IDLE_BUCKETS = 10_000


class Bucket:
    __slots__ = ("rate", "burst", "tokens", "last", "lock")

    def __init__(self, rate: Rate, now: float):
        self.rate = rate.rate
        self.burst = rate.burst
        self.tokens = rate.burst
        self.last = now
        self.lock = threading.Lock()

    def take(self, now: float, queue_s: float) -> float:
        """Seconds to wait before the call may go (0.0: at once; a token is taken or reserved), or the
        negative of the seconds until a token is free when that is longer than `queue_s` (nothing taken)."""
        with self.lock:
            tokens = min(self.burst, self.tokens + (now - self.last) * self.rate)
            self.last = now
            if tokens >= 1.0:
                self.tokens = tokens - 1.0
                return 0.0
            wait = (1.0 - tokens) / self.rate
            if wait <= queue_s:
                self.tokens = tokens - 1.0
                return wait
            self.tokens = tokens
            return -wait

    def give_back(self) -> None:
        """Return a token taken for a call that another bucket refused."""
        with self.lock:
            self.tokens = min(self.burst, self.tokens + 1.0)

    def full(self, now: float) -> bool:
        return self.tokens + (now - self.last) * self.rate >= self.burst


@dataclass(frozen=True)
class Verdict:
    """A refusal: which limit, the rule's metric label, seconds until the call could go."""

    limit: str
    label: str
    retry_s: float


class Rule:
    """One kind of bucket (users, addresses or method classes): named rates and the rate for everyone else."""

    def __init__(self, what: str, rates: tuple[tuple[str, Rate], ...]):
        self.what = what
        self.named = {name: rate for name, rate in rates if name != EVERYONE}
        self.everyone = next((rate for name, rate in rates if name == EVERYONE), None)
        self._buckets: dict[str, Bucket] = {}
        self._lock = threading.Lock()

    def bucket(self, key: str, now: float) -> tuple[Bucket, Rate, str] | None:
        """`key`'s bucket, its rate and its rule's metric label; None when no rate applies to it."""
        rate = self.named.get(key)
        label = f"{self.what}:{key}"
        if rate is None:
            rate, label = self.everyone, f"{self.what}:{EVERYONE}"
            if rate is None:
                return None
        bucket = self._buckets.get(key)
        if bucket is None:
            with self._lock:
                if len(self._buckets) >= MAX_IDLE_BUCKETS:
                    self._buckets = {k: b for k, b in self._buckets.items() if not b.full(now)}
                bucket = self._buckets.setdefault(key, Bucket(rate, now))
        return bucket, rate, label


class Limiter:
    """The token buckets of one `limits` section: made anew when a reload changes it."""

    def __init__(self, settings: LimitsConfig):
        self.settings = settings
        self.queue_s = settings.queue_s
        self.users = Rule("user", settings.users)
        self.addresses = Rule("address", settings.addresses)
        self.classes = Rule("class", settings.classes)

    def admit(self, user: str, address: str, method_class: str) -> tuple[float, str | None] | Verdict:
        """(seconds to wait, the label of the limit waited for) when the call may go, else a Verdict.
        Every bucket that applies gives a token, or none does."""
        now = time.monotonic()
        taken: list[Bucket] = []
        wait, waited_for = 0.0, None
        for rule, key in ((self.users, user), (self.addresses, address), (self.classes, method_class)):
            found = rule.bucket(key, now)
            if found is None:
                continue
            bucket, rate, label = found
            seconds = bucket.take(now, self.queue_s)
            if seconds < 0.0:
                for other in taken:
                    other.give_back()
                return Verdict(f"{rule.what} {key}: {rate}", label, -seconds)
            taken.append(bucket)
            if seconds > wait:
                wait, waited_for = seconds, label
        return wait, waited_for

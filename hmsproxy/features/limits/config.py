"""The `limits` section of hmsproxy's YAML (docs/configuration.md, "limits").

limits:
  queue-s: 0.5                 # a call over a limit waits up to this long for room, then is refused (0: at once)
  users:                       # a token bucket per user (set_ugi's name; "anonymous" without one)
    "*": 20                    # every user not named below: 20 calls/s, bursts of 20
    etl: {rate: 200, burst: 400}
  addresses:                   # a token bucket per client address (the IP the connection comes from)
    "*": 50
  method-classes:              # one bucket per class, shared by every caller (classes.py)
    listings: 100
    writes: {rate: 50, burst: 100}
  metastore-concurrency:       # concurrent calls per metastore (upstream/slots.py)
    "*": 16
    primary: 32

A rate is calls per second, a number or {rate, burst} (burst: how many calls may come at once
after a quiet spell; the rate rounded up by default). Every limit is per process.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from hmsproxy.config.errors import Ctx, join_key
from hmsproxy.config.fields import present, read_int, read_mapping, read_positive_number, read_section
from hmsproxy.config.keys import key
from hmsproxy.config.sections import keyed_section
from hmsproxy.features.limits.classes import CLASSES

#: The key of the rule for everyone not named.
EVERYONE = "*"
#: The user of a session that sent no set_ugi.
ANONYMOUS = "anonymous"


@dataclass(frozen=True)
class Rate:
    rate: float  # calls per second
    burst: float  # the bucket's size

    def __str__(self) -> str:
        return f"{self.rate:g} calls/s"


def _read_seconds(ctx: Ctx, path: str, value: Any) -> float:
    if value == 0:
        return 0.0
    return read_positive_number(ctx, path, value)


def _rates(allowed: tuple[str, ...] | None = None):
    """A mapping of names (or "*") to rates, as (name, Rate) pairs in the file's order; with
    `allowed`, only those names."""

    def read(ctx: Ctx, path: str, raw: Any) -> tuple[tuple[str, Rate], ...]:
        rates = []
        for key_raw, value in read_mapping(ctx, path, raw).items():
            name = str(key_raw).strip()
            kpath = join_key(path, name)
            if allowed is not None and name not in allowed:
                raise ctx.error(kpath, f"unknown method class; classes are {', '.join(allowed)}")
            rates.append((name, _read_rate(ctx, kpath, value)))
        return tuple(rates)

    return read


def _read_rate(ctx: Ctx, path: str, value: Any) -> Rate:
    if isinstance(value, dict):
        fields = read_section(ctx, path, value, ("rate", "burst"))
        if not present(fields, "rate"):
            raise ctx.error(join_key(path, "rate"), "missing: calls per second")
        rate = read_positive_number(ctx, join_key(path, "rate"), fields["rate"])
        if present(fields, "burst"):
            burst = read_positive_number(ctx, join_key(path, "burst"), fields["burst"])
            if burst < 1:
                raise ctx.error(join_key(path, "burst"), f"{burst:g} is below 1: no call could ever pass")
            return Rate(rate, burst)
        return Rate(rate, float(max(1, math.ceil(rate))))
    rate = read_positive_number(ctx, path, value)
    return Rate(rate, float(max(1, math.ceil(rate))))


def _read_caps(ctx: Ctx, path: str, raw: Any) -> tuple[tuple[str, int], ...]:
    return tuple(
        (str(name).strip(), read_int(ctx, join_key(path, str(name)), value, minimum=1))
        for name, value in read_mapping(ctx, path, raw).items()
    )


_RATE = "a rate in calls per second, or {rate, burst}"


@dataclass(frozen=True)
class LimitsConfig:
    queue_s: float = key("queue-s", _read_seconds, "seconds a call over a limit waits for room before it is refused", default=0.0)
    users: tuple[tuple[str, Rate], ...] = key(
        "users", _rates(), f"per user (set_ugi's name; * for every user not named): {_RATE}", default=()
    )
    addresses: tuple[tuple[str, Rate], ...] = key(
        "addresses", _rates(), f"per client IP address (* for every address not named): {_RATE}", default=()
    )
    classes: tuple[tuple[str, Rate], ...] = key(
        "method-classes", _rates(CLASSES), f"per method class ({', '.join(CLASSES)}), shared by every caller: {_RATE}", default=()
    )
    concurrency: tuple[tuple[str, int], ...] = key(
        "metastore-concurrency", _read_caps, "per metastore name (* for every one not named): the most calls it is sent at once", default=()
    )

    @property
    def rates(self) -> bool:
        """Whether any token bucket is configured (else on_arrival does nothing)."""
        return bool(self.users or self.addresses or self.classes)


def describe(settings: LimitsConfig) -> list[str]:
    if not settings.rates and not settings.concurrency:
        return ["Limits: none"]
    lines = [f"Limits (per process; a call over one waits up to {settings.queue_s:g} s, then is refused):"]
    for what, rules in (("user", settings.users), ("address", settings.addresses), ("method class", settings.classes)):
        for name, rate in rules:
            who = f"every {what} not named" if name == EVERYONE else f"{what} {name}"
            lines.append(f"  {who}: {rate} (bursts of {rate.burst:g})")
    for name, cap in settings.concurrency:
        which = "every metastore not named" if name == EVERYONE else f"metastore {name}"
        lines.append(f"  {which}: {cap} concurrent calls")
    return lines


SECTION = keyed_section("limits", LimitsConfig, describe)

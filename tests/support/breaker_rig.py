"""A circuit breaker (hmsproxy/upstream/breaker.py) on a fake clock, for the unit tests of its
decisions (test_breaker.py, test_breaker_ha.py): probes run inside `tick()`, no watchdog thread,
and every trip and recovery recorded in order."""

from __future__ import annotations

from hmsproxy.upstream.breaker import Breaker

#: The probe-after threshold the rig's breaker is given, in seconds.
AFTER = 3.0
#: What the fake wall clock says whenever it is asked (a trip is dated by it).
WALL = 1_700_000_000.0
#: How long a test waits for another thread to reach a state before failing: far above anything a
#: busy machine takes, reached only when the state never comes.
PATIENCE_S = 30.0


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def breaker_rig(probes, **extra) -> tuple[Breaker, Clock, object, list[tuple]]:
    """(breaker, its clock, `probes`, events): events gets ("down", name, reason) per trip and
    ("up", name) per recovery. `extra` goes to Breaker as it is (an HA test's `uris=`)."""
    clock, events = Clock(), []
    b = Breaker(
        probes,
        lambda: AFTER,
        on_trip=lambda name, reason: events.append(("down", name, reason)),
        on_recover=lambda name: events.append(("up", name)),
        clock=clock,
        wall_clock=lambda: WALL,
        spawn=lambda name, fn: fn(),  # probes run inside tick()
        watch=False,
        **extra,
    )
    return b, clock, probes, events

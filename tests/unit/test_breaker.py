"""The circuit breaker (hmsproxy/upstream/breaker.py): its state machine and its watchdog thread on
a fake clock, then a real handler over fake metastores, one of which hangs like a SIGSTOPped process.

No assertion here measures how long something took: "at once" is shown by what reached the hung
metastore (nothing), and waits for another thread are bounded only by PATIENCE_S, which no
working breaker comes near.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import replace

import pytest

from hmsproxy.app import build_handler
from hmsproxy.config.model import StoreConfig
from hmsproxy.ops.readiness import PrimaryCheck
from hmsproxy.protocol import idl
from hmsproxy.testing import FakeMetastore, args, database, fake_connect, unwrap
from hmsproxy.upstream.breaker import IDLE_EXIT_S, RETRY_S, TICK_S, Breaker
from hmsproxy.upstream.session import Session
from hmsproxy.upstream.wire import BackendUnavailable
from tests.support.breaker_rig import AFTER, PATIENCE_S, WALL, Clock, breaker_rig
from tests.support.fake_handlers import call
from tests.support.federation import prefixed_config
from tests.support.ops import handler_metric
from tests.support.stopped import in_flight


class Ticks:
    """The watchdog's wait between ticks, in the test's hands: a wait blocks until the test lets one
    tick through (`step`) and then moves the fake clock on by the wait's length, so the watchdog
    thread runs on the fake clock, one tick at a time."""

    def __init__(self, clock: Clock):
        self.clock = clock
        self._go = threading.Semaphore(0)
        self._waiting = threading.Semaphore(0)

    def __call__(self, seconds: float) -> None:
        self._waiting.release()
        self._go.acquire()
        self.clock.now += seconds

    def waiting(self) -> None:
        """Return once the watchdog is back in its wait (so it is not between ticks)."""
        assert self._waiting.acquire(timeout=PATIENCE_S), "the watchdog did not come back to its wait"

    def step(self) -> None:
        self._go.release()


class Probes:
    """The probe function: answers, or fails with `reason`, as the test says; records each probe."""

    def __init__(self):
        self.failing: dict[str, str] = {}
        self.asked: list[tuple[str, float]] = []

    def __call__(self, name: str, timeout_s: float) -> None:
        self.asked.append((name, timeout_s))
        if name in self.failing:
            raise BackendUnavailable(name, f"thrift://{name}:9083", self.failing[name])


@pytest.fixture
def rig():
    return breaker_rig(Probes())


def test_a_call_is_probed_only_after_probe_after_s_without_an_answer(rig):
    b, clock, probes, _ = rig
    token = b.enter("dw")
    clock.now += AFTER - 0.1
    b.tick()
    assert probes.asked == []
    clock.now += 0.1
    b.tick()
    assert probes.asked == [("dw", AFTER)]  # the probe gets the same time to answer
    b.leave(token)
    clock.now += 60
    b.tick()
    assert len(probes.asked) == 1  # nothing in flight: nothing to probe


def test_a_slow_call_whose_metastore_answers_probes_is_never_tripped(rig):
    b, clock, probes, events = rig
    token = b.enter("dw")
    for _ in range(int(30 / 0.25)):  # a 30-second call, watched four times a second
        clock.now += 0.25
        b.tick()
        assert b.trip("dw") is None
        b.leave(b.enter("dw"))  # other calls go through meanwhile
    b.leave(token)
    # Probed about once per probe-after-s while the call lasted, not on every tick.
    assert 8 <= len(probes.asked) <= 10
    assert events == []


def test_a_failed_probe_trips_the_metastore_new_calls_fail_at_once(rig):
    b, clock, probes, events = rig
    in_flight = b.enter("dw")
    other = b.enter("primary")
    probes.failing["dw"] = "timed out"
    clock.now += AFTER
    b.tick()
    trip = b.trip("dw")
    assert trip is not None and trip.uri == "thrift://dw:9083"
    assert trip.since == WALL - AFTER  # the wall-clock time the unanswered call started
    with pytest.raises(BackendUnavailable) as err:
        b.enter("dw")
    message = str(err.value)
    assert message.startswith("metastore 'dw' (thrift://dw:9083) is unavailable: not answering since ")
    assert "a probe on a new connection failed: timed out" in message and "fail at once" in message
    assert events == [("down", "dw", trip.reason)]  # (no call had its connection yet: none was cut)
    # The primary's call was watched too, but its probe answered; its new calls go through.
    assert b.trip("primary") is None
    b.leave(b.enter("primary"))
    b.leave(in_flight)
    b.leave(other)


class Conn:
    """What the breaker needs of a connection: cut(), close()."""

    def __init__(self):
        self.cut_as = None
        self.closed = False

    def cut(self, uri, reason):
        self.cut_as = (uri, reason)

    def close(self):
        self.closed = True


def test_a_trip_cuts_the_calls_waiting_on_the_metastore_and_only_those(rig):
    b, clock, probes, events = rig
    waiting, other, late = b.enter("dw"), b.enter("primary"), b.enter("dw")
    waiting_conn, other_conn = Conn(), Conn()
    b.uses(waiting, waiting_conn)
    b.uses(other, other_conn)
    probes.failing["dw"] = "no answer within 3 s"
    clock.now += AFTER
    b.tick()
    trip = b.trip("dw")
    # Cut with the very error new calls get; the slow-but-alive primary's call is left alone.
    assert waiting_conn.cut_as == (trip.uri, trip.reason) and other_conn.cut_as is None
    assert events == [("down", "dw", f"{trip.reason} (1 waiting call failed)")]  # the log says so
    # A call that had entered but not yet got its connection fails as it takes one, before sending.
    with pytest.raises(BackendUnavailable, match="not answering since"):
        b.uses(late, Conn())
    b.leave(late)
    b.leave(waiting)
    assert waiting_conn.closed  # its thread closes the cut connection: never used again
    b.leave(other)
    assert not other_conn.closed  # kept for the session's next call


def test_a_call_entered_with_its_connection_is_cut_like_any_and_a_tripped_one_is_never_registered(rig):
    """enter(name, conn): the relay shortcut's way in (session.py), without a guard object."""
    b, clock, probes, events = rig
    conn = Conn()
    token = b.enter("dw", conn)
    probes.failing["dw"] = "no answer within 3 s"
    clock.now += AFTER
    b.tick()
    trip = b.trip("dw")
    assert conn.cut_as == (trip.uri, trip.reason)
    assert events == [("down", "dw", f"{trip.reason} (1 waiting call failed)")]
    b.leave(token)
    assert conn.closed
    late = Conn()
    with pytest.raises(BackendUnavailable, match="not answering since"):
        b.enter("dw", late)
    assert late.cut_as is None and not b._calls  # refused before it was registered: nothing to leave


def test_a_tripped_metastore_is_probed_until_it_answers(rig):
    b, clock, probes, events = rig
    token = b.enter("dw")
    probes.failing["dw"] = "connection refused"
    clock.now += AFTER
    b.tick()
    b.leave(token)  # tripped, and nothing in flight any more: probing goes on
    asked = len(probes.asked)
    clock.now += RETRY_S / 2
    b.tick()
    assert len(probes.asked) == asked  # not before RETRY_S
    clock.now += RETRY_S / 2
    b.tick()
    assert len(probes.asked) == asked + 1 and b.trip("dw") is not None
    del probes.failing["dw"]
    clock.now += RETRY_S
    b.tick()
    assert b.trip("dw") is None
    assert events[-1] == ("up", "dw")
    b.leave(b.enter("dw"))


def test_any_answer_lets_calls_through_and_a_changed_metastore_is_forgotten(rig):
    b, clock, probes, _ = rig
    probes.failing["dw"] = "timed out"
    probes.failing["hr"] = "timed out"
    tokens = [b.enter("dw"), b.enter("hr")]
    clock.now += AFTER
    b.tick()
    assert b.trip("dw") and b.trip("hr")
    assert b.answered("dw") is True  # e.g. the call in flight got its answer after all
    assert b.answered("dw") is False
    b.forget("hr")
    b.leave(b.enter("dw"))
    b.leave(b.enter("hr"))
    for t in tokens:
        b.leave(t)


def test_a_probe_that_breaks_or_names_an_unknown_metastore_trips_nothing(rig):
    b, clock, _, events = rig

    def broken(name, timeout_s):
        raise KeyError(name) if name == "gone" else RuntimeError("bug")

    b._probe = broken
    tokens = [b.enter("gone"), b.enter("dw")]
    clock.now += AFTER
    b.tick()
    assert b.trip("gone") is None and b.trip("dw") is None and events == []
    for t in tokens:
        b.leave(t)


def test_the_watchdog_starts_with_calls_and_ends_when_idle_or_closed():
    clock, probes = Clock(), Probes()
    ticks = Ticks(clock)
    b = Breaker(
        probes, lambda: AFTER, on_trip=lambda n, r: None, on_recover=lambda n: None, clock=clock, wait=ticks, spawn=lambda n, fn: fn()
    )
    assert not b.watching
    token = b.enter("dw")
    assert b.watching
    ticks.waiting()
    for _ in range(2 * int(IDLE_EXIT_S / TICK_S)):  # a call in flight keeps it watching (and probing)
        ticks.step()
        ticks.waiting()
    assert b.watching and probes.asked
    b.leave(token)
    # Idle: it keeps watching until IDLE_EXIT_S have passed on its clock without a call, then ends.
    for _ in range(int(IDLE_EXIT_S / TICK_S)):
        ticks.step()
        ticks.waiting()
        assert b.watching
    ticks.step()
    wait_until(lambda: not b.watching)  # no thread left behind (it never waits again: see Ticks)
    b.leave(b.enter("dw"))  # the next call starts it again
    assert b.watching
    ticks.waiting()
    b.close()
    ticks.step()  # (the real wait returns at once on close; this one waits for its step)
    wait_until(lambda: not b.watching)
    b.leave(b.enter("dw"))
    assert not b.watching  # closed: calls no longer start it


# --------------------------------------------------------------------------- the setting


def test_probe_after_s_is_a_server_setting_with_a_default(tmp_path):
    from hmsproxy.app import load_config
    from hmsproxy.config import ConfigError, describe

    primary = "primary-meta-store: {name: p, remote-meta-store-uris: thrift://localhost:9084}\n"
    path = tmp_path / "hmsproxy.yml"
    path.write_text(primary)
    assert load_config(path).server.probe_after_s == 3.0
    path.write_text(primary + "server: {probe-after-s: 1.5}\n")
    config = load_config(path)
    assert config.server.probe_after_s == 1.5
    assert "probe a metastore after 1.5 s without an answer" in describe(config)
    for bad, reason in (("0", "greater than 0"), ("soon", "must be a number")):
        path.write_text(primary + f"server: {{probe-after-s: {bad}}}\n")
        with pytest.raises(ConfigError, match=f"server.probe-after-s: .*{reason}"):
            load_config(path)


# --------------------------------------------------------------------------- a real handler over fakes


class Hang:
    """A connection factory around fake_connect whose connections to some metastores block in every
    call while they hang: a process stopped with SIGSTOP (the TCP connection is there, nothing answers).
    `sent` counts the calls that reached each metastore, by method (the probes' getVersion too)."""

    def __init__(self, connect):
        self.connect = connect
        self.hung: dict[str, threading.Event] = {}
        self.sent: Counter[tuple[str, str]] = Counter()

    def stop(self, name: str) -> None:
        self.hung[name] = threading.Event()

    def resume(self, name: str) -> None:
        self.hung.pop(name).set()

    def __call__(self, metastore_name, uris, *, connect_timeout_s, call_timeout_s):
        return _Hanging(
            self, self.connect(metastore_name, uris, connect_timeout_s=connect_timeout_s, call_timeout_s=call_timeout_s), call_timeout_s
        )


class _Hanging:
    def __init__(self, hang: Hang, inner, timeout_s: float):
        self._hang, self._inner, self._timeout_s = hang, inner, timeout_s
        self._cut = threading.Event()

    def cut(self, uri, reason):
        """As a socket shut down under a blocked read: the waiting call returns (and raises the cut's error)."""
        self._inner.cut(uri, reason)
        self._cut.set()

    def __getattr__(self, name):
        inner = getattr(self._inner, name)
        if name != "relay":
            return inner

        def relay(method, args, *rest, **kwargs):  # a relayed call hangs like any other
            self._send(method)
            return inner(method, args, *rest, **kwargs)

        return relay

    def call(self, method, args):
        self._send(method)
        return self._inner.call(method, args)

    def _send(self, method: str) -> None:
        """The call reaches the metastore: it waits there while the metastore hangs."""
        metastore = self._inner.metastore
        self._hang.sent[(metastore, method)] += 1
        resumed = self._hang.hung.get(metastore)
        deadline = time.monotonic() + self._timeout_s
        while resumed is not None and not resumed.wait(0.01) and not self._cut.is_set():
            if time.monotonic() > deadline:
                self._inner.close()
                raise BackendUnavailable(metastore, self._inner.uris[0], "timed out")


@pytest.fixture
def hanging_handler(tmp_path):
    """A real handler (every feature) over fake metastores `primary` and `waggle` (prefix waggle_)
    that probes after 0.2 s, and the Hang that stops and resumes them."""
    waggle = FakeMetastore("waggle")
    waggle.create_database(database("sales"))
    hang = Hang(fake_connect({"primary": FakeMetastore("primary"), "waggle": waggle}))
    base = prefixed_config("thrift://primary:1", "thrift://waggle:1")
    config = replace(
        base,
        server=replace(base.server, probe_after_s=0.2, backend_timeout_s=30),
        store=StoreConfig(f"sqlite:///{tmp_path / 'hmsproxy.db'}"),
    )
    handler = build_handler(config, connect=hang)
    yield handler, hang
    for name in list(hang.hung):
        hang.resume(name)
    handler.close()


def wait_until(fn):
    """Wait for another thread to make fn() true; PATIENCE_S is a bound only a broken breaker reaches."""
    deadline = time.monotonic() + PATIENCE_S
    while not fn():
        assert time.monotonic() < deadline, f"condition not reached within {PATIENCE_S} s"
        time.sleep(0.02)


def test_a_hung_metastore_fails_waiting_and_new_calls_at_once_and_recovers(hanging_handler):
    handler, hang = hanging_handler
    session = Session(handler.backends, "test")  # one client's, kept through the hang

    def call_on(method, **fields):
        return unwrap(handler.dispatch(session, method, args(method, **fields)))

    assert call_on("get_database", name="waggle_sales").name == "waggle_sales"
    assert "waggle_sales" in call(handler, "get_all_databases")
    fanned_out = hang.sent[("waggle", "get_all_databases")]
    assert fanned_out >= 1  # while it answers, a fan-out asks it
    hang.stop("waggle")
    stuck, waited = in_flight(lambda: call_on("get_database", name="waggle_sales"))
    wait_until(lambda: handler.backends.breaker.trip("waggle") is not None)
    assert handler_metric(handler, "hmsproxy_backend_up", backend="waggle") == 0
    # The call waiting on it fails too (its connection cut), with the error new calls get; the
    # hung metastore has not answered, so nothing else could have ended it.
    stuck.join(PATIENCE_S)
    assert not stuck.is_alive() and "waggle" in hang.hung
    assert isinstance(waited["error"], idl.hive.MetaException) and "not answering since" in waited["error"].message
    sent = hang.sent[("waggle", "get_database")]  # the first call and the one in flight reached it

    # At once: the new call fails without reaching the hung metastore (where it would wait 30 s).
    with pytest.raises(idl.hive.MetaException) as err:
        call(handler, "get_database", name="waggle_sales")
    assert hang.sent[("waggle", "get_database")] == sent
    assert "metastore 'waggle'" in err.value.message and "not answering since" in err.value.message
    assert err.value.message == waited["error"].message
    # Other metastores, and fan-outs (whose deadline here is 60 s), don't wait for it: the
    # fan-out is not even sent there.
    assert call(handler, "get_database", name="default").name == "default"
    assert "waggle_sales" not in call(handler, "get_all_databases")
    assert hang.sent[("waggle", "get_all_databases")] == fanned_out

    hang.resume("waggle")
    wait_until(lambda: handler.backends.breaker.trip("waggle") is None)  # the half-open probe answers
    # The session whose call was cut goes on, on a new connection.
    assert call_on("get_database", name="waggle_sales").name == "waggle_sales"
    session.close()
    assert handler_metric(handler, "hmsproxy_backend_up", backend="waggle") == 1


def test_a_hung_primary_fails_fan_outs_at_once_and_readiness_names_it(hanging_handler):
    handler, hang = hanging_handler
    hang.stop("primary")
    stuck, _ = in_flight(lambda: call(handler, "get_database", name="default"))
    wait_until(lambda: handler.backends.breaker.trip("primary") is not None)
    with pytest.raises(idl.hive.MetaException, match="primary metastore 'primary' failed: not answering since"):
        call(handler, "get_all_databases")
    check = PrimaryCheck(handler)()
    assert not check.ok and check.detail.startswith("metastore 'primary' not answering since")
    hang.resume("primary")
    wait_until(lambda: handler.backends.breaker.trip("primary") is None)
    assert "default" in call(handler, "get_all_databases")
    stuck.join(PATIENCE_S)


def test_a_reload_that_changes_a_tripped_metastore_forgets_the_trip(hanging_handler):
    handler, hang = hanging_handler
    hang.stop("waggle")
    stuck, _ = in_flight(lambda: call(handler, "get_database", name="waggle_sales"))
    wait_until(lambda: handler.backends.breaker.trip("waggle") is not None)
    config = handler.config
    handler.apply_config(replace(config, server=replace(config.server, probe_after_s=0.3)))
    assert handler.backends.breaker.trip("waggle") is not None  # the same metastore: still tripped
    moved = replace(config.federated[0], uris=("thrift://waggle-2:1",))
    handler.apply_config(replace(config, federated=(moved,)))
    assert handler.backends.breaker.trip("waggle") is None
    hang.resume("waggle")
    stuck.join(PATIENCE_S)

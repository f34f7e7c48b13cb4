"""The circuit breaker (hmsproxy/upstream/breaker.py): its state machine on a fake clock, then a real
handler over fake metastores, one of which hangs like a SIGSTOPped process."""

from __future__ import annotations

import threading
import time
from dataclasses import replace

import pytest

from hmsproxy.app import build_handler
from hmsproxy.config.model import StoreConfig
from hmsproxy.ops.readiness import PrimaryCheck
from hmsproxy.protocol import idl
from hmsproxy.testing import FakeMetastore, database, fake_connect
from hmsproxy.upstream import breaker as breaker_module
from hmsproxy.upstream.breaker import RETRY_S, Breaker
from hmsproxy.upstream.wire import BackendUnavailable
from tests.support.fake_handlers import call
from tests.support.federation import prefixed_config
from tests.support.ops import handler_metric

AFTER = 3.0


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


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
    clock, probes, events = Clock(), Probes(), []
    b = Breaker(
        probes,
        lambda: AFTER,
        on_trip=lambda name, reason: events.append(("down", name, reason)),
        on_recover=lambda name: events.append(("up", name)),
        clock=clock,
        spawn=lambda name, fn: fn(),  # probes run inside tick()
        watch=False,
    )
    return b, clock, probes, events


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
    before = time.time()
    b.tick()
    trip = b.trip("dw")
    assert trip is not None and trip.uri == "thrift://dw:9083"
    assert before - AFTER - 1 <= trip.since <= before - AFTER + 1  # when the unanswered call started
    with pytest.raises(BackendUnavailable) as err:
        b.enter("dw")
    message = str(err.value)
    assert message.startswith("metastore 'dw' (thrift://dw:9083) is unavailable: not answering since ")
    assert "a probe on a new connection failed: timed out" in message and "fail at once" in message
    assert events == [("down", "dw", trip.reason)]
    # The primary's call was watched too, but its probe answered; its new calls go through.
    assert b.trip("primary") is None
    b.leave(b.enter("primary"))
    # Calls in flight are not touched: they leave when they end.
    b.leave(in_flight)
    b.leave(other)


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


def test_the_watchdog_starts_with_calls_and_ends_when_idle_or_closed(monkeypatch):
    monkeypatch.setattr(breaker_module, "IDLE_EXIT_S", 0.2)
    b = Breaker(lambda n, t: None, lambda: 0.4, on_trip=lambda n, r: None, on_recover=lambda n: None)
    assert not b.watching
    b.leave(b.enter("dw"))
    assert b.watching
    deadline = time.monotonic() + 10
    while b.watching and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not b.watching  # idle: no thread left behind
    b.leave(b.enter("dw"))
    assert b.watching
    b.close()
    deadline = time.monotonic() + 10
    while b.watching and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not b.watching


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
    call while they hang: a process stopped with SIGSTOP (the TCP connection is there, nothing answers)."""

    def __init__(self, connect):
        self.connect = connect
        self.hung: dict[str, threading.Event] = {}

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

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def call(self, method, args):
        resumed = self._hang.hung.get(self._inner.metastore)
        if resumed is not None and not resumed.wait(self._timeout_s):
            self._inner.close()
            raise BackendUnavailable(self._inner.metastore, self._inner.uris[0], "timed out")
        return self._inner.call(method, args)


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


def wait_until(fn, timeout_s: float = 10.0):
    deadline = time.monotonic() + timeout_s
    while not fn():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.02)


def test_a_hung_metastore_fails_new_calls_at_once_and_recovers(hanging_handler):
    handler, hang = hanging_handler
    assert call(handler, "get_database", name="waggle_sales").name == "waggle_sales"
    hang.stop("waggle")
    in_flight = {}

    def stuck_call():
        in_flight["result"] = call(handler, "get_database", name="waggle_sales")

    stuck = threading.Thread(target=stuck_call, daemon=True)
    stuck.start()
    wait_until(lambda: handler.backends.breaker.trip("waggle") is not None)
    assert handler_metric(handler, "hmsproxy_backend_up", backend="waggle") == 0

    started = time.monotonic()
    with pytest.raises(idl.hive.MetaException) as err:
        call(handler, "get_database", name="waggle_sales")
    assert time.monotonic() - started < 1
    assert "metastore 'waggle'" in err.value.message and "not answering since" in err.value.message
    # Other metastores, and fan-outs (whose deadline here is 60 s), don't wait for it.
    assert call(handler, "get_database", name="default").name == "default"
    started = time.monotonic()
    assert "waggle_sales" not in call(handler, "get_all_databases")
    assert time.monotonic() - started < 5

    hang.resume("waggle")
    wait_until(lambda: handler.backends.breaker.trip("waggle") is None, 5)  # the half-open probe answers
    assert call(handler, "get_database", name="waggle_sales").name == "waggle_sales"
    stuck.join(10)
    assert in_flight["result"].name == "waggle_sales"  # the call in flight waited and got its answer
    assert handler_metric(handler, "hmsproxy_backend_up", backend="waggle") == 1


def test_a_hung_primary_fails_fan_outs_at_once_and_readiness_names_it(hanging_handler):
    handler, hang = hanging_handler
    hang.stop("primary")
    stuck = threading.Thread(target=lambda: call(handler, "get_database", name="default"), daemon=True)
    stuck.start()
    wait_until(lambda: handler.backends.breaker.trip("primary") is not None)
    with pytest.raises(idl.hive.MetaException, match="primary metastore 'primary' failed: not answering since"):
        call(handler, "get_all_databases")
    check = PrimaryCheck(handler)()
    assert not check.ok and check.detail.startswith("metastore 'primary' not answering since")
    hang.resume("primary")
    wait_until(lambda: handler.backends.breaker.trip("primary") is None, 5)
    assert "default" in call(handler, "get_all_databases")
    stuck.join(10)


def test_a_reload_that_changes_a_tripped_metastore_forgets_the_trip(hanging_handler):
    handler, hang = hanging_handler
    hang.stop("waggle")
    stuck = threading.Thread(target=lambda: call(handler, "get_database", name="waggle_sales"), daemon=True)
    stuck.start()
    wait_until(lambda: handler.backends.breaker.trip("waggle") is not None)
    config = handler.config
    handler.apply_config(replace(config, server=replace(config.server, probe_after_s=0.3)))
    assert handler.backends.breaker.trip("waggle") is not None  # the same metastore: still tripped
    moved = replace(config.federated[0], uris=("thrift://waggle-2:1",))
    handler.apply_config(replace(config, federated=(moved,)))
    assert handler.backends.breaker.trip("waggle") is None
    hang.resume("waggle")
    stuck.join(10)

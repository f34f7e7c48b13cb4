"""The circuit breaker on an HA set (a metastore with several URIs, hmsproxy/upstream/breaker.py):
one hung URI is stalled while another answers, the metastore trips only when none does. First the
decision on a fake clock with fake probes, then Backends and sessions over fakes whose first URI
hangs like a SIGSTOPped instance (the connection opens, no call is answered until it is cut).

As in test_breaker.py, no assertion measures a duration: waits for another thread are bounded by
PATIENCE_S (tests/support/breaker_rig.py), which no working breaker comes near.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from dataclasses import replace

import pytest

from hmsproxy.config.model import AccessControlType, Config, DatabaseResolution, HedgeConfig, MetastoreConfig, ServerConfig
from hmsproxy.protocol import idl
from hmsproxy.testing import FakeMetastore, database, table
from hmsproxy.testing.connection import FakeConnection
from hmsproxy.upstream.backends import Backends
from hmsproxy.upstream.breaker import RETRY_S, Breaker
from hmsproxy.upstream.session import Session
from hmsproxy.upstream.wire import BackendUnavailable, in_order
from tests.support.breaker_rig import AFTER, PATIENCE_S, breaker_rig

A, B = "thrift://a:9083", "thrift://b:9083"


class Probes:
    """Probes of whole metastores and of single URIs; a URI in `silent` (or a metastore) does not answer."""

    def __init__(self):
        self.silent: set[str] = set()
        self.asked: list[tuple[str, str | None]] = []

    def __call__(self, name: str, timeout_s: float, uri: str | None = None) -> None:
        self.asked.append((name, uri))
        if (uri or name) in self.silent:
            raise BackendUnavailable(name, uri or f"{A}, {B}", "no answer within 3 s")


@pytest.fixture
def rig():
    return breaker_rig(Probes(), uris=lambda name: (A, B) if name == "ha" else (A,))


def _waiting_on(b: Breaker, uri: str) -> tuple[int, FakeConnection]:
    """A call to "ha" waiting on a connection to `uri`: (its token, the connection)."""
    conn = FakeConnection(FakeMetastore("ha"), "ha", (A, B))
    conn.avoid = lambda u: u != uri  # opens on `uri`
    conn.open()
    token = b.enter("ha")
    b.uses(token, conn)
    return token, conn


def test_a_hung_uri_is_stalled_while_another_answers_and_only_its_calls_are_cut(rig):
    b, clock, probes, events = rig
    (_, on_a), (_, on_b) = _waiting_on(b, A), _waiting_on(b, B)
    probes.silent.add(A)
    clock.now += AFTER
    b.tick()
    assert b.stalled("ha", A) and not b.stalled("ha", B)
    assert b.trip("ha") is None and events == []  # the set still works: hmsproxy_backend_up stays up
    assert on_a.cut_as is not None and on_a.cut_as[0] == A and B in on_a.cut_as[1]  # names both: which hung, which answered
    assert on_b.cut_as is None  # the call on the answering URI waits on: slow is not dead
    assert ("ha", A) in probes.asked and ("ha", B) in probes.asked
    # New calls go through, and new connections try the stalled URI last.
    b.leave(b.enter("ha"))
    assert in_order((A, B), lambda u: b.stalled("ha", u)) == [B, A]


def test_the_set_trips_as_a_whole_only_when_no_uri_answers(rig):
    b, clock, probes, events = rig
    _, on_a = _waiting_on(b, A)
    probes.silent.update({A, B})
    clock.now += AFTER
    b.tick()
    assert b.trip("ha") is not None and not b.stalled("ha", A)
    assert [e[:2] for e in events] == [("down", "ha")]
    assert on_a.cut_as is not None
    with pytest.raises(BackendUnavailable):
        b.enter("ha")
    # Tripped, the set is probed as a whole (Backends.probe asks it URI by URI); one answer recovers it.
    probes.silent.clear()
    clock.now += RETRY_S
    b.tick()
    assert b.trip("ha") is None and events[-1] == ("up", "ha")


def test_a_slow_uri_that_answers_its_probe_is_left_alone(rig):
    b, clock, probes, events = rig
    _, on_a = _waiting_on(b, A)
    clock.now += AFTER
    b.tick()
    assert probes.asked == [("ha", A)]  # its own URI first; it answered, so no other is asked
    assert on_a.cut_as is None and not b.stalled("ha", A) and events == []


def test_a_stalled_uri_is_probed_again_and_taken_back_once_it_answers(rig):
    b, clock, probes, events = rig
    token, conn = _waiting_on(b, A)
    probes.silent.add(A)
    clock.now += AFTER
    b.tick()
    assert b.stalled("ha", A)
    b.leave(token)
    probes.asked.clear()
    clock.now += RETRY_S
    b.tick()
    assert probes.asked == [("ha", A)]  # half-open: only the stalled URI, even with no call waiting on it
    assert b.stalled("ha", A)
    probes.silent.clear()
    clock.now += RETRY_S
    b.tick()
    assert not b.stalled("ha", A) and events == []
    assert in_order((A, B), lambda u: b.stalled("ha", u)) == [A, B]
    assert conn.cut_as is not None  # the cut connection is never used again


def test_a_single_uri_metastore_is_probed_as_a_whole_as_before(rig):
    b, clock, probes, events = rig
    token = b.enter("one")
    conn = FakeConnection(FakeMetastore("one"), "one", (A,))
    conn.open()
    b.uses(token, conn)
    probes.silent.add("one")
    clock.now += AFTER
    b.tick()
    assert probes.asked == [("one", None)]
    assert b.trip("one") is not None and not b.stalled("one", A)


# --------------------------------------------------------------------------- Backends and sessions over fakes

PAIR = MetastoreConfig("pair", (A, B), primary=True, access_control_type=AccessControlType.READ_AND_WRITE_AND_CREATE)


class _HungOn(FakeConnection):
    """A connection to the shared fake whose calls wait, while it is connected to a URI in `hung`,
    until cut (what the breaker does) or its call timeout; `calls` records (uri, method)."""

    def __init__(self, hung: dict[str, threading.Event], calls: list, timeout_s: float, *a, **kw):
        super().__init__(*a, **kw)
        self.hung, self.calls, self.timeout_s = hung, calls, timeout_s
        self._cut = threading.Event()

    def cut(self, uri: str, reason: str) -> None:
        super().cut(uri, reason)
        self._cut.set()

    def call(self, method, args):
        if not self.is_open:  # as ThriftConnection: a call opens it (the breaker's probes do so)
            self.open()
        self.calls.append((self.uri, method))
        resumed = self.hung.get(self.uri)
        deadline = time.monotonic() + self.timeout_s
        while resumed is not None and not resumed.wait(0.01) and not self._cut.is_set():
            if time.monotonic() > deadline:
                self.close()
                raise BackendUnavailable(self.metastore, self.uri, "timed out")
        if self.cut_as is not None:
            self.close()
            raise BackendUnavailable(self.metastore, *self.cut_as, cut=True)
        return super().call(method, args)


@contextmanager
def _over(metastore: MetastoreConfig):
    """(Backends over `metastore`, probing after 0.2 s; the URIs that hang -> their resume events; the calls sent)."""
    fake = FakeMetastore("pair")
    fake.create_database(database("shop"))
    fake.create_table(table("shop", "orders"))
    hung: dict[str, threading.Event] = {}
    calls: list[tuple[str, str]] = []

    def connect(name, uris, *, connect_timeout_s, call_timeout_s):
        return _HungOn(hung, calls, call_timeout_s, fake, name, uris)

    config = Config(ServerConfig(probe_after_s=0.2, backend_timeout_s=PATIENCE_S), DatabaseResolution.PREFIXED, metastore)
    backends = Backends(config, connect=connect)
    try:
        yield backends, hung, calls
    finally:
        for event in hung.values():
            event.set()
        backends.close()


@pytest.fixture
def pair():
    with _over(PAIR) as made:
        yield made


def _stall_a(backends: Backends, hung: dict, metastore: MetastoreConfig = PAIR) -> tuple[Session, BackendUnavailable]:
    """A session connected to A, then A hung and stalled by the write left waiting on it: (the
    session, the write's error)."""
    session = Session(backends)
    session.call(metastore, "get_all_databases", idl.HmsProxy.get_all_databases_args())  # connected on A
    hung[A] = threading.Event()
    with pytest.raises(BackendUnavailable) as failed:
        session.call(metastore, "create_table", idl.HmsProxy.create_table_args(tbl=table("shop", "new")))
    assert failed.value.uri == A and backends.breaker.stalled(metastore.name, A)
    return session, failed.value


def _wait_until(fn) -> None:
    deadline = time.monotonic() + PATIENCE_S
    while not fn():
        assert time.monotonic() < deadline, "not reached within PATIENCE_S"
        time.sleep(0.01)


def test_a_write_waiting_on_the_hung_uri_fails_naming_it_and_is_not_sent_again(pair):
    backends, hung, calls = pair
    session, error = _stall_a(backends, hung)
    assert error.cut and f"{A} not answering" in str(error) and B in str(error)
    assert [c for c in calls if c[1] == "create_table"] == [(A, "create_table")]  # a write is never sent twice
    assert backends.state("pair").up is not False
    # A new write goes to the other URI at once.
    session.call(PAIR, "create_table", idl.HmsProxy.create_table_args(tbl=table("shop", "after")))
    assert calls[-1] == (B, "create_table")
    # The URI answers again: it is taken back, and new connections open on it first.
    hung.pop(A).set()
    _wait_until(lambda: not backends.breaker.stalled("pair", A))
    conn = backends.new_connection(PAIR)
    conn.open()
    assert conn.uri == A


def test_a_read_cut_on_the_hung_uri_goes_again_on_the_other_one(pair):
    backends, hung, calls = pair
    session = Session(backends)
    session.call(PAIR, "get_all_databases", idl.HmsProxy.get_all_databases_args())  # connected on A
    hung[A] = threading.Event()
    got = session.call(PAIR, "get_table", idl.HmsProxy.get_table_args(dbname="shop", tbl_name="orders"), read_only=True)
    assert got.success.tableName == "orders"
    assert [c for c in calls if c[1] == "get_table"] == [(A, "get_table"), (B, "get_table")]
    assert backends.state("pair").up is True


def test_a_hedge_is_not_sent_to_a_stalled_uri():
    hedged = replace(PAIR, hedge=HedgeConfig(percentile=95, min_ms=20, max_ms=100))
    with _over(hedged) as (backends, hung, calls):
        _stall_a(backends, hung, hedged)
        hung[B] = threading.Event()  # now B hangs too: a read on it waits past the hedge threshold
        with pytest.raises(BackendUnavailable):  # no URI answers: the set trips, the read fails
            Session(backends).call(hedged, "get_table", idl.HmsProxy.get_table_args(dbname="shop", tbl_name="orders"), read_only=True)
        assert backends.hedging.stats["pair"].hedged >= 1  # the hedge was due ...
        assert (A, "get_table") not in calls  # ... and not sent to the stalled URI
        assert backends.breaker.trip("pair") is not None

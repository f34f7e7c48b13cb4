"""Hedged reads (hmsproxy/upstream/hedging.py) over fakes: the threshold, which calls are hedged, and
the race, with one URI of an HA pair hung (its calls wait until the hedge cuts them)."""

from __future__ import annotations

import re
import threading

import pytest

from hmsproxy.config.model import AccessControlType, Config, DatabaseResolution, HedgeConfig, MetastoreConfig, ServerConfig
from hmsproxy.protocol import idl
from hmsproxy.testing import FakeMetastore, database, table
from hmsproxy.testing.connection import FakeConnection
from hmsproxy.upstream.backends import Backends
from hmsproxy.upstream.hedging import MIN_SAMPLES, LatencyWindow, _next_uris
from hmsproxy.upstream.session import Session
from hmsproxy.upstream.wire import BackendUnavailable

A, B = "thrift://a:9083", "thrift://b:9083"
HEDGE = HedgeConfig(percentile=90, min_ms=20, max_ms=200)
#: The pair's: a read that is not hung must never reach its deadline, even on a loaded 2-core CI machine
#: (a fake's get_table once took over 200 ms there); a hung one still does, long before HUNG_S.
PAIR_HEDGE = HedgeConfig(percentile=90, min_ms=20, max_ms=500)
PAIR = MetastoreConfig("pair", (A, B), primary=True, access_control_type=AccessControlType.READ_AND_WRITE_AND_CREATE, hedge=PAIR_HEDGE)
#: How long a call to a hung URI waits unless cut (a write's "timeout").
HUNG_S = 1.0


def test_the_threshold_is_the_percentile_of_recent_reads_within_its_bounds():
    window = LatencyWindow()
    assert window.threshold_s(HEDGE) == 0.2  # too few answers: max-ms
    for i in range(MIN_SAMPLES * 5):
        window.add(0.001 * (i % 100))  # 0 .. 99 ms
    assert window.threshold_s(HEDGE) == pytest.approx(0.09, abs=0.002)
    assert window.threshold_s(HedgeConfig(percentile=10, min_ms=20, max_ms=200)) == 0.02  # p10 is 10 ms: min-ms
    for _ in range(300):
        window.add(5.0)  # a slow metastore: never more than max-ms
    assert window.threshold_s(HEDGE) == 0.2


def test_the_hedge_asks_the_uri_after_the_primarys():
    assert _next_uris((A, B), A) == (B,)
    assert _next_uris((A, B), B) == (A,)
    assert _next_uris((A, B, "thrift://c:1"), None) == (B, "thrift://c:1")


def test_only_reads_of_a_metastore_with_several_uris_are_hedged():
    backends = Backends(Config(ServerConfig(), DatabaseResolution.PREFIXED, PAIR))
    hedging = backends.hedging
    assert hedging.applies(PAIR, "get_table", True)
    assert not hedging.applies(PAIR, "create_table", False)
    assert not hedging.applies(PAIR, "lock", False)
    assert not hedging.applies(PAIR, "show_locks", True)  # a transaction call, though it reads
    single = MetastoreConfig("one", (A,), hedge=HEDGE)
    assert not hedging.applies(single, "get_table", True)
    assert not hedging.applies(MetastoreConfig("off", (A, B)), "get_table", True)
    backends.close()


class _HungOnA(FakeConnection):
    """A connection to the shared fake whose calls hang while it is connected to a hung URI, until
    abort() (what the hedge does to a losing primary) or HUNG_S."""

    def __init__(self, hung: set[str], calls: list, *a, **kw):
        super().__init__(*a, **kw)
        self.hung, self.calls = hung, calls
        self._cut = threading.Event()

    def abort(self) -> None:
        self._cut.set()

    def call(self, method, args):
        self.calls.append((self.uri or self.uris[0], method))
        if (self.uri or self.uris[0]) in self.hung:
            cut = self._cut.wait(HUNG_S)
            self.close()
            raise BackendUnavailable(self.metastore, self.uri, "cut by the hedge" if cut else "timed out")
        return super().call(method, args)


@pytest.fixture
def pair():
    fake = FakeMetastore("pair")
    fake.create_database(database("shop"))
    fake.create_table(table("shop", "orders"))
    hung: set[str] = set()
    calls: list[tuple[str, str]] = []

    def connect(name, uris, *, connect_timeout_s, call_timeout_s):
        return _HungOnA(hung, calls, fake, name, uris)

    backends = Backends(Config(ServerConfig(), DatabaseResolution.PREFIXED, PAIR), connect=connect)
    yield backends, hung, calls
    backends.close()


def _get_table(session: Session):
    return session.call(PAIR, "get_table", idl.HmsProxy.get_table_args(dbname="shop", tbl_name="orders"), read_only=True).success


def test_a_read_not_answered_goes_to_the_next_uri_and_its_answer_wins(pair):
    backends, hung, calls = pair
    session = Session(backends)
    assert _get_table(session).tableName == "orders"  # A answers: nothing hedged
    assert backends.hedging.stats["pair"].hedged == 0
    hung.add(A)
    assert _get_table(session).tableName == "orders"
    stats = backends.hedging.stats["pair"]
    assert (stats.hedged, stats.hedge_wins, stats.primary_wins) == (1, 1, 0)
    assert [uri for uri, m in calls if m == "get_table"] == [A, A, B]
    # The loser's connection is gone; the winner's is the session's now: the next read goes to B at once.
    kept = session.kept_connection(PAIR, True)
    assert kept.uri == B and kept.uris == (A, B)
    assert _get_table(session).tableName == "orders"
    assert backends.hedging.stats["pair"].hedged == 1
    assert [uri for uri, m in calls if m == "get_table"][-1] == B
    session.close()


def test_a_write_is_never_hedged(pair):
    backends, hung, calls = pair
    session = Session(backends)
    assert _get_table(session).tableName == "orders"  # connected (and its version asked) before A hangs
    hung.add(A)
    with pytest.raises(BackendUnavailable, match="timed out"):
        session.call(PAIR, "create_database", idl.HmsProxy.create_database_args(database=database("new")))
    assert [uri for uri, m in calls if m == "create_database"] == [A]
    assert "pair" not in backends.hedging.stats or backends.hedging.stats["pair"].hedged == 0
    session.close()


def test_when_neither_answers_the_primarys_error_stands(pair):
    backends, hung, calls = pair
    session = Session(backends)
    hung.update((A, B))
    with pytest.raises(BackendUnavailable):
        _get_table(session)
    assert backends.state("pair").up is False
    assert backends.hedging.stats["pair"].hedged == 1 and backends.hedging.stats["pair"].hedge_wins == 0
    session.close()


def test_the_hedge_key_of_a_metastore(tmp_path):
    from hmsproxy.config import describe
    from tests.unit.test_config import assert_error, own, own_error

    head = "primary-meta-store: {name: p, remote-meta-store-uris: 'thrift://a:9083,thrift://b:9083'"
    assert own(tmp_path, head + "}\n").primary.hedge is None
    assert own(tmp_path, head + ", hedge: true}\n").primary.hedge == HedgeConfig()
    assert own(tmp_path, head + ", hedge: {enabled: false}}\n").primary.hedge is None
    config = own(tmp_path, head + ", hedge: {percentile: 99, min-ms: 10, max-ms: 800}}\n")
    assert config.primary.hedge == HedgeConfig(percentile=99, min_ms=10, max_ms=800)
    assert re.search(r"hedged reads: +a read not answered within the p99 .*at least 10 ms, at most 800 ms", describe(config))
    assert_error(
        own_error(tmp_path, head + ", hedge: {min-ms: 10, max-ms: 5}}\n"), "hmsproxy.yml", "primary-meta-store.hedge.max-ms", "min-ms"
    )
    assert_error(
        own_error(tmp_path, head + ", hedge: {percentile: 100}}\n"), "hmsproxy.yml", "primary-meta-store.hedge.percentile", "below 100"
    )
    assert_error(own_error(tmp_path, head + ", hedge: {after: 5}}\n"), "hmsproxy.yml", "primary-meta-store.hedge.after", "unknown key")


def test_hedges_and_wins_are_metrics(pair):
    from prometheus_client import CollectorRegistry, generate_latest

    from hmsproxy.features.metrics import _BackendCollector

    backends, hung, _ = pair
    session = Session(backends)
    assert _get_table(session).tableName == "orders"
    hung.add(A)
    assert _get_table(session).tableName == "orders"
    registry = CollectorRegistry()
    registry.register(_BackendCollector(backends))
    text = generate_latest(registry).decode()
    assert 'hmsproxy_hedged_total{backend="pair"} 1.0' in text
    assert 'hmsproxy_hedge_wins_total{backend="pair",winner="hedge"} 1.0' in text
    assert 'hmsproxy_hedge_wins_total{backend="pair",winner="primary"} 0.0' in text
    assert 'hmsproxy_hedge_threshold_seconds{backend="pair"} 0.5' in text  # max-ms: too few reads yet
    session.close()

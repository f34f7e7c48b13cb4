"""The fast-path decision (hmsproxy/pipeline/fastpath.py) over hmsproxy.testing's fakes: which way a call
takes (shortcut, relay, metadata cache, full path) and why the others are declined, and that a feature
whose verdict depends on who asks is never bypassed by a decision remembered for someone else.

The proxy in front of the fake metastore is real (Handler and ProxyServer on a socket, buffered
transport): its reply sinks make the relay and its shortcuts live, over FakeConnection.relay."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import replace

import pytest
import thriftpy2.rpc
from thriftpy2.protocol import TBinaryProtocolFactory
from thriftpy2.thrift import TMessageType
from thriftpy2.utils import deserialize

from hmsproxy.config.model import CacheConfig, Config, DatabaseResolution, HedgeConfig, MappedTables, MetastoreConfig, ServerConfig
from hmsproxy.pipeline import fastpath
from hmsproxy.pipeline.call import Call
from hmsproxy.pipeline.handler import Handler
from hmsproxy.pipeline.platform import Feature
from hmsproxy.protocol import idl
from hmsproxy.protocol.relay import RelayPlan
from hmsproxy.routing.methods import METHOD_SPECS
from hmsproxy.testing import FakeConnection, FakeMetastore, database, fake_connect, table
from hmsproxy.upstream.session import Session
from tests.support.refusing_feature import NoBob
from tests.support.served import served

hive = idl.hive
PRIMARY = MetastoreConfig("primary", ("thrift://primary.fake:9083",), primary=True, hive_version="3.1")
CONFIG = Config(ServerConfig(), DatabaseResolution.PREFIXED, PRIMARY)


@pytest.fixture
def metastore():
    fake = FakeMetastore("primary")
    fake.create_database(database("sales"))
    fake.create_table(table("sales", "orders"))
    return fake


class NoBobEachCall(NoBob):
    """The same rule, not declared memoizable (the default): it is asked on every call."""

    name = "no_bob_each_call"
    memoizable_verdict = False


@contextmanager
def proxy(metastore, *features, config=CONFIG):
    handler = Handler(config, connect=fake_connect({metastore.name: metastore}))
    handler.install(*features)
    with served(handler) as server:
        yield handler, server


@contextmanager
def client_as(server, user: str):
    client = thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", server.port, timeout=10_000)
    client.set_ugi(user, [f"{user}-group"])
    try:
        yield client
    finally:
        client.close()


def alternate(server, calls_each: int) -> list[str]:
    """get_table by alice, then bob, `calls_each` times, each on their own connection: what each got."""
    seen = []
    with client_as(server, "alice") as alice, client_as(server, "bob") as bob:
        alice.get_table("sales", "orders")  # the metastore answers get_table once on the full path: relayed from then on
        for _ in range(calls_each):
            seen.append(alice.get_table("sales", "orders").tableName)
            with pytest.raises(hive.MetaException, match="bob may not read tables"):
                bob.get_table("sales", "orders")
            seen.append("refused")
    return seen


def test_a_decision_is_remembered_per_caller_so_bob_is_refused_every_time(metastore):
    with proxy(metastore, NoBob) as (handler, server):
        rule = handler.features.get("no_bob")
        assert alternate(server, 4) == ["orders", "refused"] * 4
        # alice's first relayed call is remembered and her next three take its shortcut; bob's
        # refusals are never remembered, and alice's decision is not his: he is asked every time.
        assert rule.asked == ["alice"] + ["alice", "bob"] + ["bob"] * 3
        assert handler.shortcuts.used == 3
        assert handler.backends.state("primary").relayed == 4
    assert [c.user for c in metastore.calls_to("get_table")] == ["alice"] * 5  # bob's never reached it


def test_a_verdict_for_one_call_only_is_asked_on_every_call_by_each_user(metastore):
    with proxy(metastore, NoBobEachCall) as (handler, server):
        rule = handler.features.get("no_bob_each_call")
        assert alternate(server, 4) == ["orders", "refused"] * 4
        assert rule.asked == ["alice"] + ["alice", "bob"] * 4
        assert handler.shortcuts.used == 0 and len(handler.shortcuts) == 0
        assert handler.backends.state("primary").relayed == 4  # still relayed: only the decision is not kept


def test_the_order_shortcut_relay_full_path(metastore):
    with proxy(metastore) as (handler, server), client_as(server, "alice") as alice:
        state = handler.backends.state("primary")
        alice.get_table("sales", "orders")  # full path: the metastore may lack get_table (translation)
        assert (state.relayed, handler.shortcuts.used) == (0, 0)
        alice.get_table("sales", "orders")  # relayed, and the decision remembered
        assert (state.relayed, handler.shortcuts.used, len(handler.shortcuts)) == (1, 0, 1)
        alice.get_table("sales", "orders")  # the shortcut
        assert (state.relayed, handler.shortcuts.used) == (2, 1)
        with client_as(server, "carol") as carol:
            carol.get_table("sales", "orders")  # another caller decides for herself
            assert (state.relayed, handler.shortcuts.used, len(handler.shortcuts)) == (3, 1, 2)


def test_a_cached_metastore_is_not_relayed_its_cache_answers(metastore):
    cached = replace(PRIMARY, cache=CacheConfig(follow_notifications=False))
    with proxy(metastore, config=replace(CONFIG, primary=cached)) as (handler, server), client_as(server, "alice") as alice:
        for _ in range(3):
            assert alice.get_table("sales", "orders").tableName == "orders"
        assert handler.backends.state("primary").relayed == 0 and handler.shortcuts.used == 0
    assert len(metastore.calls_to("get_table")) == 1  # the cache answered the others


class NeedsAnswers(Feature):
    name = "needs_answers"
    methods = frozenset({"get_database"})

    def on_response(self, call, result):
        pass


class RoutesThem(Feature):
    name = "routes_them"
    methods = frozenset({"get_database"})

    def on_request(self, call):
        call.route = call.router.route_primary()


def plan_for(handler: Handler, method: str = "get_database", *, sink=object(), routed_by_feature=False, **args):
    """What step 2 says of `method` with `args` once routed, for a client with reply sink `sink`."""
    session = Session(handler.backends, "test")
    spec = METHOD_SPECS[method]
    call = Call(session, spec, spec.args_cls(**args), handler.router, reply_sink=sink)
    call.client_db = "sales"
    call.route = handler.router.route("sales")
    return relay_or_reason(handler, call, routed_by_feature)


def relay_or_reason(handler: Handler, call: Call, routed_by_feature: bool):
    """The call's Plan's relay (how), or why it is decoded: one of the two, never both."""
    plan = handler.fastpath.plan(call, handler.fastpath.method_plans[call.spec.name], None, routed_by_feature=routed_by_feature)
    assert (plan.relay is None) != (plan.declined is None) and plan.metastore is call.route.metastore
    return plan.relay if plan.relay is not None else plan.declined


def test_why_the_relay_is_declined(metastore):
    with proxy(metastore, NeedsAnswers) as (handler, _):
        assert plan_for(handler, name="sales") == fastpath.NEEDS_RESULT  # asked last
        assert plan_for(handler, name="sales", sink=None) == fastpath.NO_SINK  # the internal client, a framed or one-way call
        assert plan_for(handler, name="sales", routed_by_feature=True) == fastpath.ROUTED_BY_FEATURE
        assert plan_for(handler, "get_table", dbname="sales", tbl_name="orders") == fastpath.MAY_TRANSLATE
    mapped = replace(CONFIG, primary=replace(PRIMARY, mapped_tables=(MappedTables("sales", ("orders",)),)))
    with proxy(metastore, config=mapped) as (handler, _):
        assert plan_for(handler, "get_all_tables", db_name="sales") == fastpath.TABLES_TO_FILTER
    with proxy(metastore) as (handler, _):
        assert isinstance(plan_for(handler, name="sales"), RelayPlan)
        assert isinstance(plan_for(handler, "get_all_tables", db_name="sales"), RelayPlan)  # no mapped-tables: nothing to filter
    with proxy(metastore, config=replace(CONFIG, server=replace(CONFIG.server, relay=False))) as (handler, _):
        assert plan_for(handler, name="sales") == fastpath.RELAY_OFF
    with proxy(metastore, config=replace(CONFIG, primary=replace(PRIMARY, cache=CacheConfig(follow_notifications=False)))) as (handler, _):
        assert plan_for(handler, name="sales") == fastpath.CACHED
    pair = replace(PRIMARY, uris=(*PRIMARY.uris, "thrift://standby:9083"), hedge=HedgeConfig())
    with proxy(metastore, config=replace(CONFIG, primary=pair)) as (handler, _):
        assert plan_for(handler, name="sales") == fastpath.HEDGED  # a loser must not have written to the client
    with proxy(metastore, config=replace(CONFIG, primary=replace(PRIMARY, hedge=HedgeConfig()))) as (handler, _):
        assert isinstance(plan_for(handler, name="sales"), RelayPlan)  # one URI: nothing to hedge to


def test_a_call_a_feature_routed_is_neither_relayed_nor_remembered(metastore):
    with proxy(metastore, RoutesThem) as (handler, server), client_as(server, "alice") as alice:
        for _ in range(3):
            assert alice.get_database("sales").name == "sales"
        assert handler.backends.state("primary").relayed == 0 and len(handler.shortcuts) == 0


class Collected:
    """A reply sink that keeps what it is given (downstream/reply_sink.py's interface)."""

    def __init__(self):
        self.header, self.body = None, b""

    def begin(self, mtype, header=None):
        self.mtype, self.header = mtype, header

    def write(self, data):
        self.body += data


@pytest.mark.parametrize("name", ["orders", "missing"])
def test_the_fakes_relay_copies_what_its_call_answers(metastore, name):
    conn = FakeConnection(metastore)
    args = idl.HmsProxy.get_table_args("sales", name)
    sink = Collected()
    assert conn.relay("get_table", args, sink)[0] == TMessageType.REPLY == sink.mtype
    relayed = deserialize(idl.HmsProxy.get_table_result(), sink.body, TBinaryProtocolFactory())
    assert repr(relayed) == repr(conn.call("get_table", args))  # declared exceptions compare by identity
    assert sink.header is None  # a struct was sent: the sink makes the client's header itself


def test_a_hive_3_catalog_name_is_relayed_and_to_an_older_metastore_as_the_plain_name(metastore):
    hive23 = replace(CONFIG, primary=replace(PRIMARY, hive_version="2.3"))
    with proxy(metastore, config=hive23) as (handler, server), client_as(server, "alice") as alice:
        before = handler.backends.state("primary").relayed
        for _ in range(2):
            got = alice.get_database("@hive#sales")  # the fake knows "sales" only
            assert got.name == "sales" and got.catalogName == "hive"  # inserted as the answer was copied
        assert handler.backends.state("primary").relayed == before + 2
        assert len(handler.fastpath.shortcuts) == 0  # a shortcut would send "@hive#sales" as the client wrote it
    with proxy(metastore) as (handler, _):  # Hive 3.1 knows catalogs: the name goes as it is, and may be remembered
        session = Session(handler.backends, "test")
        spec = METHOD_SPECS["get_database"]
        call = Call(session, spec, spec.args_cls(name="@hive#sales"), handler.router, reply_sink=object())
        call.client_db, call.route = "sales", handler.router.route("@hive#sales")
        assert relay_or_reason(handler, call, routed_by_feature=False) == RelayPlan()

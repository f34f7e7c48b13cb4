"""A real Handler (routing, rewriting, fan-out, error boundary, Backends) over fake metastores.

No JVM and no socket: `Handler(config, connect=fake_connect(...))` makes every
backend connection a hmsproxy.testing FakeConnection.
"""

from dataclasses import replace
from functools import partial

import pytest

from hmsproxy.config.auth_to_local import parse_rule, user_short_name
from hmsproxy.config.model import AccessControlType, Config, DatabaseResolution, MetastoreConfig, ServerConfig
from hmsproxy.pipeline.handler import Handler
from hmsproxy.protocol import idl
from hmsproxy.testing import FakeMetastore, args, database, fake_connect, table, unwrap
from hmsproxy.upstream.backends import Backends
from hmsproxy.upstream.session import Session

hive = idl.hive

PRIMARY = MetastoreConfig(
    "primary", ("thrift://primary:9083",), primary=True, access_control_type=AccessControlType.READ_AND_WRITE_AND_CREATE
)
DW = MetastoreConfig("dw", ("thrift://dw:9083",), database_prefix="dw_", read_only_uris=("thrift://dw-ro:9083",))
CONFIG = Config(ServerConfig(connect_timeout_s=3.0, backend_timeout_s=7.0), DatabaseResolution.PREFIXED, PRIMARY, (DW,))


@pytest.fixture
def primary():
    return FakeMetastore("primary")


@pytest.fixture
def dw():
    m = FakeMetastore("dw")
    m.create_database(database("sales"))
    m.create_table(table("sales", "orders"))
    return m


@pytest.fixture
def connect(primary, dw):
    return fake_connect({"primary": primary, "dw": dw})


@pytest.fixture
def handler(connect):
    h = Handler(CONFIG, connect=connect)
    yield h
    h.close()


@pytest.fixture
def session(handler):
    s = Session(handler.backends, "test-client")
    yield s
    s.close()


def dispatch(handler, session, method, **fields):
    return handler.dispatch(session, method, args(method, **fields))


def test_fan_out_lists_every_metastores_databases_with_their_prefix(handler, session):
    assert sorted(dispatch(handler, session, "get_all_databases").success) == ["default", "dw_default", "dw_sales"]


def test_a_routed_call_is_renamed_on_the_way_in_and_out(handler, session, primary, dw):
    found = unwrap(dispatch(handler, session, "get_table", dbname="dw_sales", tbl_name="orders"))
    assert (found.dbName, found.tableName) == ("dw_sales", "orders")
    assert [(c.args.dbname, c.args.tbl_name) for c in dw.calls_to("get_table")] == [("sales", "orders")]
    assert primary.calls_to("get_table") == []


def test_a_declared_exception_of_the_backend_reaches_the_client(handler, session):
    with pytest.raises(hive.NoSuchObjectException, match="missing table not found"):
        unwrap(dispatch(handler, session, "get_table", dbname="dw_sales", tbl_name="missing"))


def test_the_clients_identity_reaches_every_backend(handler, session, primary, dw):
    dispatch(handler, session, "set_ugi", user_name="alice", group_names=["analysts"])
    unwrap(dispatch(handler, session, "get_table", dbname="dw_sales", tbl_name="orders"))
    assert dw.calls_to("get_table")[-1].user == "alice"
    assert [c.args.user_name for c in primary.calls_to("set_ugi")] == ["alice"]


def test_an_authenticated_client_cannot_claim_another_name(handler, session, primary, dw):
    """After Kerberos (downstream/kerberos.py) said who the client is, set_ugi changes nothing: the
    metastores hear the authenticated short name, on the fan-out and on connections opened later."""
    session.authenticate("alice", "alice@EXAMPLE.COM")
    dispatch(handler, session, "set_ugi", user_name="mallory", group_names=["admins"])
    assert (session.user, session.groups, session.caller) == ("alice", [], ("alice", ()))
    unwrap(dispatch(handler, session, "get_table", dbname="dw_sales", tbl_name="orders"))
    assert dw.calls_to("get_table")[-1].user == "alice"
    assert {c.args.user_name for c in primary.calls_to("set_ugi") + dw.calls_to("set_ugi")} == {"alice"}


def test_a_principal_allowed_to_impersonate_acts_for_others(handler, session, primary):
    """server.sasl.impersonation: a service principal's set_ugi counts, as a proxy user's in Hadoop."""
    session.authenticate("svc", "svc/host@EXAMPLE.COM", impersonates=True)
    dispatch(handler, session, "set_ugi", user_name="bob", group_names=["analysts"])
    assert (session.user, session.caller, session.principal) == ("bob", ("bob", ("analysts",)), "svc/host@EXAMPLE.COM")
    # The new connection first says who authenticated, then the fan-out says whom it acts for.
    assert [c.args.user_name for c in primary.calls_to("set_ugi")] == ["svc", "bob"]


def test_a_proxy_user_naming_a_principal_acts_for_its_short_name(handler, session, primary):
    """As Hadoop's createProxyUser(name).getShortUserName(): set_ugi('bob@EXAMPLE.COM') acts as bob,
    by the session's auth-to-local rules; a name no rule maps is refused."""
    rules = (parse_rule("RULE:[1:$1@$0](.*@EXAMPLE[.]COM)s/@.*//"),)
    short_name = partial(user_short_name, rules=rules, own_realm="EXAMPLE.COM")
    session.authenticate("svc", "svc/host@EXAMPLE.COM", impersonates=True, short_name=short_name)
    dispatch(handler, session, "set_ugi", user_name="bob@EXAMPLE.COM", group_names=[])
    assert (session.user, session.caller) == ("bob", ("bob", ()))
    assert primary.calls_to("set_ugi")[-1].args.user_name == "bob"
    with pytest.raises(hive.MetaException, match="no auth-to-local rule gives bob@OTHER.ORG a user name"):
        unwrap(dispatch(handler, session, "set_ugi", user_name="bob@OTHER.ORG", group_names=[]))
    assert session.user == "bob"


def test_a_backend_that_is_down_fails_alone_and_recovers(handler, session, dw):
    dw.go_down("connection refused")
    with pytest.raises(hive.MetaException) as err:
        unwrap(dispatch(handler, session, "get_table", dbname="dw_sales", tbl_name="orders"))
    assert "metastore 'dw'" in err.value.message and "unavailable" in err.value.message
    assert dispatch(handler, session, "get_all_databases").success == ["default"]  # the primary alone
    assert handler.backends.state("dw").up is False
    dw.come_up()
    assert unwrap(dispatch(handler, session, "get_table", dbname="dw_sales", tbl_name="orders")).tableName == "orders"
    assert handler.backends.state("dw").up is True


def test_connections_get_the_configured_timeouts_and_read_only_uris(handler, session, connect):
    unwrap(dispatch(handler, session, "get_table", dbname="dw_sales", tbl_name="orders"))
    dw_requests = [r for r in connect.requests if r.metastore == "dw"]
    assert dw_requests and all(r.uris == ("thrift://dw-ro:9083",) for r in dw_requests)  # get_* calls read there
    assert {(r.connect_timeout_s, r.call_timeout_s) for r in connect.requests} == {(3.0, 7.0)}


def test_backends_alone_translate_for_a_backend_lacking_get_table():
    hive4 = FakeMetastore("new", version="4.0.1", missing={"get_table"})
    hive4.create_table(table("default", "t"))
    config = Config(ServerConfig(), DatabaseResolution.PREFIXED, MetastoreConfig("new", ("thrift://new:9083",), primary=True))
    backends = Backends(config, connect=fake_connect({"new": hive4}))
    session = Session(backends, "test-client")
    try:
        for _ in range(2):
            assert unwrap(session.call(config.primary, "get_table", args("get_table", dbname="default", tbl_name="t"))).tableName == "t"
    finally:
        session.close()
    assert backends.state("new").missing_methods == {"get_table"}
    assert hive4.methods_called == ["getVersion", "get_table", "get_table_req", "get_table_req"]


def test_a_reload_that_moves_a_metastore_moves_the_open_sessions_with_it(handler, session, connect, dw):
    unwrap(dispatch(handler, session, "get_table", dbname="dw_sales", tbl_name="orders"))
    before = list(session._conns.values())
    assert [tuple(c.uris) for c in before] == [("thrift://dw-ro:9083",)]

    moved = replace(DW, uris=("thrift://dw-2:9083",), read_only_uris=("thrift://dw-2-ro:9083",))
    handler.apply_config(replace(CONFIG, federated=(moved,)))
    unwrap(dispatch(handler, session, "get_table", dbname="dw_sales", tbl_name="orders"))

    assert connect.requests[-1].uris == ("thrift://dw-2-ro:9083",)  # a new connection, to where it is now
    assert not before[0].is_open  # the old one is closed, not left to a metastore that may be gone
    assert [tuple(c.uris) for c in session._conns.values()] == [("thrift://dw-2-ro:9083",)]

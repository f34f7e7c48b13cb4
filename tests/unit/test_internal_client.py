"""Hooks read metastores in process over the calling client's own backend connections:
no connect, set_ugi or version probe per hook, and the caller's per-call state untouched."""

from __future__ import annotations

import pytest

from hmsproxy.pipeline.platform import Feature
from hmsproxy.protocol import idl
from hmsproxy.testing import FakeMetastore, database, fake_connect, partition, table
from hmsproxy.upstream.session import Session
from tests.support.fake_handlers import fake_federation

COLUMNS = (("id", "int"), ("country", "string"))
PARTITIONED = (("ds", "string"),)


@pytest.fixture
def primary():
    fake = FakeMetastore("primary")
    fake.create_database(database("shop"))
    fake.create_table(table("shop", "plain", columns=COLUMNS, partition_keys=PARTITIONED))
    fake.add_partition(partition("shop", "plain", ["1"]))
    return fake


@pytest.fixture
def connector(primary):
    return fake_connect({"primary": primary, "waggle": FakeMetastore("waggle")})


@pytest.fixture
def handler(tmp_path, primary, connector):
    h = fake_federation(tmp_path, primary, connect=connector)
    yield h
    h.close()


@pytest.fixture
def session(handler):
    s = Session(handler.backends, "10.0.0.7:50000")
    s.set_ugi("alice", ["analysts"])
    yield s
    s.close()


def dispatch(handler, session, method, **fields):
    return handler.dispatch(session, method, getattr(idl.HmsProxy, method + "_args")(**fields))


def test_skews_alter_checks_open_no_connection(handler, session, primary, connector):
    dispatch(handler, session, "get_table", dbname="shop", tbl_name="plain")  # the client's connection exists
    made = len(connector.requests)
    reads = len(primary.calls_to("get_table"))
    plain = table("shop", "plain", columns=COLUMNS, partition_keys=PARTITIONED, parameters={"k": "v"})
    assert dispatch(handler, session, "alter_table", dbname="shop", tbl_name="plain", new_tbl=plain).o1 is None
    altered = partition("shop", "plain", ["1"], parameters={"k": "v"})
    assert dispatch(handler, session, "alter_partition", db_name="shop", tbl_name="plain", new_part=altered).o1 is None
    assert primary.get_table("shop", "plain").parameters["k"] == "v"
    # skew read the table twice (alter_table, alter_partition) and the partitions once, as alice ...
    hook_reads = primary.calls_to("get_table")[reads:]
    assert [c.user for c in hook_reads] == ["alice", "alice"]
    assert [c.user for c in primary.calls_to("get_partitions_by_names")] == ["alice"]
    # ... on the connection the client already had
    assert len(connector.requests) == made
    assert primary.calls_to("set_ugi") and len(primary.calls_to("set_ugi")) == 1


class ReadsInItsHook(Feature):
    """Reads the database of each get_table in on_routed and notes what the caller's session held."""

    name = "reads_in_its_hook"
    methods = frozenset({"get_table", "get_database"})

    def __init__(self, platform):
        super().__init__(platform)
        self.seen = []
        #: The reply sink of each get_database routed (the hook's own, made by the internal client).
        self.sinks = []

    def on_routed(self, call):
        if call.method == "get_database":
            self.sinks.append(call.reply_sink)
            return
        with self.platform.client_for(call) as client:
            found = client.call("get_database", name=call.client_db)
            self.seen.append((found.name, client.user, call.session.served_stale))


def test_the_hooks_call_leaves_the_callers_per_call_state_alone(handler, session, connector):
    hook = handler.features.add(ReadsInItsHook(handler.platform))
    session.served_stale = True  # as if this call were answered from the cache (audit resets it in on_complete)
    args = idl.HmsProxy.get_table_args(dbname="shop", tbl_name="plain")
    handler.dispatch(session, "get_table", args, reply_sink=object())  # as from a plain-socket client (a fake connection: never relayed)
    # the internal get_database's own on_complete (audit) reset its flag, not the caller's
    assert hook.seen == [("shop", "alice", True)]
    assert hook.sinks == [None]  # its answer is for the hook, never the client's socket
    made = len(connector.requests)
    dispatch(handler, session, "get_table", dbname="shop", tbl_name="plain")
    assert len(connector.requests) == made and len(hook.seen) == 2
    assert session._conns and all(c.is_open for c in session._conns.values())  # closing the hook's client closed none


def test_a_borrowed_session_shares_identity_and_connections_not_per_call_state(handler, session):
    session.served_stale = True
    twin = session.borrowed()
    assert (twin.user, twin.groups, twin.served_stale, twin.client_address) == ("alice", ["analysts"], False, "hmsproxy")
    twin.call(handler.config.primary, "get_database", idl.HmsProxy.get_database_args(name="shop"))
    assert list(session._conns) == list(twin._conns)  # the connection it opened is the client's
    twin.close()
    assert all(c.is_open for c in session._conns.values())
    assert session.served_stale is True

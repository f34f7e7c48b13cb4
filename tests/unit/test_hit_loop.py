"""Shortcut hits served in C (downstream/hits.py, protocol/_hits.c): a real ProxyServer in front of a
fake metastore on a loopback socket (tests/support/socket_metastore.py), so the proxy's own
ThriftConnection and the hit loop run as in production.

A repeated read is answered by the loop without the Python shortcut, byte for byte as the full
path answers it (the catalog filled in for a metastore older than Hive 3), counted by metrics and
`Shortcuts.used`; whatever a hit cannot do goes back to Python and ends as it would there: a write
in between, a reload, a connection the metastore closed, an answer longer than the C exchange
takes, a metastore that hangs (the breaker cuts the waiting hit), audit that must record each call
before its answer, and calls a client sends back to back."""

from __future__ import annotations

import json
import socket
import time
from contextlib import contextmanager
from dataclasses import replace

import pytest
import thriftpy2.rpc
from thriftpy2.protocol import TBinaryProtocolFactory
from thriftpy2.thrift import TMessageType
from thriftpy2.utils import serialize

from hmsproxy.config.model import AuditConfig, Config, DatabaseResolution, MetastoreConfig, ServerConfig
from hmsproxy.downstream import hits
from hmsproxy.features.audit import Audit
from hmsproxy.features.metrics import Metrics
from hmsproxy.pipeline import shortcuts
from hmsproxy.pipeline.handler import Handler
from hmsproxy.protocol import idl
from hmsproxy.protocol.framing import MessageReader, header_bytes
from hmsproxy.testing import FakeMetastore, database, table
from tests.support.fastpath_spy import python_shortcuts_seen
from tests.support.served import served
from tests.support.socket_metastore import SocketMetastore

hive = idl.hive


@pytest.fixture(autouse=True)
def long_lived(monkeypatch):
    monkeypatch.setattr(shortcuts, "TTL_S", 60.0)  # decisions outlive a slow machine's pauses


@pytest.fixture
def metastore():
    fake = FakeMetastore("primary", version="3.0")  # what a Hive 2.3 metastore answers: catalogs are filled in
    fake.create_database(database("sales"))
    fake.create_table(table("sales", "orders", parameters={"owner": "ops"}))
    sock = SocketMetastore(fake)
    yield sock
    sock.close()


def config_for(metastore: SocketMetastore, **server) -> Config:
    primary = MetastoreConfig("primary", (metastore.uri,), primary=True)
    return Config(ServerConfig(**{"backend_timeout_s": 30.0, **server}), DatabaseResolution.PREFIXED, primary)


@contextmanager
def proxy(metastore: SocketMetastore, **server):
    handler = Handler(config_for(metastore, **server))
    handler.install(Metrics, Audit)
    with served(handler) as srv:
        yield handler, srv


@contextmanager
def client_of(srv):
    client = thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", srv.port, timeout=20_000)
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def python_shortcuts(monkeypatch):
    """How many calls took the shortcut's Python path (FastPath.shortcut)."""
    return python_shortcuts_seen(monkeypatch)


def requests_counted(handler: Handler, method: str, outcome: str) -> float:
    body, _ = handler.features.get("metrics").render()
    for line in body.decode().splitlines():
        if line.startswith(f'hmsproxy_requests_total{{backend="primary",method="{method}",outcome="{outcome}"}}'):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_repeated_reads_are_answered_by_the_hit_loop_as_the_full_path_answers(metastore, python_shortcuts):
    with proxy(metastore) as (handler, srv), client_of(srv) as client:
        client.get_table("sales", "orders")  # the full path (answered once before it is relayed, as get_table may need translating)
        first = client.get_table("sales", "orders")  # relayed, and so decided
        assert first.catNameHive3 == "hive" and first.parameters["owner"] == "ops"
        before, through_python = handler.shortcuts.used, len(python_shortcuts)
        for _ in range(20):
            assert client.get_table("sales", "orders") == first
        assert handler.shortcuts.used == before + 20
        assert len(python_shortcuts) == through_python  # not one of them went through Python
        assert [c.method for c in metastore.fake.calls].count("get_table") == 22


def test_hits_and_their_outcomes_count_in_the_next_scrape(metastore):
    with proxy(metastore) as (handler, srv), client_of(srv) as client:
        for _ in range(5):
            client.get_table("sales", "orders")
        for _ in range(4):
            with pytest.raises(hive.NoSuchObjectException):
                client.get_table("sales", "missing")
        assert requests_counted(handler, "get_table", "ok") == 5
        assert requests_counted(handler, "get_table", "NoSuchObjectException") == 4


def test_hits_waiting_for_their_hooks_are_completed_when_the_client_is_quiet(metastore):
    with proxy(metastore) as (handler, srv), client_of(srv) as client:
        for _ in range(5):
            client.get_table("sales", "orders")
        deadline = time.monotonic() + 5
        while handler.answered_hits.pending and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not handler.answered_hits.pending  # within IDLE_MS, not at the next call or scrape


def test_a_write_between_hits_is_seen_by_the_next_read(metastore, python_shortcuts):
    with proxy(metastore) as (handler, srv), client_of(srv) as client:
        for _ in range(3):
            orders = client.get_table("sales", "orders")
        orders.parameters["owner"] = "finance"
        client.alter_table("sales", "orders", orders)
        assert client.get_table("sales", "orders").parameters["owner"] == "finance"
        assert client.get_table("sales", "orders").parameters["owner"] == "finance"


def test_a_reload_sends_the_next_read_through_python_once(metastore, python_shortcuts):
    with proxy(metastore) as (handler, srv), client_of(srv) as client:
        for _ in range(3):
            client.get_table("sales", "orders")
        handler.apply_config(replace(handler.config, server=replace(handler.config.server, probe_after_s=2.0)))
        through_python = len(python_shortcuts)
        for _ in range(5):
            client.get_table("sales", "orders")
        assert len(python_shortcuts) == through_python + 1  # decided anew under the new snapshot, then hits again


def test_a_connection_the_metastore_closed_is_replaced_and_the_hit_answered(metastore):
    with proxy(metastore) as (handler, srv), client_of(srv) as client:
        first = client.get_table("sales", "orders")
        client.get_table("sales", "orders")
        metastore.close_next()  # the hit's round trip finds the connection closed: it goes again on a new one
        assert client.get_table("sales", "orders") == first
        assert client.get_table("sales", "orders") == first


def test_an_answer_longer_than_the_c_exchange_takes_is_streamed_on_by_python(metastore, monkeypatch):
    monkeypatch.setattr(hits, "WHOLE_IN_C", 64)  # every answer is longer: the loop hands each hit to the relay
    with proxy(metastore) as (handler, srv), client_of(srv) as client:
        client.get_table("sales", "orders")
        first = client.get_table("sales", "orders")
        before = handler.shortcuts.used
        for _ in range(5):
            assert client.get_table("sales", "orders") == first
        assert handler.shortcuts.used == before + 5


def test_a_hung_metastore_fails_the_hit_waiting_on_it_and_serves_again_once_it_answers(metastore):
    with proxy(metastore, probe_after_s=0.3) as (handler, srv), client_of(srv) as client:
        for _ in range(3):
            client.get_table("sales", "orders")
        metastore.hold()
        started = time.monotonic()
        with pytest.raises(hive.MetaException, match="primary"):
            client.get_table("sales", "orders")  # a hit in flight when the probe failed: cut
        assert time.monotonic() - started < 10
        metastore.release()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                assert client.get_table("sales", "orders").tableName == "orders"
                break
            except hive.MetaException:  # tripped until the watchdog's next probe is answered
                time.sleep(0.1)
        else:
            pytest.fail("the metastore was not used again after it answered")


def test_with_audit_on_each_call_is_recorded_before_its_answer(metastore, tmp_path, python_shortcuts):
    log = tmp_path / "audit.log"
    with proxy(metastore) as (handler, srv), client_of(srv) as client:
        handler.apply_config(replace(handler.config, audit=AuditConfig(enabled=True, file=str(log))))
        for n in range(1, 6):
            client.get_table("sales", "orders")
            assert len(log.read_text().splitlines()) == n  # written before the client had its answer
        assert len(python_shortcuts) == 5  # none served in C
        assert json.loads(log.read_text().splitlines()[-1])["method"] == "get_table"


def test_calls_sent_back_to_back_are_answered_in_order(metastore):
    def call(name: str, seqid: int) -> bytes:
        args = idl.HmsProxy.get_table_args(dbname="sales", tbl_name=name)
        return header_bytes("get_table", TMessageType.CALL, seqid) + serialize(args, TBinaryProtocolFactory())

    with proxy(metastore) as (handler, srv), client_of(srv) as client:
        client.get_table("sales", "orders")
        with socket.create_connection(("127.0.0.1", srv.port), timeout=20) as raw:
            raw.sendall(call("orders", 1) + call("orders", 2) + call("missing", 3))  # one write, three calls
            replies = MessageReader(raw.recv)
            assert [replies.next().header.seqid for _ in range(3)] == [1, 2, 3]

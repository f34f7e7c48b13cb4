"""A shortcut hit's backend round trip in C (`_thriftwalk.exchange`, through wire.ThriftConnection.relay
with the client's bytes): against a scripted metastore on a loopback socket, the answer held for the
client is byte for byte what the Python relay (relay.copy_body) sends, whether it arrives whole or
in pieces, filled with the catalog or not, short or longer than the C path takes (then streamed on
by copy_body); and each failure (the metastore closing before or inside an answer, a timeout, bytes
that are not Thrift) raises what the Python path raises at the same point."""

from __future__ import annotations

import re
import socket
import threading
import time

import pytest
from thriftpy2.thrift import TMessageType

from hmsproxy.protocol import framing, idl
from hmsproxy.protocol._thriftwalk import exchange
from hmsproxy.protocol.framing import header_bytes, message_bounds
from hmsproxy.protocol.relay import RelayBroken, outcome
from hmsproxy.routing.default_catalog import catalog_fill
from hmsproxy.routing.methods import METHOD_SPECS
from hmsproxy.testing import partition, table
from hmsproxy.upstream import wire
from hmsproxy.upstream.wire import WHOLE_IN_C, BackendUnavailable, ThriftConnection
from tests.unit.test_relayed_catalog import FILLED, Sample, encoded

A = idl.HmsProxy


class Script:
    """A metastore on 127.0.0.1 that reads one whole call per connection and sends `reply` in pieces
    of `piece` bytes (a short pause between them, so the reader sees partial answers), then closes
    if `close_after` bytes were sent (else keeps the connection open until the test ends)."""

    def __init__(self, reply: bytes, piece: int = 1 << 20, close_after: int | None = None):
        self.reply, self.piece, self.close_after = reply, piece, close_after
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(10)
        self.kept: list[socket.socket] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def uri(self) -> str:
        return f"thrift://127.0.0.1:{self.listener.getsockname()[1]}"

    def _serve(self) -> None:
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return
        self.kept.append(conn)
        got = b""
        while (bounds := message_bounds(got)) is None or bounds[4] < 0:
            chunk = conn.recv(65536)
            if not chunk:
                return
            got += chunk
        reply = self.reply if self.close_after is None else self.reply[: self.close_after]
        for at in range(0, len(reply), self.piece):
            conn.sendall(reply[at : at + self.piece])
            if self.piece < len(reply):
                time.sleep(0.0005)
        if self.close_after is not None:
            conn.close()

    def close(self) -> None:
        self.listener.close()
        self.thread.join(timeout=10)
        for conn in self.kept:
            conn.close()


class Sink:
    """The client's side (downstream/reply_sink.ReplySink's interface): what it would be sent."""

    def __init__(self):
        self.chunks: list[bytes] = []
        self.header = b""

    def begin(self, mtype: int, header: bytes | None = None) -> None:
        self.header = header

    def write(self, data: bytes) -> None:
        self.chunks.append(data)

    def hold(self, reply: bytes) -> None:
        self.chunks.append(reply)

    def sent(self) -> bytes:
        return self.header + b"".join(self.chunks)


def request(method: str, args) -> bytes:
    return header_bytes(method, TMessageType.CALL, 7) + encoded(args)


def reply(method: str, result, mtype: int = TMessageType.REPLY) -> bytes:
    return header_bytes(method, mtype, 7) + encoded(result)


def relayed(answer: bytes, method: str, fill, *, in_c: bool, monkeypatch, **script) -> tuple[Sink, tuple]:
    """The client's bytes for `answer` relayed to a shortcut hit of `method`, by the C exchange or
    (in_c False) by the Python relay alone."""
    with monkeypatch.context() as patched:
        if not in_c:
            patched.setattr(wire, "exchange", None)
        server = Script(answer, **script)
        conn = ThriftConnection("m", (server.uri,), call_timeout_s=10)
        try:
            sink = Sink()
            args = getattr(A, method + "_args")()
            outcome = conn.relay(method, request(method, args), sink, fill)
            return sink, outcome
        finally:
            conn.close()
            server.close()


def test_the_exchange_sends_the_request_and_returns_the_whole_reply_read_in_pieces():
    answer = reply("get_table", A.get_table_result(success=table("shop", "events")))
    server = Script(answer, piece=7)
    sock = socket.create_connection(("127.0.0.1", server.listener.getsockname()[1]))
    try:
        status, mtype, header_length, data = exchange(sock.fileno(), request("get_table", A.get_table_args()), WHOLE_IN_C, 0, b"", 0)
    finally:
        sock.close()
        server.close()
    assert (status, mtype, data) == (framing.DONE, TMessageType.REPLY, answer)
    assert header_length == message_bounds(answer)[3]


IN_C = [m for m in FILLED if catalog_fill(METHOD_SPECS[m].success_type).in_c]


def test_the_c_path_fills_the_shapes_it_takes_and_leaves_the_rest_to_copy_body():
    assert {"get_table", "get_database", "get_partitions", "get_partitions_by_filter"} <= set(IN_C)
    assert "get_table_req" not in IN_C  # GetTableResult.table: a nested shape, copy_body's


@pytest.mark.parametrize("piece", [1 << 20, 13])
@pytest.mark.parametrize("method", IN_C)
def test_a_filled_answer_is_what_the_python_relay_sends(method, piece, monkeypatch):
    spec = METHOD_SPECS[method]
    fill = catalog_fill(spec.success_type)
    result = spec.result_cls(success=Sample().value(*_success_type(spec)))
    answer = reply(method, result)
    in_python, outcome_python = relayed(answer, method, fill, in_c=False, monkeypatch=monkeypatch, piece=piece)
    in_c, outcome_c = relayed(answer, method, fill, in_c=True, monkeypatch=monkeypatch, piece=piece)
    assert in_c.sent() == in_python.sent() != answer  # a catalog went in
    assert in_c.chunks == [in_c.sent()] and outcome_c[0] == outcome_python[0] == TMessageType.REPLY
    assert outcome(spec.result_cls, *outcome_c) == ("ok", None)  # what metrics and audit record


def _success_type(spec):
    ttype, _, *rest = spec.result_cls.thrift_spec[0]
    return ttype, rest[0] if len(rest) > 1 else None


def test_declared_exceptions_and_application_errors_go_as_they_are(monkeypatch):
    fill = catalog_fill(METHOD_SPECS["get_table"].success_type)
    missing = reply("get_table", A.get_table_result(o2=idl.hive.NoSuchObjectException(message="shop.x table not found")))
    sink, relayed_outcome = relayed(missing, "get_table", fill, in_c=True, monkeypatch=monkeypatch)
    assert sink.sent() == missing
    assert outcome(A.get_table_result, *relayed_outcome) == ("NoSuchObjectException", "shop.x table not found")
    unknown = header_bytes("get_table", TMessageType.EXCEPTION, 7) + encoded(A.get_table_result())  # an empty struct
    sink, (mtype, _) = relayed(unknown, "get_table", fill, in_c=True, monkeypatch=monkeypatch)
    assert sink.sent() == unknown and mtype == TMessageType.EXCEPTION


def test_an_answer_longer_than_the_c_path_takes_is_streamed_on_by_copy_body(monkeypatch):
    parts = [partition("shop", "events", [f"2026-11-{i:05d}"]) for i in range(2000)]
    answer = reply("get_partitions", A.get_partitions_result(success=parts))
    assert len(answer) > 2 * WHOLE_IN_C
    fill = catalog_fill(METHOD_SPECS["get_partitions"].success_type)
    in_python, _ = relayed(answer, "get_partitions", fill, in_c=False, monkeypatch=monkeypatch, piece=50_000)
    in_c, _ = relayed(answer, "get_partitions", fill, in_c=True, monkeypatch=monkeypatch, piece=50_000)
    assert in_c.sent() == in_python.sent()
    assert len(in_c.chunks) > 1 and max(map(len, in_c.chunks)) <= 2 * framing.CHUNK  # streamed, not held whole


def _failure(answer: bytes, in_c: bool, monkeypatch, **script) -> Exception:
    with pytest.raises((BackendUnavailable, RelayBroken)) as caught:
        relayed(answer, "get_table", None, in_c=in_c, monkeypatch=monkeypatch, **script)
    return caught.value


def _same(e: Exception) -> tuple:
    return type(e), re.sub(r"127\.0\.0\.1:\d+", "PORT", str(e)), getattr(e, "gone_before_answer", None), getattr(e, "cut", None)


@pytest.mark.parametrize("close_after", [0, 5, "header", "header+10", "all-1"])
def test_a_metastore_closing_before_or_inside_an_answer_fails_as_on_the_python_path(close_after, monkeypatch):
    answer = reply("get_table", A.get_table_result(success=table("shop", "events")))
    header_length = message_bounds(answer)[3]
    at = {"header": header_length, "header+10": header_length + 10, "all-1": len(answer) - 1}.get(close_after, close_after)
    in_c = _failure(answer, True, monkeypatch, close_after=at, piece=3)
    in_python = _failure(answer, False, monkeypatch, close_after=at, piece=3)
    assert _same(in_c) == _same(in_python)
    if at < header_length:  # no answer began: a read may go again on a new connection
        assert isinstance(in_c, BackendUnavailable) and in_c.gone_before_answer
    else:
        assert isinstance(in_c, RelayBroken) and "closed the connection inside an answer" in str(in_c)


def test_bytes_that_are_not_thrift_fail_as_on_the_python_path(monkeypatch):
    garbage = b"\x80\x02\x00\x02" + bytes(12)  # a version word Thrift has not: no message
    assert _same(_failure(garbage, True, monkeypatch)) == _same(_failure(garbage, False, monkeypatch))


def test_a_metastore_that_never_answers_ends_by_the_kernels_timeout(monkeypatch):
    server = Script(b"")  # reads the call, sends nothing, keeps the connection open
    conn = ThriftConnection("m", (server.uri,), call_timeout_s=0.3)
    try:
        with pytest.raises(BackendUnavailable) as caught:
            conn.relay("get_table", request("get_table", A.get_table_args()), Sink())
    finally:
        conn.close()
        server.close()
    assert caught.value.reason == "no answer within 0.3 s" and not caught.value.gone_before_answer
    assert not conn.is_open


def test_a_cut_from_another_thread_ends_the_exchange_with_the_cuts_error():
    server = Script(b"")
    conn = ThriftConnection("m", (server.uri,), call_timeout_s=600)
    conn.open()
    caught: list[Exception] = []

    def waiting():
        try:
            conn.relay("get_table", request("get_table", A.get_table_args()), Sink())
        except Exception as e:
            caught.append(e)

    thread = threading.Thread(target=waiting, daemon=True)
    thread.start()
    time.sleep(0.2)  # let it block in recv (GIL released); a cut before that ends it the same way
    conn.cut(server.uri, "its probe failed")
    thread.join(timeout=10)
    server.close()
    assert not thread.is_alive()
    (e,) = caught
    assert isinstance(e, BackendUnavailable) and e.cut and e.reason == "its probe failed"

"""protocol/statement_wire.py speaks the statement calls as thriftpy2 does: a thriftpy2 server of the
proxy's IDL (buffered and framed) reads its calls and its answers, exceptions included, come back."""

from __future__ import annotations

import socket
import threading

import pytest
from thriftpy2.rpc import make_server
from thriftpy2.transport import TBufferedTransportFactory, TFramedTransportFactory

from hmsproxy.clients.proxy import HmsProxyClient, HmsProxyError
from hmsproxy.dev.ports import free_port
from hmsproxy.protocol import idl
from hmsproxy.protocol.statement_wire import UNKNOWN_METHOD, ApplicationError, MetaError, StatementConnection


class Handler:
    """What a thriftpy2 server of HmsProxy was asked, and its answers."""

    def __init__(self):
        self.calls = []

    def set_ugi(self, user_name, group_names):
        self.calls.append(("set_ugi", user_name, group_names))
        return [user_name, *group_names]

    def hmsproxy_execute_script(self, statements, current_database):
        self.calls.append(("script", statements, current_database))
        if "fail" in statements:
            raise idl.hive.MetaException(message=f"hmsproxy: refused: {statements} ✗")
        return [
            idl.hms.HmsProxyResult(columns=["name", "note"], rows=[["a", "é"], ["", "x;y"]]),
            idl.hms.HmsProxyResult(columns=["result"], rows=[["done"]]),
            idl.hms.HmsProxyResult(columns=[], rows=[]),
            idl.hms.HmsProxyResult(),  # unset lists: empty
        ]

    def hmsproxy_execute(self, statements, current_database):
        self.calls.append(("one", statements, current_database))
        return idl.hms.HmsProxyResult(columns=["result"], rows=[[statements]])


@pytest.fixture(params=["buffered", "framed"])
def server(request):
    """(port, handler, transport) of a thriftpy2 server on a free port, stopped after the test."""
    handler, port = Handler(), free_port()
    factory = TFramedTransportFactory() if request.param == "framed" else TBufferedTransportFactory()
    srv = make_server(idl.HmsProxy, handler, "127.0.0.1", port, trans_factory=factory, client_timeout=10_000)
    srv.daemon = True
    thread = threading.Thread(target=srv.serve, daemon=True)
    thread.start()
    _wait_listening(port)
    yield port, handler, request.param
    srv.close()
    with socket.create_connection(("127.0.0.1", port), timeout=5):
        pass  # wakes its accept() to see it is closed
    thread.join(timeout=10)
    srv.trans.close()
    assert not thread.is_alive()


def _wait_listening(port: int) -> None:
    for _ in range(500):  # bounded: 5 s
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            threading.Event().wait(0.01)
    raise AssertionError(f"the test server did not listen on {port}")


def test_calls_and_answers_match_thriftpy2(server):
    port, handler, transport = server
    conn = StatementConnection("127.0.0.1", port, timeout_s=10, framed=transport == "framed")
    try:
        assert conn.set_ugi("álice", ["g1", "g2"]) == ["álice", "g1", "g2"]
        results = conn.execute_script("SHOW REMOTE DATABASES;\nSHOW REMOTE TABLES IN ü", "shop")
        assert results == [(["name", "note"], [["a", "é"], ["", "x;y"]]), (["result"], [["done"]]), ([], []), ([], [])]
        assert conn.execute("DROP REMOTE TABLE t", "default") == (["result"], [["DROP REMOTE TABLE t"]])
        with pytest.raises(MetaError) as refused:
            conn.execute_script("fail", "default")
        assert refused.value.message == "hmsproxy: refused: fail ✗"
        assert conn.execute("after a refusal, the connection still works", "d")[1] == [["after a refusal, the connection still works"]]
    finally:
        conn.close()
    assert handler.calls == [
        ("set_ugi", "álice", ["g1", "g2"]),
        ("script", "SHOW REMOTE DATABASES;\nSHOW REMOTE TABLES IN ü", "shop"),
        ("one", "DROP REMOTE TABLE t", "default"),
        ("script", "fail", "default"),
        ("one", "after a refusal, the connection still works", "d"),
    ]


def test_the_python_client_runs_statements_and_says_refusals(server):
    port, handler, transport = server
    with HmsProxyClient(f"thrift://127.0.0.1:{port}", user="bob", transport=transport) as client:
        [listed, done, *_] = client.execute("SHOW REMOTE DATABASES", database="shop")
        assert (listed.columns, listed.rows, done.rows) == (["name", "note"], [["a", "é"], ["", "x;y"]], [["done"]])
        with pytest.raises(HmsProxyError, match="^hmsproxy: refused: fail ✗$"):
            client.execute("fail")
    assert handler.calls[0] == ("set_ugi", "bob", [])
    assert handler.calls[-1] == ("script", "fail", "default")


def test_a_server_without_the_calls_answers_unknown_method():
    """A metastore (no hmsproxy_execute*): the client's fallback call is refused the same way, and
    the connection stays usable between the two."""
    handler, port = Handler(), free_port()
    srv = make_server(idl.ThriftHiveMetastore, handler, "127.0.0.1", port, client_timeout=10_000)
    srv.daemon = True
    thread = threading.Thread(target=srv.serve, daemon=True)
    thread.start()
    try:
        _wait_listening(port)
        with HmsProxyClient(f"thrift://127.0.0.1:{port}") as client, pytest.raises(ApplicationError) as refused:
            client.execute("SHOW REMOTE DATABASES")
        assert refused.value.type == UNKNOWN_METHOD
        assert [c[0] for c in handler.calls] == ["set_ugi"]  # neither statement call reached the handler
    finally:
        srv.close()
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass
        thread.join(timeout=10)
        srv.trans.close()


def test_nothing_listening_says_where():
    port = free_port()
    with pytest.raises(ConnectionError, match=f"^could not connect to 127.0.0.1:{port}: "):
        StatementConnection("127.0.0.1", port, timeout_s=5)

"""An answer the IDL cannot carry (the proxy's own defect, e.g. a None inside a list of strings) is
encoded whole before any byte is written: the client gets an internal error naming the method, and
its connection goes on serving the next call (before, the half-written answer closed it)."""

from __future__ import annotations

import pytest
import thriftpy2.rpc
from thriftpy2.thrift import TApplicationException
from thriftpy2.transport import TCyFramedTransportFactory

from hmsproxy.downstream.server import ProxyServer
from hmsproxy.protocol import idl
from hmsproxy.routing.methods import METHOD_SPECS
from hmsproxy.testing import FakeMetastore

BROKEN_METHOD = "get_all_databases"


@pytest.fixture
def primary():
    return FakeMetastore("primary")


@pytest.fixture(params=["buffered", "framed"])
def transport(request):
    return request.param


@pytest.fixture
def served(handler, transport):
    inner = handler.dispatch

    def dispatch(session, method, *rest):
        if method == BROKEN_METHOD:
            return METHOD_SPECS[method].result_cls(success=["db", None])
        return inner(session, method, *rest)

    handler.dispatch = dispatch
    server = ProxyServer(handler, "127.0.0.1", 0, transport=transport).start()
    yield server
    server.stop()


def test_an_unencodable_answer_is_an_internal_error_and_the_connection_lives_on(served, transport, caplog):
    extra = {"trans_factory": TCyFramedTransportFactory()} if transport == "framed" else {}
    client = thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", served.port, timeout=10000, **extra)
    try:
        with pytest.raises(TApplicationException) as raised:
            client.get_all_databases()
        assert raised.value.type == TApplicationException.INTERNAL_ERROR
        assert str(raised.value) == f"Internal error processing {BROKEN_METHOD}: hmsproxy could not encode its answer"
        assert "the answer to get_all_databases cannot be encoded" in caplog.text
        assert client.get_database("default").name == "default"  # the same connection, still in step
    finally:
        client.close()

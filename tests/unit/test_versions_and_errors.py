"""Backends of newer Hive versions and the error boundary, against small fake metastores.

The fakes are thriftpy2 servers that speak the real wire protocol but keep
one table in memory; they stand in for Hive 4 (which removed get_table),
which no jar here provides.
"""

import threading
import types

import pytest
import thriftpy2.rpc
from thriftpy2.thrift import TApplicationException

from hmsproxy import idl
from hmsproxy.config_model import Config, DatabaseResolution, MetastoreConfig, ServerConfig
from hmsproxy.dev.stack import free_port
from hmsproxy.handler import Handler
from hmsproxy.server import ProxyServer

hive = idl.hive
REMOVED_IN_HIVE_4 = {"get_table", "get_table_objects_by_name"}


class Hive4Like:
    """Answers only the *_req forms of the table calls, as Hive 4.0.1+ does."""

    def __init__(self):
        self.calls = []

    def get_all_databases(self):
        return ["default", "sales"]

    def getVersion(self):
        return "4.0.1"

    def set_ugi(self, user_name, group_names):
        return group_names

    def get_table_req(self, req):
        self.calls.append(("get_table_req", req.dbName, req.tblName))
        if req.tblName != "orders":
            raise hive.NoSuchObjectException(message=f"{req.dbName}.{req.tblName} table not found")
        return hive.GetTableResult(table=hive.Table(tableName="orders", dbName=req.dbName))

    def get_table_objects_by_name_req(self, req):
        self.calls.append(("get_table_objects_by_name_req", req.dbName, tuple(req.tblNames)))
        return hive.GetTablesResult(tables=[hive.Table(tableName=t, dbName=req.dbName) for t in req.tblNames])


def service_without(methods):
    svc = idl.ThriftHiveMetastore
    fake = types.SimpleNamespace(thrift_services=[m for m in svc.thrift_services if m not in methods])
    for m in svc.thrift_services:
        setattr(fake, m + "_args", getattr(svc, m + "_args"))
        setattr(fake, m + "_result", getattr(svc, m + "_result"))
    return fake


@pytest.fixture
def hive4():
    impl = Hive4Like()
    port = free_port()
    server = thriftpy2.rpc.make_server(service_without(REMOVED_IN_HIVE_4), impl, "127.0.0.1", port)
    t = threading.Thread(target=server.serve, daemon=True)
    t.start()
    yield impl, f"thrift://127.0.0.1:{port}"
    server.close()


def serve(config):
    handler = Handler(config)
    server = ProxyServer(handler, "127.0.0.1", 0).start()
    client = thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", server.port, timeout=10000)
    return handler, server, client


@pytest.mark.parametrize("configured_version", ["4.0.1", None])
def test_get_table_is_translated_for_hive_4(hive4, configured_version):
    impl, uri = hive4
    primary = MetastoreConfig("new", (uri,), primary=True, hive_version=configured_version)
    handler, server, client = serve(Config(ServerConfig(), DatabaseResolution.PREFIXED, primary))
    try:
        table = client.get_table("sales", "orders")
        assert (table.dbName, table.tableName) == ("sales", "orders")
        with pytest.raises(hive.NoSuchObjectException, match="missing"):
            client.get_table("sales", "missing")
        tables = client.get_table_objects_by_name("sales", ["a", "b"])
        assert [t.tableName for t in tables] == ["a", "b"]
        assert ("get_table_req", "sales", "orders") in impl.calls
        assert handler.backends.state("new").probed_version == "4.0.1"
    finally:
        client.close()
        server.stop()
        handler.close()


def test_internal_error_keeps_the_connection_and_uses_javas_words(hive4, monkeypatch):
    _, uri = hive4
    primary = MetastoreConfig("new", (uri,), primary=True)
    handler, server, client = serve(Config(ServerConfig(), DatabaseResolution.PREFIXED, primary))
    try:

        def broken(*a, **k):
            raise RuntimeError("boom")

        monkeypatch.setattr(handler.access, "check", broken)
        with pytest.raises(TApplicationException) as err:
            client.get_table("sales", "orders")
        assert str(err.value) == "Internal error processing get_table"
        monkeypatch.undo()
        assert client.get_table("sales", "orders").tableName == "orders"
        client.shutdown()  # one-way, a no-op on the proxy
        assert client.getName() == "hmsproxy"
    finally:
        client.close()
        server.stop()
        handler.close()

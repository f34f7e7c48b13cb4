"""Backends of newer Hive versions and the error boundary, against a fake metastore.

The backend is a hmsproxy.testing FakeMetastore that answers "Invalid method
name" for the calls Hive 4.0.1+ removed (no jar here provides Hive 4), reached
through the connection seam; the proxy in front of it is real (Handler and
ProxyServer) and the client speaks Thrift to it over a socket.
"""

from contextlib import closing, contextmanager

import pytest
import thriftpy2.rpc
from thriftpy2.thrift import TApplicationException

from hmsproxy.config.model import Config, DatabaseResolution, MetastoreConfig, ServerConfig
from hmsproxy.pipeline.handler import Handler
from hmsproxy.protocol import idl
from hmsproxy.testing import FakeMetastore, database, fake_connect, table
from tests.support.served import served

hive = idl.hive
REMOVED_IN_HIVE_4 = {"get_table", "get_table_objects_by_name"}


class Hive4Like(FakeMetastore):
    """Lacks get_table and get_table_objects_by_name; `explode` makes get_table_req fail inside the proxy process."""

    def __init__(self):
        super().__init__("new", version="4.0.1", missing=REMOVED_IN_HIVE_4)
        self.explode = False
        self.create_database(database("sales"))
        for name in ("orders", "a", "b"):
            self.create_table(table("sales", name))

    def get_table_req(self, req):
        if self.explode:
            raise RuntimeError("boom")  # not a Thrift exception: the proxy must treat it as its own bug
        return super().get_table_req(req)


@pytest.fixture
def hive4():
    return Hive4Like()


@contextmanager
def serve(config, metastore):
    """(handler, client) of a proxy over the fake `metastore`, all closed when the block ends."""
    handler = Handler(config, connect=fake_connect({metastore.name: metastore}))
    with served(handler) as server, closing(thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", server.port, timeout=10000)) as client:
        yield handler, client


def config_for(hive_version):
    primary = MetastoreConfig("new", ("thrift://hive4.fake:9083",), primary=True, hive_version=hive_version)
    return Config(ServerConfig(), DatabaseResolution.PREFIXED, primary)


@pytest.mark.parametrize("configured_version", ["4.0.1", None])
def test_get_table_is_translated_for_hive_4(hive4, configured_version):
    with serve(config_for(configured_version), hive4) as (handler, client):
        table = client.get_table("sales", "orders")
        assert (table.dbName, table.tableName) == ("sales", "orders")
        with pytest.raises(hive.NoSuchObjectException, match="missing"):
            client.get_table("sales", "missing")
        tables = client.get_table_objects_by_name("sales", ["a", "b"])
        assert [t.tableName for t in tables] == ["a", "b"]
        assert ("sales", "orders") in [(c.args.req.dbName, c.args.req.tblName) for c in hive4.calls_to("get_table_req")]
        assert handler.backends.state("new").probed_version == "4.0.1"
        # A configured version never tries the removed call; a probed one tries it once, then remembers.
        assert len(hive4.calls_to("get_table")) == (0 if configured_version else 1)


def test_internal_error_keeps_the_connection_and_uses_javas_words(hive4):
    with serve(config_for(None), hive4) as (handler, client):
        hive4.explode = True
        with pytest.raises(TApplicationException) as err:
            client.get_table("sales", "orders")
        assert str(err.value) == "Internal error processing get_table"
        hive4.explode = False
        assert client.get_table("sales", "orders").tableName == "orders"
        client.shutdown()  # one-way, a no-op on the proxy
        assert client.getName() == "hmsproxy"


class Hive31Like(FakeMetastore):
    """Answers getVersion "3.0" as Hive 2.3 does, but has Hive 3's get_catalogs."""

    def handle(self, method, args, client):
        if method == "get_catalogs":
            return idl.HmsProxy.get_catalogs_result(success=hive.GetCatalogsResponse(names=["hive"]))
        return super().handle(method, args, client)


@pytest.mark.parametrize(("fake", "decided"), [(FakeMetastore, "2.x"), (Hive31Like, "3.x")])
def test_getversions_three_oh_is_decided_by_the_catalogs(fake, decided):
    """Hive 2.3 and 3.1 both answer getVersion "3.0": an unconfigured 2.3 must not be taken for a
    Hive 3 (transactions refuse write ids on Hive before 3 by this version)."""
    old = fake("new", version="3.0")
    old.create_database(database("sales"))
    with serve(config_for(None), old) as (handler, client):
        assert "sales" in client.get_all_databases()
        assert handler.backends.state("new").probed_version == "3.0"
        assert handler.backends.version("new") == decided

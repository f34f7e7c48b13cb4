"""Thrift-level behaviour of the proxy in front of real metastores."""

import socket
import threading
import time

import pytest
import thriftpy2
import thriftpy2.rpc
from thriftpy2.thrift import TApplicationException

from hmsproxy.config.model import MappedTables, MetastoreConfig
from hmsproxy.protocol import idl
from tests.support.federation import ANSWER_DEADLINE_MS, leave_out_after, prefixed_config

hive = idl.hive


def make_table(db, name, partition_keys=()):
    sd = hive.StorageDescriptor(
        cols=[hive.FieldSchema(name="id", type="int", comment=None)],
        location=None,
        inputFormat="org.apache.hadoop.mapred.TextInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
        compressed=False,
        numBuckets=-1,
        serdeInfo=hive.SerDeInfo(name=None, serializationLib="org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe", parameters={}),
        bucketCols=[],
        sortCols=[],
        parameters={},
    )
    keys = [hive.FieldSchema(name=k, type="string", comment=None) for k in partition_keys]
    return hive.Table(tableName=name, dbName=db, owner="tester", sd=sd, partitionKeys=keys, parameters={}, tableType="MANAGED_TABLE")


@pytest.fixture(scope="module")
def sales_tables(metastores, federated_dbs):
    """sales.orders_2026 and sales.secret on the federated metastore, created directly."""
    client = metastores[1].client()
    try:
        existing = set(client.get_all_tables("sales"))
        for name in ("orders_2026", "secret"):
            if name not in existing:
                client.create_table(make_table("sales", name))
    finally:
        client.close()


def test_primary_database_round_trip(proxy_client):
    proxy_client.create_database(hive.Database(name="thrift_db", description="d", locationUri=None, parameters={}))
    try:
        assert proxy_client.get_database("thrift_db").name == "thrift_db"
        assert "thrift_db" in proxy_client.get_all_databases()
    finally:
        proxy_client.drop_database("thrift_db", True, True)


def test_federated_names_are_rewritten_both_ways(proxy_client, sales_tables):
    table = proxy_client.get_table("waggle_sales", "orders_2026")
    assert table.dbName == "waggle_sales"
    tables = proxy_client.get_table_objects_by_name("waggle_sales", ["orders_2026"])
    assert [t.dbName for t in tables] == ["waggle_sales"]
    db = proxy_client.get_database("waggle_sales")
    assert db.name == "waggle_sales"


def test_unmapped_tables_are_invisible_everywhere(proxy, proxy_config, proxy_client, sales_tables):
    mapped = (MappedTables("sales", ("orders.*",)),)
    with proxy_config(lambda base: prefixed_config(base.primary.uris[0], base.federated[0].uris[0], mapped_tables=mapped)):
        assert proxy_client.get_table("waggle_sales", "orders_2026").tableName == "orders_2026"
        with pytest.raises(hive.NoSuchObjectException, match=r"waggle_sales\.secret table not found in any mappings"):
            proxy_client.get_table("waggle_sales", "secret")
        assert "secret" not in proxy_client.get_all_tables("waggle_sales")
        assert "secret" not in proxy_client.get_tables("waggle_sales", "*")
        names = [t.tableName for t in proxy_client.get_table_objects_by_name("waggle_sales", ["orders_2026", "secret"])]
        assert names == ["orders_2026"]
        metas = proxy_client.get_table_meta("waggle_*", "*", [])
        assert ("waggle_sales", "orders_2026") in {(m.dbName, m.tableName) for m in metas}
        assert "secret" not in {m.tableName for m in metas}
    # Back on the default config the table is visible again.
    assert "secret" in proxy_client.get_all_tables("waggle_sales")


def test_unknown_method_is_answered_in_javas_words_and_the_connection_survives(proxy):
    extended = thriftpy2.load_fp(
        __import__("io").StringIO("service Probe { string no_such_call(1: string x), list<string> get_all_databases() }"),
        module_name="probe_thrift",
    )
    client = thriftpy2.rpc.make_client(extended.Probe, "127.0.0.1", proxy.port, timeout=30000)
    try:
        with pytest.raises(TApplicationException) as err:
            client.no_such_call("x")
        assert str(err.value) == "Invalid method name: 'no_such_call'"
        assert "default" in client.get_all_databases()
    finally:
        client.close()


def test_unmapped_database_is_a_declared_exception(proxy_config, proxy_client, federated_dbs):
    with proxy_config(lambda base: prefixed_config(base.primary.uris[0], base.federated[0].uris[0], mapped_databases=("sales",))):
        with pytest.raises(hive.NoSuchObjectException) as err:
            proxy_client.get_database("waggle_hr")
        assert "waggle_hr" in str(err.value) and "mapped-databases" in str(err.value)
        # The connection is still usable after the error.
        assert proxy_client.get_database("waggle_sales").name == "waggle_sales"


def test_fb303_calls_are_answered_by_the_proxy(proxy_client):
    assert proxy_client.getName() == "hmsproxy"
    assert proxy_client.getStatus() == idl.fb303.fb_status.ALIVE
    assert proxy_client.aliveSince() > 0
    text = proxy_client.hmsproxy_describe()
    assert "primary" in text and "waggle" in text


class HungMetastore:
    """A TCP server that accepts connections and never answers: a backend stuck in GC or I/O."""

    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.conns = []
        self._t = threading.Thread(target=self._accept, daemon=True)
        self._t.start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)

    def close(self):
        self.sock.close()
        for c in self.conns:
            c.close()


def test_a_hung_backend_does_not_block_other_backends(proxy, proxy_config, proxy_client, metastores, federated_dbs):
    hung = HungMetastore()
    try:

        def with_hung(base):
            cfg = prefixed_config(base.primary.uris[0], base.federated[0].uris[0])
            stuck = MetastoreConfig("stuck", (f"thrift://127.0.0.1:{hung.port}",), database_prefix="stuck_")
            return leave_out_after(cfg, stuck)  # stuck: left out after 1 s; the live ones: 60 s

        with proxy_config(with_hung):
            started = time.monotonic()
            names = proxy_client.get_all_databases()
            elapsed = time.monotonic() - started
            # Answered from the two live metastores once the stuck one's deadline (1 s) passed.
            assert "default" in names and "waggle_sales" in names
            assert not any(n.startswith("stuck_") for n in names)
            # The stuck backend never answers: waiting for it, the call would last the live ones'
            # deadline (60 s, the client's timeout too). Half of that tells the two apart with room
            # for a busy machine either way.
            assert elapsed < ANSWER_DEADLINE_MS / 1000 / 2, elapsed
            # Calls routed to a live backend don't wait on the stuck one at all.
            assert proxy_client.get_database("waggle_sales").name == "waggle_sales"
    finally:
        hung.close()


def test_backend_stopped_mid_session_fails_alone_and_recovers(proxy_client, metastores, federated_dbs):
    assert proxy_client.get_database("waggle_sales").name == "waggle_sales"
    metastores[1].stop()
    try:
        names = proxy_client.get_all_databases()
        assert "default" in names and "waggle_sales" not in names
        assert proxy_client.get_database("default").name == "default"
        with pytest.raises(hive.MetaException) as err:
            proxy_client.get_database("waggle_sales")
        assert "metastore 'waggle'" in err.value.message and "unavailable" in err.value.message
    finally:
        metastores[1].start()
    assert proxy_client.get_database("waggle_sales").name == "waggle_sales"
    assert "waggle_sales" in proxy_client.get_all_databases()


def test_manual_mode_sees_databases_created_on_a_backend_without_restart(proxy_config, proxy_client, metastores, tmp_path):
    from tests.support.federation import manual_config

    with proxy_config(lambda base: manual_config(base)):
        assert "late_arrival" not in proxy_client.get_all_databases()
        direct = metastores[1].client()
        try:
            direct.create_database(
                hive.Database(
                    name="late_arrival", description="made on the backend", locationUri=(tmp_path / "late.db").as_uri(), parameters={}
                )
            )
            assert "late_arrival" in proxy_client.get_all_databases()
            deadline = time.monotonic() + 30
            while True:  # the directory of each backend's databases is cached for a few seconds
                try:
                    db = proxy_client.get_database("late_arrival")
                    break
                except hive.NoSuchObjectException:
                    assert time.monotonic() < deadline, "database created on the backend never became routable"
                    time.sleep(0.5)
            assert db.description == "made on the backend"
            direct.drop_database("late_arrival", True, True)
            # Both metastores have `default`: the clash is reported with both named, not fatal.
            assert proxy_client.get_database("default").name == "default"
            assert "clash: database 'default' is on primary, waggle" in proxy_client.hmsproxy_describe()
        finally:
            direct.close()


def test_framed_transport(metastores):
    from thriftpy2.protocol import TBinaryProtocolFactory
    from thriftpy2.transport import TFramedTransportFactory

    from hmsproxy.pipeline.handler import Handler
    from tests.support.served import served

    with served(Handler(prefixed_config(metastores[0].uri, metastores[1].uri)), transport="framed") as server:
        client = thriftpy2.rpc.make_client(
            idl.HmsProxy,
            "127.0.0.1",
            server.port,
            timeout=30000,
            trans_factory=TFramedTransportFactory(),
            proto_factory=TBinaryProtocolFactory(),
        )
        try:
            assert "default" in client.get_all_databases()
        finally:
            client.close()

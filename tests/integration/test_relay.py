"""The relay (hmsproxy/protocol/relay.py): answers forwarded undecoded where nothing would change them,
the full path everywhere else, chunked streaming, and a backend failing mid-answer."""

from __future__ import annotations

import socket
import threading
import uuid
from dataclasses import replace

import pytest
import thriftpy2.rpc
from thriftpy2.protocol import TBinaryProtocol, TCyBinaryProtocol
from thriftpy2.thrift import TMessageType
from thriftpy2.transport import TCyBufferedTransport, TMemoryBuffer, TSocket, TTransportException

from hmsproxy.config.model import Config, DatabaseResolution, MetastoreConfig, ServerConfig
from hmsproxy.dev.metastore import LocalMetastore
from hmsproxy.dev.ports import free_port
from hmsproxy.downstream.reply_sink import ReplySink
from hmsproxy.protocol import idl
from hmsproxy.testing import partition, table
from tests.support.federation import primary_only_config, temp_store
from tests.support.hive_jars import require_hive
from tests.support.served import served

hive = idl.hive


def client_for(server):
    return thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", server.port, timeout=60_000)


def relayed(server, name: str = "primary") -> int:
    """Answers relayed so far (counted before the client has the end of the answer: ReplySink.finish)."""
    return server.handler.backends.state(name).relayed


@pytest.fixture
def hourly(metastores):
    """default.rl_<id> on the session's primary, partitioned by (ds, hr), with 3 x 2 partitions."""
    name = f"rl_{uuid.uuid4().hex[:8]}"
    direct = metastores[0].client()
    direct.create_table(table("default", name, partition_keys=(("ds", "string"), ("hr", "string"))))
    direct.add_partitions([partition("default", name, [d, h]) for d in "123" for h in "12"])
    yield name
    direct.drop_table("default", name, True)
    direct.close()


def test_what_is_relayed_on_a_hive_2_3_primary(proxy, hourly, metastores):
    client = client_for(proxy)
    try:
        client.get_table("default", hourly)  # Hive 4 lacks get_table: relayed once the backend has answered it
        before = relayed(proxy)
        names = client.get_partition_names("default", hourly, -1)
        assert names == metastores[0].client().get_partition_names("default", hourly, -1) and len(names) == 6
        assert relayed(proxy) == before + 1  # a list of strings: nothing to change
        # a Table or Partition from a Hive 2.3 metastore lacks the catalog Hive 3 clients expect:
        # the relay appends it to each as it copies
        assert client.get_table("default", hourly).catNameHive3 == "hive"
        assert [p.catName for p in client.get_partitions("default", hourly, -1)] == ["hive"] * 6
        assert relayed(proxy) == before + 3
        # GetTableResult nests its Table: the relay fills that one too
        assert client.get_table_req(hive.GetTableRequest(dbName="default", tblName=hourly)).table.catNameHive3 == "hive"
        assert relayed(proxy) == before + 4
        # a prefixed database's names are rewritten; a missing table's declared exception passes either way
        client.get_all_tables("waggle_sales")
        with pytest.raises(hive.NoSuchObjectException):
            client.get_partition_names_ps("default", f"{hourly}_none", ["1"], -1)
        assert relayed(proxy) == before + 5
    finally:
        client.close()


def test_answers_relayed_with_the_catalog_equal_the_full_paths(proxy, proxy_config, hourly):
    def answers():
        client = client_for(proxy)
        try:
            with pytest.raises(hive.NoSuchObjectException):
                client.get_partitions("default", f"{hourly}_none", -1)
            client.get_table("default", hourly)  # relayed once the backend has answered it (Hive 4 lacks it)
            return (
                client.get_table("default", hourly),
                client.get_partitions("default", hourly, -1),
                client.get_partitions_by_filter("default", hourly, "ds = '2'", -1),
                client.get_partitions_by_names("default", hourly, ["ds=1/hr=2", "ds=3/hr=1"]),
                client.get_table_objects_by_name("default", [hourly]),
            )
        finally:
            client.close()

    before = relayed(proxy)
    fast = answers()
    assert relayed(proxy) >= before + 6
    with proxy_config(lambda base: replace(base, server=replace(base.server, relay=False))):
        between = relayed(proxy)
        full = answers()
        assert relayed(proxy) == between
    assert fast == full
    assert len(fast[1]) == 6 and len(fast[2]) == 2 and len(fast[3]) == 2


def hive3_calls(client, hourly: str) -> tuple:
    """What a Hive 3.1 HiveMetaStoreClient sends for everyday reads: "@hive#db" names, or the
    catalog in the request struct, and the request/result calls (GetTableResult, GetTablesResult)."""
    db = "@hive#default"
    return (
        client.get_partitions(db, hourly, -1),
        client.get_partitions_by_filter(db, hourly, "ds = '2'", -1),
        client.get_partitions_by_names(db, hourly, ["ds=1/hr=2", "ds=3/hr=1"]),
        client.get_partitions_ps(db, hourly, ["1"], -1),
        client.get_partition(db, hourly, ["2", "1"]),
        client.get_partition_names(db, hourly, -1),
        client.get_table_req(hive.GetTableRequest(dbName="default", tblName=hourly, catName="hive")),
        client.get_table_objects_by_name_req(hive.GetTablesRequest(dbName="default", tblNames=[hourly], catName="hive")),
        client.get_partitions_pspec(db, hourly, -1),
        client.get_database(db),
    )


def test_a_hive_3_clients_reads_on_a_hive_2_3_primary_are_relayed_with_the_full_paths_catalog(proxy, proxy_config, hourly):
    """These used to take the full path on Hive 2.3 ("@hive#db" names, nested Tables and
    Partitions); relayed now, they answer exactly what the full path answers."""
    client = client_for(proxy)
    try:
        before = relayed(proxy)
        fast = hive3_calls(client, hourly)
        # all but get_table_objects_by_name_req: the catalog feature adds virtual tables to table lists
        assert relayed(proxy) == before + len(fast) - 1
        # repeated at once: a remembered decision would send the client's "@hive#default" bytes as they are
        repeats = [client.get_partitions("@hive#default", hourly, -1) for _ in range(3)]
        assert repeats == [fast[0]] * 3
        with proxy_config(lambda base: replace(base, server=replace(base.server, relay=False))):
            full = hive3_calls(client_for(proxy), hourly)
        again = hive3_calls(client, hourly)  # shortcuts may answer the repeats: they send "db" too
    finally:
        client.close()
    assert fast == full == again
    partitions, by_filter, by_names, ps, one, names, table_result, tables, specs, database = fast
    assert len(partitions) == 6 and len(by_filter) == 2 and len(by_names) == 2 and len(ps) == 2 and len(names) == 6
    assert {p.catName for p in (*partitions, *by_filter, *by_names, *ps, one)} == {"hive"} and one.values == ["2", "1"]
    assert table_result.table.catNameHive3 == "hive" and [t.catNameHive3 for t in tables.tables] == ["hive"]
    assert database.catalogName == "hive" and database.name == "default"
    listed = [p for spec in specs for p in (spec.partitionList.partitions if spec.partitionList else [])]
    assert {p.catName for p in listed} <= {"hive"}


def test_relay_off_takes_the_full_path(proxy, proxy_config, hourly):
    with proxy_config(lambda base: replace(base, server=replace(base.server, relay=False))):
        client = client_for(proxy)
        try:
            before = relayed(proxy)
            assert len(client.get_partition_names("default", hourly, -1)) == 6
            assert relayed(proxy) == before
        finally:
            client.close()


#: Partitions of the long answer: long names rather than many, as the metastore adds partitions
#: slowly (about 50 a second on Derby, fewer on a loaded machine) and the answer's bytes are what count.
LONG_ANSWER_PARTITIONS = 700
#: A value's length: "ds=" and it fit in a file name (255 bytes) and in Hive 2.3's PART_KEY_VAL (256).
LONG_VALUE = 240


def test_a_long_answer_is_streamed_in_chunks(proxy, metastores):
    name = f"rl_{uuid.uuid4().hex[:8]}"
    direct = metastores[0].client()
    direct.create_table(table("default", name, partition_keys=(("ds", "string"),)))
    try:
        values = [f"value-{i:06d}-".ljust(LONG_VALUE, "x") for i in range(LONG_ANSWER_PARTITIONS)]
        for start in range(0, len(values), 100):
            direct.add_partitions([partition("default", name, [value]) for value in values[start : start + 100]])
        writes = []
        original = ReplySink.write
        ReplySink.write = lambda self, data: (writes.append(len(data)), original(self, data))[1]
        client = client_for(proxy)
        try:
            names = client.get_partition_names("default", name, -1)
        finally:
            ReplySink.write = original
            client.close()
        assert names == [f"ds={value}" for value in values]  # every one, in order
        total = sum(writes)
        # chunks of at most 64 KiB, as many as that takes: never the whole answer at once
        assert total > 150_000 and len(writes) >= total // 65_536 and max(writes) <= 65_536, (total, len(writes), max(writes))
    finally:
        direct.drop_table("default", name, True)
        direct.close()


@pytest.fixture(scope="module")
def hive31(tmp_path_factory):
    require_hive("3.1")
    ms = LocalMetastore(free_port(), tmp_path_factory.mktemp("relay-3.1"), hive_version="3.1", name="relay-3.1")
    try:
        ms.start()
        yield ms
    finally:
        ms.stop()


def test_a_hive_3_primary_relays_tables_and_partitions(hive31):
    config = primary_only_config(hive31.uri, "3.1")
    with served(config) as fast, served(replace(config, server=replace(config.server, relay=False))) as full:
        clients = [client_for(fast), client_for(full)]
        name = f"rl_{uuid.uuid4().hex[:8]}"
        try:
            clients[1].create_table(table("default", name, partition_keys=(("ds", "string"),)))
            clients[1].add_partitions([partition("default", name, [str(d)]) for d in range(5)])
            clients[0].get_table("default", name)  # get_table is gone in Hive 4.0.1: the full path learns this one has it
            answers = [(c.get_table("default", name), c.get_partitions("default", name, -1)) for c in clients]
            assert answers[0] == answers[1] and answers[0][0].catNameHive3 == "hive" and len(answers[0][1]) == 5
            assert relayed(fast) == 2 and relayed(full) == 0
        finally:
            clients[1].drop_table("default", name, True)
            for c in clients:
                c.close()


class HalfAnswering:
    """A Thrift server that answers getVersion and set_ugi, and breaks off in the middle of any other answer."""

    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._talk, args=(conn,), daemon=True).start()

    def _talk(self, conn):
        proto = TCyBinaryProtocol(TCyBufferedTransport(TSocket(sock=conn)), strict_read=False)
        try:
            while True:
                name, _, seqid = proto.read_message_begin()
                args = getattr(idl.HmsProxy, name + "_args")()
                args.read(proto)
                proto.read_message_end()
                result = getattr(idl.HmsProxy, name + "_result")()
                if name == "getVersion":
                    result.success = "2.3.10"
                elif name != "set_ugi":
                    result.success = [f"ds={i}" for i in range(20_000)]
                if name in ("getVersion", "set_ugi"):
                    proto.write_message_begin(name, TMessageType.REPLY, seqid)
                    result.write(proto)
                    proto.write_message_end()
                    proto.trans.flush()
                    continue
                buf = TMemoryBuffer()
                out = TBinaryProtocol(buf)
                out.write_message_begin(name, TMessageType.REPLY, seqid)
                result.write(out)
                out.write_message_end()
                data = buf.getvalue()
                conn.sendall(data[: len(data) // 2])  # half of the answer, then gone
                conn.shutdown(socket.SHUT_RDWR)
                conn.close()
                return
        except (TTransportException, OSError, EOFError):
            conn.close()

    def close(self):
        self.sock.close()


def test_a_backend_failing_mid_answer_closes_only_that_client(metastores):
    broken = HalfAnswering()
    primary = MetastoreConfig("primary", (f"thrift://127.0.0.1:{broken.port}",), primary=True, hive_version="2.3")
    config = Config(ServerConfig(port=0, backend_timeout_s=20), DatabaseResolution.PREFIXED, primary, store=temp_store(primary.uris))
    with served(config) as server:
        victim, other = client_for(server), client_for(server)
        try:
            with pytest.raises((TTransportException, OSError, EOFError)):
                victim.get_partition_names("default", "t", -1)
            assert other.getVersion()  # the proxy itself goes on serving
        finally:
            victim.close()
            other.close()
            broken.close()

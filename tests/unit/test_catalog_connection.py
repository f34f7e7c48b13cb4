"""CatalogConnection: a catalog client's answers as the `<method>_result` structs a metastore sends."""

from __future__ import annotations

import pytest

from hmsproxy.catalogs.client import CatalogNotFound, CatalogRefused, CatalogUnavailable
from hmsproxy.catalogs.connection import _ANSWERS, _EMPTY_ANSWERS, SERVED_VERSION, CatalogConnection
from hmsproxy.config.model import AccessControlType, Config, DatabaseResolution, MetastoreConfig, ServerConfig
from hmsproxy.features.remotes.factories import catalog_metastore
from hmsproxy.protocol import idl
from hmsproxy.upstream.backends import Backends
from hmsproxy.upstream.wire import BackendUnavailable

hive, P = idl.hive, idl.HmsProxy


def _table(db, name, keys=()):
    cols = [hive.FieldSchema(name="id", type="bigint"), hive.FieldSchema(name="name", type="string")]
    part_keys = [hive.FieldSchema(name=k, type="string") for k in keys]
    return hive.Table(dbName=db, tableName=name, tableType="EXTERNAL_TABLE", sd=hive.StorageDescriptor(cols=cols), partitionKeys=part_keys)


class DictCatalog:
    description = "dict catalog"

    def __init__(self, partitions=True):
        self.tables_ = {("sales", "orders"): _table("sales", "orders"), ("sales", "days"): _table("sales", "days", ["ds"])}
        self.parts = {("sales", "days"): [hive.Partition(values=[d], dbName="sales", tableName="days") for d in ("d1", "d2", "d3")]}
        self.opened = self.closed = 0
        self.fail: Exception | None = None
        if not partitions:
            self.partitions = None

    def open(self):
        self.opened += 1

    def close(self):
        self.closed += 1

    def _check(self):
        if self.fail is not None:
            raise self.fail

    def databases(self):
        self._check()
        return sorted({db for db, _ in self.tables_})

    def database(self, name):
        self._check()
        if name not in self.databases():
            raise CatalogNotFound(f"namespace {name} does not exist")
        return hive.Database(name=name, locationUri=f"file:/w/{name}")

    def tables(self, db):
        self.database(db)
        return sorted(t for d, t in self.tables_ if d == db)

    def table(self, db, name):
        self._check()
        try:
            return self.tables_[(db, name)]
        except KeyError:
            raise CatalogNotFound(f"table {db}.{name} does not exist") from None

    def partitions(self, db, table, max_parts=-1, filter=None):
        self.table(db, table)
        found = [p for p in self.parts.get((db, table), []) if filter is None or filter == f"ds='{p.values[0]}'"]
        return found if max_parts < 0 else found[:max_parts]


def _conn(client):
    return CatalogConnection("remote:dict", ("dict://x",), lambda c, t: client, connect_timeout_s=1, call_timeout_s=1)


def test_reads_answer_like_a_metastore():
    client = DictCatalog()
    conn = _conn(client)
    assert conn.call("get_all_databases", P.get_all_databases_args()).success == ["sales"]
    assert conn.call("get_tables", P.get_tables_args(db_name="sales", pattern="o*|x")).success == ["orders"]
    assert conn.call("get_table", P.get_table_args(dbname="sales", tbl_name="orders")).success.tableName == "orders"
    req = hive.GetTablesRequest(dbName="sales", tblNames=["orders", "nope", "days"])
    got = conn.call("get_table_objects_by_name_req", P.get_table_objects_by_name_req_args(req=req)).success
    assert [t.tableName for t in got.tables] == ["orders", "days"]
    schema = conn.call("get_schema", P.get_schema_args(db_name="sales", table_name="days")).success
    assert [f.name for f in schema] == ["id", "name", "ds"]
    names = conn.call("get_partition_names", P.get_partition_names_args(db_name="sales", tbl_name="days", max_parts=2)).success
    assert names == ["ds=d1", "ds=d2"]
    by_filter = P.get_partitions_by_filter_args(db_name="sales", tbl_name="days", filter="ds='d3'", max_parts=-1)
    assert [p.values for p in conn.call("get_partitions_by_filter", by_filter).success] == [["d3"]]
    by_name = conn.call("get_partition_by_name", P.get_partition_by_name_args(db_name="sales", tbl_name="days", part_name="ds=d2"))
    assert by_name.success.values == ["d2"]
    assert conn.call("get_primary_keys", P.get_primary_keys_args(request=hive.PrimaryKeysRequest())).success.primaryKeys == []
    assert client.opened == 1


def test_missing_objects_are_the_declared_not_found():
    conn = _conn(DictCatalog())
    r = conn.call("get_table", P.get_table_args(dbname="sales", tbl_name="nope"))
    assert isinstance(r.o2, hive.NoSuchObjectException) and "sales.nope" in r.o2.message
    r = conn.call("get_fields", P.get_fields_args(db_name="sales", table_name="nope"))
    assert isinstance(r.o2, hive.UnknownTableException)
    r = conn.call("get_partition", P.get_partition_args(db_name="sales", tbl_name="days", part_vals=["d9"]))
    assert isinstance(r.o2, hive.NoSuchObjectException)


def test_unpartitioned_catalogs_have_no_partitions():
    conn = _conn(DictCatalog(partitions=False))
    partitions = conn.call("get_partitions", P.get_partitions_args(db_name="sales", tbl_name="days", max_parts=-1))
    assert partitions.success == []


def test_writes_and_unserved_reads_are_refused_by_name():
    conn = _conn(DictCatalog())
    r = conn.call("drop_table", P.drop_table_args(dbname="sales", name="orders", deleteData=True))
    assert "read-only" in r.o3.message and "dict catalog" in r.o3.message
    r = conn.call("get_functions", P.get_functions_args(dbName="sales", pattern="*"))
    assert "not served" in r.o1.message


class CommittingDictCatalog(DictCatalog):
    def __init__(self):
        super().__init__()
        self.committed = []

    def commit(self, db, name, parameters, expected_location):
        self.committed.append((db, name, parameters["metadata_location"], expected_location))


def _swap(name="orders", **parameters):
    return hive.Table(dbName="sales", tableName=name, parameters={"metadata_location": "m2", **parameters})


def test_an_alter_table_is_a_commit_only_for_a_client_that_commits():
    r = _conn(DictCatalog()).call("alter_table", P.alter_table_args(dbname="sales", tbl_name="orders", new_tbl=_swap()))
    assert "read-only" in r.o2.message and "alter_table" in r.o2.message
    client = CommittingDictCatalog()
    conn = _conn(client)
    r = conn.call("alter_table", P.alter_table_args(dbname="sales", tbl_name="orders", new_tbl=_swap(previous_metadata_location="m1")))
    assert (r.o1, r.o2) == (None, None)
    # Iceberg's Java HiveCatalog names the version it replaces in the environment context instead.
    context = hive.EnvironmentContext(properties={"expected_parameter_key": "metadata_location", "expected_parameter_value": "m1j"})
    args = P.alter_table_with_environment_context_args(dbname="sales", tbl_name="orders", new_tbl=_swap(), environment_context=context)
    assert conn.call("alter_table_with_environment_context", args).o2 is None
    assert client.committed == [("sales", "orders", "m2", "m1"), ("sales", "orders", "m2", "m1j")]
    r = conn.call("alter_table", P.alter_table_args(dbname="sales", tbl_name="orders", new_tbl=_swap("renamed")))
    assert "can't be renamed" in r.o2.message and len(client.committed) == 2


def test_refusal_is_meta_exception_and_unreachable_is_backend_unavailable():
    client = DictCatalog()
    conn = _conn(client)
    client.fail = CatalogRefused("401 Unauthorized: check property 'credential'")
    r = conn.call("get_table", P.get_table_args(dbname="sales", tbl_name="orders"))
    assert "credential" in r.o1.message
    client.fail = CatalogUnavailable("connection refused")
    with pytest.raises(BackendUnavailable) as e:
        conn.call("get_all_databases", P.get_all_databases_args())
    assert "connection refused" in e.value.reason and not e.value.cut


def test_a_cut_connection_never_carries_another_call():
    client = DictCatalog()
    conn = _conn(client)
    conn.open()
    conn.cut("dict://x", "breaker tripped")
    assert client.closed == 1
    with pytest.raises(BackendUnavailable) as e:
        conn.call("get_all_databases", P.get_all_databases_args())
    assert e.value.cut and e.value.reason == "breaker tripped"


@pytest.mark.parametrize("method", sorted({*_ANSWERS, *_EMPTY_ANSWERS}))
def test_every_answered_method_is_in_the_idl(method):
    assert hasattr(P, method + "_result") and hasattr(P, method + "_args")


def test_backends_connect_to_a_catalog_through_its_metastore_config():
    client = DictCatalog()
    primary = MetastoreConfig("primary", ("thrift://127.0.0.1:1",), primary=True)
    backends = Backends(Config(ServerConfig(), DatabaseResolution.PREFIXED, primary))
    ms = catalog_metastore("remote:dict:x", "dict://x", lambda connect_s, call_s: client)
    backends.extra[ms.name] = ms
    assert ms.access_control_type is AccessControlType.READ_ONLY and ms.hive_version == SERVED_VERSION
    conn = backends.new_connection(ms)
    assert isinstance(conn, CatalogConnection) and not conn.is_open
    backends.probe(ms.name, 1.0)  # getVersion, as the breaker's probe asks a metastore
    assert backends.call(conn, "get_all_tables", P.get_all_tables_args(db_name="sales")).success == ["days", "orders"]
    assert backends.state(ms.name).up is True
    client.fail = CatalogUnavailable("503 Service Unavailable")
    with pytest.raises(BackendUnavailable):
        backends.call(conn, "get_all_tables", P.get_all_tables_args(db_name="sales"))
    assert backends.state(ms.name).up is False and "503" in backends.state(ms.name).last_error
    backends.close()


def test_a_refused_handshake_is_refused_calls_not_a_catalog_down():
    client = DictCatalog()

    def refuse():
        raise CatalogRefused("401 Unauthorized from the token endpoint: check properties 'credential' and 'scope'")

    client.open = refuse
    conn = _conn(client)
    conn.open()  # it answered: the breaker and health must not count it down
    assert conn.call("getVersion", P.getVersion_args()).success == SERVED_VERSION
    r = conn.call("get_all_databases", P.get_all_databases_args())
    assert "'credential'" in r.o1.message

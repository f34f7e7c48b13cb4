"""hmsproxy.testing's FakeMetastore behaves like a Hive 2.3 metastore on the basics.

The expected answers and messages were taken from a real Hive 2.3 metastore
(pyspark's jars) given the same calls.
"""

import pytest
from thriftpy2.thrift import TApplicationException

from hmsproxy.protocol import idl
from hmsproxy.testing import FakeConnection, FakeMetastore, args, database, fake_connect, partition, table, unwrap
from hmsproxy.upstream.wire import BackendUnavailable

hive = idl.hive


@pytest.fixture
def ms():
    m = FakeMetastore("hms")
    m.create_database(database("Sales", description="d"))
    m.create_table(table("sales", "Orders", partition_keys=(("ds", "string"),), parameters={"comment": "hello"}))
    m.create_table(table("sales", "ext", table_type="EXTERNAL_TABLE"))
    return m


@pytest.fixture
def conn(ms):
    return FakeConnection(ms)


def call(conn, method, **fields):
    return unwrap(conn.call(method, args(method, **fields)))


DECLARED = [
    ("get_database", dict(name="nope"), hive.NoSuchObjectException, "nope"),
    ("create_database", dict(database=database("SALES")), hive.AlreadyExistsException, "Database sales already exists"),
    ("create_database", dict(database=database("bad-name")), hive.InvalidObjectException, "bad-name is not a valid database name"),
    (
        "drop_database",
        dict(name="sales", deleteData=False, cascade=False),
        hive.InvalidOperationException,
        "Database sales is not empty. One or more tables exist.",
    ),
    ("drop_database", dict(name="default", deleteData=False, cascade=True), hive.MetaException, "Can not drop default database"),
    ("get_table", dict(dbname="sales", tbl_name="missing"), hive.NoSuchObjectException, "sales.missing table not found"),
    ("get_table_req", dict(req=hive.GetTableRequest(dbName="nodb", tblName="t")), hive.NoSuchObjectException, "nodb.t table not found"),
    ("create_table", dict(tbl=table("sales", "orders")), hive.AlreadyExistsException, "Table orders already exists"),
    ("create_table", dict(tbl=table("nodb", "x")), hive.InvalidObjectException, "nodb"),
    ("create_table", dict(tbl=table("sales", "bad-name")), hive.InvalidObjectException, "bad-name is not a valid object name"),
    ("get_table_objects_by_name", dict(dbname="nodb", tbl_names=["orders"]), hive.UnknownDBException, "Could not find database nodb"),
    ("get_table_objects_by_name", dict(dbname="", tbl_names=["orders"]), hive.UnknownDBException, "DB name is null or empty"),
    ("drop_table", dict(dbname="sales", name="missing", deleteData=False), hive.NoSuchObjectException, "sales.missing table not found"),
    (
        "alter_table",
        dict(dbname="sales", tbl_name="missing", new_tbl=table("sales", "missing")),
        hive.InvalidOperationException,
        "sales.missing table not found",
    ),
    (
        "alter_table",
        dict(dbname="sales", tbl_name="orders", new_tbl=table("sales", "ext")),
        hive.InvalidOperationException,
        "new table sales.ext already exists",
    ),
    (
        "get_partitions",
        dict(db_name="sales", tbl_name="missing", max_parts=-1),
        hive.NoSuchObjectException,
        "sales.missing table not found",
    ),
    (
        "add_partition",
        dict(new_part=partition("sales", "missing", ["x"])),
        hive.InvalidObjectException,
        "Unable to add partition because table or database do not exist",
    ),
    (
        "add_partition",
        dict(new_part=partition("sales", "orders", ["x", "y"])),
        hive.MetaException,
        "Invalid partition key & values; keys [ds, ], values [x, y, ]",
    ),
    (
        "alter_partition",
        dict(db_name="sales", tbl_name="orders", new_part=partition("sales", "orders", ["zzz"])),
        hive.InvalidOperationException,
        "alter is not possible",
    ),
    (
        "alter_partition",
        dict(db_name="sales", tbl_name="missing", new_part=partition("sales", "missing", ["zzz"])),
        hive.InvalidOperationException,
        "Unable to alter partition because table or database does not exist.",
    ),
    (
        "drop_partition",
        dict(db_name="sales", tbl_name="orders", part_vals=["zzz"], deleteData=False),
        hive.NoSuchObjectException,
        "partition values=[zzz]",
    ),
]


@pytest.mark.parametrize(("method", "fields", "exc", "message"), DECLARED, ids=[f"{d[0]}-{d[3][:20]}" for d in DECLARED])
def test_declared_exceptions_arrive_in_the_result_struct(conn, method, fields, exc, message):
    result = conn.call(method, args(method, **fields))
    assert type(result).__name__ == f"{method}_result"
    with pytest.raises(exc) as err:
        unwrap(result)
    assert err.value.message == message


def test_an_exception_the_method_does_not_declare_is_an_internal_error():
    class Broken(FakeMetastore):
        def get_all_databases(self):
            raise hive.NoSuchObjectException(message="not declared by get_all_databases")

    with pytest.raises(TApplicationException) as err:
        FakeConnection(Broken()).call("get_all_databases", args("get_all_databases"))
    assert (err.value.type, err.value.message) == (TApplicationException.INTERNAL_ERROR, "Internal error processing get_all_databases")


def test_names_are_stored_lower_case_and_found_in_any_case(conn):
    assert call(conn, "get_database", name="SALES").name == "sales"
    found = call(conn, "get_table", dbname="SALES", tbl_name="ORDERS")
    assert (found.dbName, found.tableName) == ("sales", "orders")


@pytest.mark.parametrize(
    ("method", "fields", "expected"),
    [
        ("get_all_databases", {}, ["default", "sales"]),
        ("get_databases", dict(pattern="s*|def*"), ["default", "sales"]),
        ("get_databases", dict(pattern="SAL*"), ["sales"]),
        ("get_databases", dict(pattern="sal"), []),
        ("get_all_tables", dict(db_name="sales"), ["ext", "orders"]),
        ("get_all_tables", dict(db_name="nodb"), []),
        ("get_tables", dict(db_name="sales", pattern="o*"), ["orders"]),
        ("get_tables", dict(db_name="sales", pattern="e*|O*"), ["ext", "orders"]),
        ("get_tables_by_type", dict(db_name="sales", pattern="*", tableType="EXTERNAL_TABLE"), ["ext"]),
        ("get_table_names_by_filter", dict(dbname="sales", filter="anything", max_tables=1), ["ext"]),
        ("get_table_names_by_filter", dict(dbname="nodb", filter="", max_tables=-1), []),
    ],
)
def test_listings_and_patterns(conn, method, fields, expected):
    assert call(conn, method, **fields) == expected


def test_table_objects_and_meta(conn):
    tables = call(conn, "get_table_objects_by_name", dbname="sales", tbl_names=["orders", "missing", "EXT"])
    assert [t.tableName for t in tables] == ["orders", "ext"]  # missing ones are left out
    req = hive.GetTablesRequest(dbName="sales", tblNames=["ext"])
    assert [t.tableName for t in call(conn, "get_table_objects_by_name_req", req=req).tables] == ["ext"]
    meta = call(conn, "get_table_meta", db_patterns="sal*", tbl_patterns="o*", tbl_types=None)
    assert meta == [hive.TableMeta(dbName="sales", tableName="orders", tableType="MANAGED_TABLE", comments="hello")]
    assert [m.tableName for m in call(conn, "get_table_meta", db_patterns="*", tbl_patterns="*", tbl_types=["EXTERNAL_TABLE"])] == ["ext"]


def test_partitions_are_named_escaped_and_sorted_and_follow_a_rename(conn):
    added = call(conn, "add_partitions", new_parts=[partition("sales", "orders", ["2024-01-02"]), partition("sales", "orders", ["a b/c"])])
    assert added == 2
    assert call(conn, "add_partitions", new_parts=[]) == 0
    assert call(conn, "add_partition", new_part=partition("sales", "orders", ["2024-01-01"])).values == ["2024-01-01"]
    with pytest.raises(hive.AlreadyExistsException):  # all or nothing: 2024-01-03 is not added either
        call(conn, "add_partitions", new_parts=[partition("sales", "orders", ["2024-01-03"]), partition("sales", "orders", ["2024-01-01"])])
    assert call(conn, "get_partition_names", db_name="sales", tbl_name="orders", max_parts=-1) == [
        "ds=2024-01-01",
        "ds=2024-01-02",
        "ds=a b%2Fc",
    ]
    assert call(conn, "get_partition_names", db_name="sales", tbl_name="orders", max_parts=1) == ["ds=2024-01-01"]
    assert [p.values for p in call(conn, "get_partitions", db_name="sales", tbl_name="orders", max_parts=2)] == [
        ["2024-01-01"],
        ["2024-01-02"],
    ]

    call(
        conn,
        "alter_partition",
        db_name="sales",
        tbl_name="orders",
        new_part=partition("sales", "orders", ["2024-01-01"], parameters={"k": "v"}),
    )
    assert call(conn, "get_partitions", db_name="sales", tbl_name="orders", max_parts=1)[0].parameters == {"k": "v"}
    assert call(conn, "drop_partition", db_name="sales", tbl_name="orders", part_vals=["2024-01-02"], deleteData=False) is True

    renamed = table("sales", "orders2", partition_keys=(("ds", "string"),))
    call(conn, "alter_table_with_environment_context", dbname="sales", tbl_name="orders", new_tbl=renamed, environment_context=None)
    assert call(conn, "get_partition_names", db_name="sales", tbl_name="orders2", max_parts=-1) == ["ds=2024-01-01", "ds=a b%2Fc"]
    with pytest.raises(hive.NoSuchObjectException):
        call(conn, "get_table", dbname="sales", tbl_name="orders")


def test_get_partition_names_of_a_missing_table_fails_as_hive_2_3_does(conn):
    with pytest.raises(TApplicationException) as err:
        conn.call("get_partition_names", args("get_partition_names", db_name="sales", tbl_name="missing", max_parts=-1))
    assert err.value.type == TApplicationException.INTERNAL_ERROR


def test_drop_database_cascade_and_drop_table(conn):
    call(conn, "drop_table_with_environment_context", dbname="sales", name="ext", deleteData=True, environment_context=None)
    assert call(conn, "get_all_tables", db_name="sales") == ["orders"]
    call(conn, "drop_database", name="sales", deleteData=True, cascade=True)
    assert call(conn, "get_all_databases") == ["default"]
    assert call(conn, "get_all_tables", db_name="sales") == []


def test_answers_are_copies_not_the_stored_objects(ms, conn):
    got = call(conn, "get_table", dbname="sales", tbl_name="orders")
    got.parameters["comment"] = "changed by a client"
    assert ms.get_table("sales", "orders").parameters["comment"] == "hello"


def test_calls_are_recorded_with_the_connections_set_ugi_user(ms, conn):
    assert call(conn, "set_ugi", user_name="alice", group_names=["g1"]) == ["g1", "alice"]  # as Hive 2.3 answers
    call(conn, "get_all_databases")
    other = FakeConnection(ms)
    call(other, "get_all_databases")
    assert [(c.method, c.user) for c in ms.calls] == [("set_ugi", None), ("get_all_databases", "alice"), ("get_all_databases", None)]
    conn.close()  # a new connection is a new session on the server
    call(conn, "getVersion")
    assert ms.calls[-1].user is None
    assert ms.calls_to("set_ugi")[0].args == args("set_ugi", user_name="alice", group_names=["g1"])


def test_missing_and_unsupported_methods_are_invalid_method_names(ms):
    hive4 = FakeMetastore("hive4", missing={"get_table"})
    conn = FakeConnection(hive4)
    for fake_conn, method, fields in [
        (conn, "get_table", dict(dbname="default", tbl_name="t")),
        (FakeConnection(ms), "get_functions", dict(dbName="sales", pattern="*")),
    ]:
        with pytest.raises(TApplicationException) as err:
            fake_conn.call(method, args(method, **fields))
        assert (err.value.type, err.value.message) == (TApplicationException.UNKNOWN_METHOD, f"Invalid method name: '{method}'")
    assert hive4.methods_called == ["get_table"]  # received, so recorded
    assert conn.is_open  # an application error leaves the connection usable
    with pytest.raises(hive.NoSuchObjectException):
        call(conn, "get_table_req", req=hive.GetTableRequest(dbName="default", tblName="t"))


def test_down_and_up(ms, conn):
    call(conn, "getVersion")
    ms.go_down("connection refused")
    with pytest.raises(BackendUnavailable) as err:
        call(conn, "get_all_databases")
    assert (err.value.metastore, err.value.reason) == ("hms", "connection refused")
    assert not conn.is_open  # as a broken socket: the connection is closed
    with pytest.raises(BackendUnavailable):
        conn.open()
    assert ms.methods_called == ["getVersion"]  # nothing reached a metastore that is down
    ms.come_up()
    assert call(conn, "get_all_databases") == ["default", "sales"]


def test_an_unencodable_struct_fails_as_on_the_wire(conn):
    with pytest.raises(BackendUnavailable, match="dbname"):
        conn.call("get_table", args("get_table", dbname=5, tbl_name="orders"))
    assert not conn.is_open


def test_fake_connect_finds_metastores_by_name_or_uri_and_records_requests(ms):
    remote = FakeMetastore("remote")
    connect = fake_connect({"hms": ms, "thrift://remote:9083": remote})
    first = connect("hms", ("thrift://a:1",), connect_timeout_s=1.0, call_timeout_s=2.0)
    assert (first.fake, first.metastore) == (ms, "hms")
    by_uri = connect("remote:thrift://remote:9083", ("thrift://remote:9083",), connect_timeout_s=1.0, call_timeout_s=2.0)
    assert by_uri.fake is remote and by_uri.metastore == "remote:thrift://remote:9083"
    unknown = connect("nowhere", ("thrift://n:1",), connect_timeout_s=1.0, call_timeout_s=2.0)
    with pytest.raises(BackendUnavailable, match="no FakeMetastore named 'nowhere'"):
        unknown.open()
    assert [(r.metastore, r.connect_timeout_s, r.call_timeout_s) for r in connect.requests][0] == ("hms", 1.0, 2.0)
    assert len(connect.requests) == 3


def test_args_refuses_unknown_methods_and_fields():
    with pytest.raises(ValueError, match="no method"):
        args("get_tabel")
    with pytest.raises(TypeError, match="tbl_name"):
        args("get_table", dbname="sales", table="orders")

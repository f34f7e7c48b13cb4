"""Indexes through the proxy without Spark: the statements from the Python client and `hmsproxy
sql`, the Thrift index calls answered from the proxy's store (a Hive 2.3 metastore never sees
them; a Hive 3.1 one, which has none, serves indexes too), the index table, refusals, cascades
for any Thrift client, and the real Hive 2.3 CLI.
"""

from __future__ import annotations

import re

import pytest
import thriftpy2.rpc
from thriftpy2.thrift import TException

from hmsproxy.clients.proxy import HmsProxyClient, HmsProxyError
from hmsproxy.ddl import DdlSyntaxError
from hmsproxy.features.indexes.compact import COMPACT, INDEX_OF
from hmsproxy.protocol import idl
from hmsproxy.testing import partition, table
from tests.integration.test_relay import hive31  # noqa: F401 - a module-scoped Hive 3.1 metastore
from tests.integration.test_remotes_ddl import hmsproxy_sql
from tests.support.federation import primary_only_config
from tests.support.served import served

hive = idl.hive
COLUMNS = (("user_id", "bigint"), ("action", "string"))


@pytest.fixture
def events(proxy_client, tag):
    """default.ev_<tag>, partitioned by ds; dropped (with whatever indexes are left) afterwards."""
    name = f"ev_{tag}"
    proxy_client.create_table(table("default", name, columns=COLUMNS, partition_keys=(("ds", "string"),)))
    yield name
    proxy_client.drop_table("default", name, True)  # first: its indexes and their index tables go with it
    for t in proxy_client.get_all_tables("default"):
        if tag in t:
            proxy_client.drop_table("default", t, True)


def index_table_name(base: str, index: str) -> str:
    return f"default__{base}_{index}__"


def test_create_show_alter_and_drop_from_the_python_client_and_hmsproxy_sql(proxy, proxy_client, metastores, run, events):
    ev = events
    answer = run(
        f"CREATE INDEX user_idx ON TABLE {ev} (user_id) AS 'COMPACT' WITH DEFERRED REBUILD IDXPROPERTIES ('team'='growth') COMMENT 'by user'"
    )
    assert answer == [
        {
            "result": f"index user_idx created on default.{ev} (index table default.{index_table_name(ev, 'user_idx')}); ALTER INDEX ... REBUILD builds it"
        }
    ]

    direct = metastores[0].client()
    try:
        made = direct.get_table("default", index_table_name(ev, "user_idx"))  # a real table on the base table's metastore
        assert [(c.name, c.type) for c in made.sd.cols] == [("user_id", "bigint"), ("_bucketname", "string"), ("_offsets", "array<bigint>")]
        assert [k.name for k in made.partitionKeys] == ["ds"] and made.tableType == "INDEX_TABLE"
        assert made.parameters[INDEX_OF] == f"default.{ev}.user_idx" and made.parameters["comment"] == "by user"
        assert "parquet" in made.sd.inputFormat.lower() and [o.col for o in made.sd.sortCols] == ["user_id"]
        assert direct.get_indexes("default", ev, -1) == []  # the metastore holds no index: the proxy does
    finally:
        direct.close()

    index = proxy_client.get_index_by_name("default", ev, "user_idx")
    assert (index.indexName, index.indexHandlerClass, index.dbName, index.origTableName) == ("user_idx", COMPACT, "default", ev)
    assert index.indexTableName == index_table_name(ev, "user_idx") and index.deferredRebuild is True
    assert [c.name for c in index.sd.cols] == ["user_id"] and index.parameters == {"team": "growth", "comment": "by user"}
    assert proxy_client.get_index_names("default", ev, -1) == ["user_idx"]
    assert [i.indexName for i in proxy_client.get_indexes("default", ev, -1)] == ["user_idx"]

    run(
        f"CREATE INDEX action_idx ON TABLE default.{ev} (action, user_id) AS 'org.apache.hadoop.hive.ql.index.compact.CompactIndexHandler' WITH DEFERRED REBUILD IN TABLE {ev}_by_action PARTITIONED BY () STORED AS ORC"
    )
    by_action = proxy_client.get_table("default", f"{ev}_by_action")
    assert by_action.partitionKeys == [] and "orc" in by_action.sd.inputFormat.lower()
    assert run(f"SHOW INDEX ON {ev}") == [
        {
            "idx_name": "action_idx",
            "tab_name": ev,
            "col_names": "action, user_id",
            "idx_tab_name": f"{ev}_by_action",
            "idx_type": "compact",
            "comment": "",
        },
        {
            "idx_name": "user_idx",
            "tab_name": ev,
            "col_names": "user_id",
            "idx_tab_name": index_table_name(ev, "user_idx"),
            "idx_type": "compact",
            "comment": "by user",
        },
    ]

    run(f"ALTER INDEX user_idx ON {ev} SET IDXPROPERTIES ('team'='search', 'tier'='1')")
    assert proxy_client.get_index_by_name("default", ev, "user_idx").parameters == {"team": "search", "tier": "1", "comment": "by user"}

    out = hmsproxy_sql(proxy.uri, "--user", "alice", "-e", f"SHOW FORMATTED INDEXES ON {ev} FROM default")
    assert out.returncode == 0, out.stderr
    header, rule, *rows = out.stdout.strip().splitlines()
    assert [c.strip() for c in header.split(" | ")][:7] == [
        "idx_name",
        "tab_name",
        "col_names",
        "idx_tab_name",
        "idx_type",
        "comment",
        "deferred_rebuild",
    ]
    assert "team=search, tier=1" in rows[1] and rows[-1] == "(2 rows)"

    assert run(f"DROP INDEX user_idx ON {ev}") == [{"result": f"index user_idx on default.{ev} dropped, with its index table"}]
    assert index_table_name(ev, "user_idx") not in proxy_client.get_all_tables("default")
    assert run(f"DROP INDEX IF EXISTS user_idx ON {ev}") == [{"result": f"no index user_idx on default.{ev}: nothing to drop"}]
    with pytest.raises(hive.NoSuchObjectException, match="no index user_idx"):
        proxy_client.get_index_by_name("default", ev, "user_idx")
    run(f"DROP INDEX action_idx ON {ev}")
    assert run(f"SHOW INDEXES ON {ev}") == [] and f"{ev}_by_action" not in proxy_client.get_all_tables("default")


def test_refusals_say_what_is_wrong(proxy_client, run, events, tag):
    ev = events
    run(f"CREATE INDEX user_idx ON TABLE {ev} (user_id) AS 'COMPACT' WITH DEFERRED REBUILD")
    view = table("default", f"v_{tag}", columns=COLUMNS)
    view.tableType, view.viewOriginalText, view.viewExpandedText = "VIRTUAL_VIEW", f"SELECT * FROM {ev}", f"SELECT * FROM default.{ev}"
    view.sd.location = None
    proxy_client.create_table(view)
    cases = {
        f"CREATE INDEX i ON TABLE v_{tag} (user_id) AS 'COMPACT' WITH DEFERRED REBUILD": f"default.v_{tag} is a view",
        f"CREATE INDEX i ON TABLE {index_table_name(ev, 'user_idx')} (user_id) AS 'COMPACT' WITH DEFERRED REBUILD": "is an index table",
        f"CREATE INDEX i ON TABLE {ev} (nope) AS 'COMPACT' WITH DEFERRED REBUILD": "has no data column nope",
        f"CREATE INDEX i ON TABLE {ev} (ds) AS 'COMPACT' WITH DEFERRED REBUILD": "has no data column ds",
        f"CREATE INDEX user_idx ON TABLE {ev} (action) AS 'COMPACT' WITH DEFERRED REBUILD": "exists already",
        f"CREATE INDEX i ON TABLE {ev} (user_id) AS 'BITMAP' WITH DEFERRED REBUILD": "unknown index handler 'BITMAP'",
        f"CREATE INDEX i ON TABLE {ev} (user_id) AS 'COMPACT' WITH DEFERRED REBUILD PARTITIONED BY (hr)": "PARTITIONED BY (hr): not a partition column",
        f"CREATE INDEX i ON TABLE missing_{tag} (user_id) AS 'COMPACT' WITH DEFERRED REBUILD": f"missing_{tag}",
        f"ALTER INDEX nope ON {ev} REBUILD": "no index nope",  # said before the client starts any Spark
        f"DROP INDEX nope ON {ev}": "no index nope",
    }
    for sql, message in cases.items():
        with pytest.raises(HmsProxyError, match=re.escape(message)):
            run(sql)
    # A build runs on Spark beside the client; the proxy itself never starts one.
    with pytest.raises(hive.MetaException, match="runs on Spark, beside the client"):
        proxy_client.hmsproxy_execute(f"ALTER INDEX user_idx ON {ev} REBUILD", "default")
    assert proxy_client.get_index_names("default", ev, -1) == ["user_idx"]
    assert [t for t in proxy_client.get_all_tables("default") if t.endswith("__") and tag in t] == [index_table_name(ev, "user_idx")]
    # Any client: DROP TABLE of an index table is refused, naming the statement that drops it.
    with pytest.raises(TException, match=f"is the index table of index user_idx on default.{ev}: DROP INDEX user_idx ON default.{ev}"):
        proxy_client.drop_table("default", index_table_name(ev, "user_idx"), True)
    proxy_client.drop_table("default", f"v_{tag}", True)


def test_no_index_in_a_read_only_database_or_on_a_remote_table(proxy_client, run, metastores, federated_dbs, tag, tmp_path):
    from tests.integration.test_remotes import add_source, link_table

    other = metastores[1].client()  # waggle_: only its database `sales` is writable through the proxy
    other.create_table(table("default", f"ro_{tag}", columns=COLUMNS))
    add_source(metastores[1], tmp_path)  # rsrc.items (an `id` column), linked below as a remote table
    proxy_client.create_table(link_table("default", f"items_{tag}", metastores[1].uri))
    try:
        with pytest.raises(HmsProxyError, match="writes to database 'waggle_default' are not allowed"):
            run(f"CREATE INDEX i ON TABLE waggle_default.ro_{tag} (user_id) AS 'COMPACT' WITH DEFERRED REBUILD")
        # IN TABLE in a writable database of the same metastore: the index changes only that one.
        run(
            f"CREATE INDEX i ON TABLE waggle_default.ro_{tag} (user_id) AS 'COMPACT' WITH DEFERRED REBUILD IN TABLE waggle_sales.ro_{tag}_i"
        )
        assert [(r["idx_name"], r["idx_tab_name"]) for r in run(f"SHOW INDEX ON waggle_default.ro_{tag}")] == [
            ("i", f"waggle_sales.ro_{tag}_i")
        ]
        assert f"ro_{tag}_i" in other.get_all_tables("sales")
        run(f"ALTER INDEX i ON waggle_default.ro_{tag} SET IDXPROPERTIES ('team'='ops')")
        run(f"DROP INDEX i ON waggle_default.ro_{tag}")
        assert f"ro_{tag}_i" not in other.get_all_tables("sales")
        with pytest.raises(HmsProxyError, match="writes to database 'hr' are not allowed|writes to database 'waggle_hr' are not allowed"):
            run(
                f"CREATE INDEX i ON TABLE waggle_default.ro_{tag} (user_id) AS 'COMPACT' WITH DEFERRED REBUILD IN TABLE waggle_hr.ro_{tag}_i"
            )
        with pytest.raises(HmsProxyError, match=f"default.items_{tag} is a remote table, read-only here"):
            run(f"CREATE INDEX i ON TABLE items_{tag} (id) AS 'COMPACT' WITH DEFERRED REBUILD")
        assert other.get_all_tables("default").count(f"default__ro_{tag}_i__") == 0
        assert f"default__items_{tag}_i__" not in proxy_client.get_all_tables("default")
    finally:
        other.drop_table("default", f"ro_{tag}", True)
        other.close()
        proxy_client.drop_table("default", f"items_{tag}", False)  # unlinks the remote table


def test_dropping_renaming_and_dropping_the_database_carry_the_indexes_along(proxy_client, metastores, run, tag, tmp_path):
    db = f"idx_{tag}"
    proxy_client.create_database(hive.Database(name=db, locationUri=(tmp_path / db).as_uri(), parameters={}))
    try:
        for name in ("a", "b", "c"):
            proxy_client.create_table(table(db, name, columns=COLUMNS, partition_keys=(("ds", "string"),)))
            run(f"CREATE INDEX i ON TABLE {db}.{name} (user_id) AS 'COMPACT' WITH DEFERRED REBUILD")
        # Dropped by a plain Thrift client: its indexes and their index tables go too.
        proxy_client.drop_table(db, "a", True)
        assert f"{db}__a_i__" not in proxy_client.get_all_tables(db)
        with pytest.raises(hive.NoSuchObjectException):
            proxy_client.get_index_by_name(db, "a", "i")
        # Renamed (as Spark and Hive do it, alter_table with a new name): the index follows.
        renamed = proxy_client.get_table(db, "b")
        renamed.tableName = "b2"
        proxy_client.alter_table(db, "b", renamed)
        assert proxy_client.get_index_names(db, "b2", -1) == ["i"] and proxy_client.get_index_names(db, "b", -1) == []
        assert proxy_client.get_index_by_name(db, "b2", "i").indexTableName == f"{db}__b_i__"  # the index table keeps its name
        # A table created later under the old name has no index.
        proxy_client.create_table(table(db, "b", columns=COLUMNS))
        assert run(f"SHOW INDEX ON {db}.b") == []
        # Dropped base partitions take the index partitions of the same values along (here the test
        # adds those, as a rebuild would), by values or by name, from any client.
        days = ["1", "2", "3"]
        proxy_client.add_partitions([partition(db, "c", [d]) for d in days])
        proxy_client.add_partitions([partition(db, f"{db}__c_i__", [d]) for d in days])
        proxy_client.drop_partition(db, "c", ["1"], True)
        req = hive.DropPartitionsRequest(dbName=db, tblName="c", parts=hive.RequestPartsSpec(names=["ds=2"]), deleteData=True)
        proxy_client.drop_partitions_req(req)
        assert proxy_client.get_partition_names(db, f"{db}__c_i__", -1) == ["ds=3"]
    finally:
        proxy_client.drop_database(db, True, True)
    proxy_client.create_database(hive.Database(name=db, locationUri=(tmp_path / f"{db}-again").as_uri(), parameters={}))
    try:
        proxy_client.create_table(table(db, "c", columns=COLUMNS))
        assert proxy_client.get_index_names(db, "c", -1) == []  # DROP DATABASE CASCADE left nothing behind
    finally:
        proxy_client.drop_database(db, True, True)


def test_the_hive_cli_creates_shows_and_drops_indexes_unchanged(hive_cli, proxy, proxy_client, metastores, tag, tmp_path):
    db = f"hcidx_{tag}"
    script = f"""
CREATE DATABASE {db} LOCATION '{(tmp_path / db).as_uri()}';
CREATE TABLE {db}.events (id INT, user_id BIGINT) PARTITIONED BY (ds STRING) STORED AS PARQUET;
CREATE INDEX user_idx ON TABLE {db}.events (user_id) AS 'COMPACT' WITH DEFERRED REBUILD;
USE {db};
SHOW INDEX ON events;
"""
    try:
        result = hive_cli(proxy.uri, script)
        assert result.returncode == 0, f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-3000:]}"
        lines = [line.split("\t") for line in result.stdout.splitlines()]
        shown = [[c.strip() for c in cells] for cells in lines if cells[0].strip() == "user_idx"]
        assert shown and shown[0][:5] == ["user_idx", "events", "user_id", f"{db}__events_user_idx__", "compact"]
        index = proxy_client.get_index_by_name(db, "events", "user_idx")
        assert index.deferredRebuild and index.indexHandlerClass == COMPACT
        direct = metastores[0].client()
        try:
            assert direct.get_indexes(db, "events", -1) == []  # answered by the proxy, not the metastore
            assert direct.get_table(db, f"{db}__events_user_idx__").tableType == "INDEX_TABLE"
        finally:
            direct.close()
        # DROP TABLE of the index table: the CLI refuses it itself, as on its own metastore (a plain
        # Thrift client meets the proxy's refusal: test_refusals_say_what_is_wrong) ...
        result = hive_cli(proxy.uri, f"DROP TABLE {db}.{db}__events_user_idx__;\n")
        assert result.returncode != 0 and "Cannot drop index tables" in result.stdout + result.stderr
        # ... and DROP INDEX drops both, as Hive users do it.
        result = hive_cli(proxy.uri, f"DROP INDEX user_idx ON {db}.events;\n")
        assert result.returncode == 0, f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-3000:]}"
        assert proxy_client.get_index_names(db, "events", -1) == [] and f"{db}__events_user_idx__" not in proxy_client.get_all_tables(db)
    finally:
        proxy_client.drop_database(db, True, True)


def test_a_hive_3_metastore_which_has_no_indexes_serves_them_through_the_proxy(hive31, tag):  # noqa: F811
    with served(primary_only_config(hive31.uri, "3.1")) as server:
        client = thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", server.port, timeout=60_000)
        sql = HmsProxyClient(server.uri, user="alice")
        name = f"ev_{tag}"
        try:
            client.create_table(table("default", name, columns=COLUMNS, partition_keys=(("ds", "string"),)))
            sql.execute(f"CREATE INDEX user_idx ON TABLE {name} (user_id) AS 'COMPACT' WITH DEFERRED REBUILD", database="default")
            made = client.get_table("default", index_table_name(name, "user_idx"))
            assert made.tableType == "MANAGED_TABLE" and made.parameters[INDEX_OF] == f"default.{name}.user_idx"
            assert [i.indexName for i in client.get_indexes("default", name, -1)] == ["user_idx"]
            with pytest.raises(TException, match="is the index table"):
                client.drop_table("default", index_table_name(name, "user_idx"), True)
            client.drop_table("default", name, True)
            assert index_table_name(name, "user_idx") not in client.get_all_tables("default")
        finally:
            for t in client.get_all_tables("default"):
                if tag in t:
                    client.drop_table("default", t, True)
            client.close()
            sql.close()


PLUGIN = '''
from hmsproxy.pipeline.errors import InvalidRequest
from hmsproxy.features.indexes.handlers import IndexHandler

CALLS = []


class Bloom(IndexHandler):
    """Keeps its index outside the metastore: no index table."""

    def uses_index_table(self):
        return False

    def analyze(self, base, index, index_table):
        if [c.name for c in index.sd.cols] != ["user_id"]:
            raise InvalidRequest("bloom: only user_id")
        CALLS.append(("analyze", base.tableName, index.indexName, index_table))

    def drop(self, index):
        CALLS.append(("drop", index.origTableName, index.indexName))
'''


def test_a_handler_plugged_in_through_the_entry_point_group(run, events, proxy_client, tmp_path, monkeypatch):
    """The seed's plug-in interface: a handler found by its class name in `hmsproxy.index_handlers`,
    asked whether it keeps an index table, to analyze the definition and to clean up on DROP INDEX."""
    import importlib
    import sys

    (tmp_path / "bloom_handler.py").write_text(PLUGIN)
    info = tmp_path / "bloom_handler-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: bloom-handler\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[hmsproxy.index_handlers]\norg.example.BloomHandler = bloom_handler:Bloom\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    ev = events
    try:
        with pytest.raises(HmsProxyError, match="bloom: only user_id"):
            run(f"CREATE INDEX b ON TABLE {ev} (action) AS 'org.example.BloomHandler' WITH DEFERRED REBUILD")
        run(f"CREATE INDEX b ON TABLE {ev} (user_id) AS 'org.example.BloomHandler' WITH DEFERRED REBUILD")
        plugin = sys.modules["bloom_handler"]
        assert plugin.CALLS == [("analyze", ev, "b", None)]
        assert run(f"SHOW INDEX ON {ev}") == [
            {
                "idx_name": "b",
                "tab_name": ev,
                "col_names": "user_id",
                "idx_tab_name": "",
                "idx_type": "org.example.BloomHandler",
                "comment": "",
            }
        ]
        assert not [t for t in proxy_client.get_all_tables("default") if t.endswith("__") and ev in t]  # no index table
        run(f"DROP INDEX b ON {ev}")
        assert plugin.CALLS[-1] == ("drop", ev, "b")
    finally:
        sys.modules.pop("bloom_handler", None)


def test_one_index_table_name_from_every_entry_point_on_a_prefixed_federated_database(
    hive_cli, proxy, proxy_client, metastores, federated_dbs, tag
):
    """Hive's <db>__<table>_<index>__ with the database as the client names it (waggle_sales, not the
    federated metastore's sales): the Hive CLI, `hmsproxy sql` and a Thrift add_index that leaves the name out."""
    base = f"ixn_{tag}"
    proxy_client.create_table(table("waggle_sales", base, columns=COLUMNS))
    try:
        result = hive_cli(proxy.uri, f"CREATE INDEX cli_idx ON TABLE waggle_sales.{base} (user_id) AS 'COMPACT' WITH DEFERRED REBUILD;\n")
        assert result.returncode == 0, f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-3000:]}"
        out = hmsproxy_sql(
            proxy.uri, "-e", f"CREATE INDEX sql_idx ON TABLE waggle_sales.{base} (user_id) AS 'COMPACT' WITH DEFERRED REBUILD"
        )
        assert out.returncode == 0, out.stderr
        assert f"(index table waggle_sales.waggle_sales__{base}_sql_idx__)" in out.stdout
        sd = hive.StorageDescriptor(cols=[hive.FieldSchema(name="user_id", type="bigint")], parameters={})
        proxy_client.add_index(
            hive.Index(
                indexName="thrift_idx", indexHandlerClass=COMPACT, dbName="waggle_sales", origTableName=base, sd=sd, deferredRebuild=True
            ),
            hive.Table(dbName="waggle_sales", sd=hive.StorageDescriptor(parameters={}), parameters={}),  # no tableName
        )
        expected = {f"waggle_sales__{base}_{i}__" for i in ("cli_idx", "sql_idx", "thrift_idx")}
        assert {i.indexTableName for i in proxy_client.get_indexes("waggle_sales", base, -1)} == expected
        assert expected <= set(proxy_client.get_all_tables("waggle_sales"))
        direct = metastores[1].client()
        try:
            assert expected <= set(direct.get_all_tables("sales"))  # the same names on the federated metastore
        finally:
            direct.close()
    finally:
        proxy_client.drop_table("waggle_sales", base, True)  # its indexes and their index tables go with it


def test_auto_rebuild_is_stored_shown_and_switched_from_the_python_client_and_hmsproxy_sql(proxy, proxy_client, run, events):
    """CREATE INDEX … AUTO REBUILD (issue 41): an index property the watcher reads; SET IDXPROPERTIES
    turns it off and on; any other value is refused; with WITH DEFERRED REBUILD it does not parse."""
    ev = events
    # The proxy's own execute: it creates the index and leaves the build to the client (no Spark here).
    proxy_client.hmsproxy_execute(
        f"CREATE INDEX user_idx ON TABLE {ev} (user_id) AS 'COMPACT' AUTO REBUILD IDXPROPERTIES ('team'='growth')", "default"
    )
    index = proxy_client.get_index_by_name("default", ev, "user_idx")
    assert index.parameters == {"hmsproxy.index.auto-rebuild": "true", "team": "growth"} and index.deferredRebuild is False

    shown = run(f"SHOW FORMATTED INDEX ON {ev}")
    assert [(r["idx_name"], r["deferred_rebuild"], r["idx_properties"]) for r in shown] == [
        ("user_idx", "false", "hmsproxy.index.auto-rebuild=true, team=growth")
    ]
    run(f"ALTER INDEX user_idx ON {ev} SET IDXPROPERTIES ('hmsproxy.index.auto-rebuild'='false')")
    assert proxy_client.get_index_by_name("default", ev, "user_idx").parameters["hmsproxy.index.auto-rebuild"] == "false"
    out = hmsproxy_sql(
        proxy.uri, "--user", "alice", "-e", f"ALTER INDEX user_idx ON {ev} SET IDXPROPERTIES ('hmsproxy.index.auto-rebuild'='TRUE')"
    )
    assert out.returncode == 0, out.stderr
    out = hmsproxy_sql(proxy.uri, "--user", "alice", "-e", f"SHOW FORMATTED INDEX ON {ev}")
    assert out.returncode == 0, out.stderr
    assert "hmsproxy.index.auto-rebuild=TRUE, team=growth" in out.stdout.splitlines()[2]

    with pytest.raises(HmsProxyError, match=re.escape("hmsproxy.index.auto-rebuild is 'yes'; use 'true' or 'false'")):
        run(f"ALTER INDEX user_idx ON {ev} SET IDXPROPERTIES ('hmsproxy.index.auto-rebuild'='yes')")
    with pytest.raises(DdlSyntaxError, match=re.escape("found 'AUTO'")):
        run(f"CREATE INDEX other ON TABLE {ev} (action) AS 'COMPACT' WITH DEFERRED REBUILD AUTO REBUILD")
    with pytest.raises(TException, match=re.escape("use 'true' or 'false'")):  # the Hive CLI's way: add_index with parameters
        proxy_client.hmsproxy_execute(
            f"CREATE INDEX other ON TABLE {ev} (action) AS 'COMPACT' WITH DEFERRED REBUILD IDXPROPERTIES ('hmsproxy.index.auto-rebuild'='1')",
            "default",
        )
    assert proxy_client.get_index_names("default", ev, -1) == ["user_idx"]

"""The remotes statements' runners against a real SQLite store in a temp dir.

Whether a name is taken in the federation is asked of the context's client (in the proxy, an
internal client through its own routing); here a stand-in knows a fixed set of names.
"""

from __future__ import annotations

import pytest

from hmsproxy.config.model import Config, DatabaseResolution, MetastoreConfig, ServerConfig
from hmsproxy.ddl import executor
from hmsproxy.ddl.results import ResultSet, format_table
from hmsproxy.features import parse
from hmsproxy.features.remotes.config import RemotesConfig
from hmsproxy.features.remotes.runners import Runners as RemoteRunners
from hmsproxy.pipeline.errors import AccessDenied, Conflict, InvalidRequest, NotFound

URIS = "WITH {kind}PROPERTIES ('hive.metastore.uris'='thrift://remote-hms:9083')"
DBP = URIS.format(kind="DB")
TBLP = URIS.format(kind="TBL")


class Names:
    """Stands in for the internal client: which databases and tables exist in the federation."""

    def __init__(self, databases=(), tables=()):
        self.databases, self.tables = set(databases), set(tables)

    def exists(self, method, **kw):
        if method == "get_database":
            return kw["name"] in self.databases
        return (kw["dbname"], kw["tbl_name"]) in self.tables


ANYWHERE = Names({"analytics", "default", "local_db", "ta", "tb", "td"})


def config(creators=None) -> Config:
    primary = MetastoreConfig("primary", ("thrift://127.0.0.1:1",), primary=True)
    return Config(ServerConfig(), DatabaseResolution.PREFIXED, primary).with_section("remotes", RemotesConfig(creators))


def Ctx(user, current_database, creators=None, names=ANYWHERE):  # noqa: N802 (reads like a class)
    return executor.StatementContext(user, current_database, names, config(creators))


@pytest.fixture
def ctx():
    return Ctx("alice", "analytics")


_REPO: list = []


@pytest.fixture(autouse=True)
def _runners_use_this_store(remotes_repo):
    _REPO[:] = [remotes_repo]


def run(text, ctx) -> ResultSet:
    (statement,) = parse(text)
    return executor.run(statement, RemoteRunners(_REPO[0]).runners(), ctx)


def execute_script(text, ctx):
    return [run(s.source, ctx) for s in parse(text)]


def test_create_show_describe_drop_database(ctx, remotes_repo):
    rs = run(f"CREATE REMOTE DATABASE Sales CONNECTED TO sales_prod {DBP}", ctx)
    assert rs.columns == ["result"] and "created remote database 'sales'" in rs.rows[0][0]
    d = remotes_repo.get_database("sales")
    assert (d.remote_name, d.factory, d.owner) == ("sales_prod", "thrift", "alice")
    assert d.properties == {"hive.metastore.uris": "thrift://remote-hms:9083"}

    rs = run("SHOW REMOTE DATABASES", ctx)
    assert rs.columns == ["database_name", "remote_database", "via", "owner", "created_at"]
    assert [r[:4] for r in rs.rows] == [["sales", "sales_prod", "thrift", "alice"]]
    assert rs.rows[0][4].endswith("UTC")

    rs = run("DESCRIBE REMOTE DATABASE sales", ctx)
    assert rs.columns == ["property", "value"]
    described = dict(map(tuple, rs.rows))
    assert described["remote_database"] == "sales_prod" and described["hive.metastore.uris"] == "thrift://remote-hms:9083"

    assert "dropped remote database 'sales'" in run("DROP REMOTE DATABASE sales", ctx).rows[0][0]
    assert run("SHOW REMOTE DATABASES", ctx).rows == []


def test_create_database_defaults(ctx, remotes_repo):
    run(f"CREATE REMOTE DATABASE db_name {DBP}", ctx)
    d = remotes_repo.get_database("db_name")
    assert (d.local_name, d.remote_name, d.factory) == ("db_name", "db_name", "thrift")


def test_create_table_defaults_to_current_database_and_same_names(ctx, remotes_repo):
    run(f"CREATE REMOTE TABLE tbl_name {TBLP}", ctx)
    t = remotes_repo.get_table("analytics", "tbl_name")
    assert (t.remote_db, t.remote_name, t.factory, t.owner) == ("analytics", "tbl_name", "thrift", "alice")
    run(f"CREATE REMOTE TABLE local_db.local_tbl CONNECTED TO remote_db.remote_tbl {TBLP}", ctx)
    t = remotes_repo.get_table("local_db", "local_tbl")
    assert (t.remote_db, t.remote_name) == ("remote_db", "remote_tbl")
    run(f"CREATE REMOTE TABLE other CONNECTED TO renamed {TBLP}", ctx)
    t = remotes_repo.get_table("analytics", "other")
    assert (t.remote_db, t.remote_name) == ("analytics", "renamed")
    # no current database at all: "default"
    run(f"CREATE REMOTE TABLE t0 {TBLP}", Ctx("alice", None))
    assert remotes_repo.get_table("default", "t0") is not None


def test_show_and_describe_tables(ctx):
    run(f"CREATE REMOTE TABLE ta.t1 CONNECTED TO r.x {TBLP}", ctx)
    run(f"CREATE REMOTE TABLE tb.t2 {TBLP}", ctx)
    rs = run("SHOW REMOTE TABLES", ctx)
    assert rs.columns == ["database_name", "table_name", "remote_database", "remote_table", "via", "owner", "created_at"]
    assert [r[:4] for r in rs.rows] == [["ta", "t1", "r", "x"], ["tb", "t2", "tb", "t2"]]
    assert [r[1] for r in run("SHOW REMOTE TABLES IN tb", ctx).rows] == ["t2"]
    assert run("SHOW REMOTE TABLES IN nothing", ctx).rows == []
    described = dict(map(tuple, run("DESC REMOTE TABLE ta.t1", ctx).rows))
    assert described["remote_database"] == "r" and described["remote_table"] == "x" and described["via"] == "thrift"
    with pytest.raises(NotFound, match=r"remote table 'analytics.t1' does not exist"):
        run("DESCRIBE REMOTE TABLE t1", ctx)


def test_describe_hides_secrets(ctx):
    run("CREATE REMOTE DATABASE s WITH DBPROPERTIES ('hive.metastore.uris'='thrift://h:1', 'ssh.password'='hunter2')", ctx)
    described = dict(map(tuple, run("DESCRIBE REMOTE DATABASE s", ctx).rows))
    assert described["ssh.password"] == "***"


def test_name_clashes(ctx):
    run(f"CREATE REMOTE DATABASE sales {DBP}", ctx)
    with pytest.raises(Conflict, match="remote database 'sales' already exists"):
        run(f"CREATE REMOTE DATABASE SALES {DBP}", ctx)
    assert "nothing done" in run(f"CREATE REMOTE DATABASE IF NOT EXISTS sales {DBP}", ctx).rows[0][0]
    run(f"CREATE REMOTE TABLE td.t {TBLP}", ctx)
    with pytest.raises(Conflict, match=r"remote table 'td.t' already exists"):
        run(f"CREATE REMOTE TABLE td.T {TBLP}", ctx)
    assert "nothing done" in run(f"CREATE REMOTE TABLE IF NOT EXISTS td.t {TBLP}", ctx).rows[0][0]
    with pytest.raises(AccessDenied, match="'sales' is a remote database"):
        run(f"CREATE REMOTE TABLE sales.t {TBLP}", ctx)


def test_names_taken_in_the_federation_are_refused(remotes_repo):
    local = {"default", "analytics"}
    ctx = Ctx("alice", "analytics", names=Names(local, {("analytics", "events")}))
    with pytest.raises(Conflict, match="a database 'analytics' already exists in the federation"):
        run(f"CREATE REMOTE DATABASE analytics {DBP}", ctx)
    assert "nothing done" in run(f"CREATE REMOTE DATABASE IF NOT EXISTS analytics {DBP}", ctx).rows[0][0]
    with pytest.raises(NotFound, match="database 'nowhere' does not exist"):
        run(f"CREATE REMOTE TABLE nowhere.t {TBLP}", ctx)
    with pytest.raises(Conflict, match="a table 'analytics.events' already exists"):
        run(f"CREATE REMOTE TABLE events {TBLP}", ctx)
    run(f"CREATE REMOTE TABLE orders {TBLP}", ctx)
    assert remotes_repo.list_databases() == [] and len(remotes_repo.list_tables()) == 1


def test_factory_and_properties_are_validated(ctx, remotes_repo):
    with pytest.raises(InvalidRequest, match="property 'hive.metastore.uris' is required"):
        run("CREATE REMOTE DATABASE d", ctx)
    with pytest.raises(InvalidRequest, match="hive.metastore.uris"):
        run("CREATE REMOTE TABLE t WITH TBLPROPERTIES ('hive.metastore.uris'='http://nope')", ctx)
    with pytest.raises(InvalidRequest, match="unknown client factory 'nope'"):
        run(f"CREATE REMOTE DATABASE d VIA 'nope' {DBP}", ctx)
    with pytest.raises(InvalidRequest, match="client factory 'no.such.module.Factory' can't be loaded"):
        run(f"CREATE REMOTE TABLE t VIA 'no.such.module.Factory' {TBLP}", ctx)
    assert remotes_repo.list_databases() == [] and remotes_repo.list_tables() == []


def test_only_creators_may_change_remotes():
    creators = ("admin", "etl")
    alice = Ctx("alice", "default", creators)
    with pytest.raises(AccessDenied) as e:
        run(f"CREATE REMOTE DATABASE d {DBP}", alice)
    assert "user 'alice' may not create remote database 'd'" in str(e.value) and "'remotes.creators'" in str(e.value)
    with pytest.raises(AccessDenied, match="an unnamed user .* 'remotes.creators'"):
        run(f"CREATE REMOTE TABLE t {TBLP}", Ctx(None, "default", creators))
    admin = Ctx("admin", "default", creators)
    run(f"CREATE REMOTE DATABASE d {DBP}", admin)
    with pytest.raises(AccessDenied, match="user 'alice' may not drop remote database 'd'"):
        run("DROP REMOTE DATABASE d", alice)
    # reading is for everyone
    assert len(run("SHOW REMOTE DATABASES", alice).rows) == 1
    assert run("DESCRIBE REMOTE DATABASE d", alice).rows
    with pytest.raises(AccessDenied, match="may not create"):
        run(f"CREATE REMOTE DATABASE x {DBP}", Ctx("alice", "default", ()))


def test_drop_missing(ctx):
    with pytest.raises(NotFound, match=r"remote database 'nope' does not exist"):
        run("DROP REMOTE DATABASE nope", ctx)
    with pytest.raises(NotFound, match=r"remote table 'analytics.nope' does not exist"):
        run("DROP REMOTE TABLE nope", ctx)
    assert "nothing done" in run("DROP REMOTE DATABASE IF EXISTS nope", ctx).rows[0][0]
    assert "nothing done" in run("DROP REMOTE TABLE IF EXISTS x.nope", ctx).rows[0][0]
    with pytest.raises(NotFound, match=r"remote database 'nope' does not exist"):
        run("DESCRIBE REMOTE DATABASE nope", ctx)


def test_generation_moves_with_changes(ctx, remotes_repo):
    g = remotes_repo.generation()
    execute_script(f"CREATE REMOTE DATABASE a {DBP}; CREATE REMOTE TABLE t {TBLP}; SHOW REMOTE TABLES", ctx)
    assert remotes_repo.generation() == g + 2


def test_script_stops_at_first_error(ctx, remotes_repo):
    with pytest.raises(NotFound):
        execute_script(f"CREATE REMOTE DATABASE a {DBP}; DROP REMOTE DATABASE zzz; CREATE REMOTE DATABASE b {DBP}", ctx)
    assert [d.local_name for d in remotes_repo.list_databases()] == ["a"]


def test_format_table():
    text = format_table(ResultSet(["name", "v"], [["a", "long value"], ["bbbbbb", ""]]))
    assert text.splitlines() == ["name   | v", "-------+-----------", "a      | long value", "bbbbbb |", "(2 rows)"]
    assert format_table(ResultSet(["x"], [])).splitlines()[-1] == "(0 rows)"

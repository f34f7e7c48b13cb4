"""hmsproxy's own statements through the real proxy: `hmsproxy sql`, the Python client, raw Thrift."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from hmsproxy.clients.proxy import HmsProxyClient, HmsProxyError
from hmsproxy.ddl.parser import DdlSyntaxError
from hmsproxy.features.remotes.config import RemotesConfig
from hmsproxy.protocol import idl
from hmsproxy.testing.builders import table

HMSPROXY = [sys.executable, "-m", "hmsproxy.cli"]
REPO = Path(__file__).resolve().parents[2]


def unique(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


@pytest.fixture
def uri(proxy):
    return f"thrift://127.0.0.1:{proxy.port}"


@pytest.fixture
def remote_uri(metastores, federated_dbs):
    """The federated metastore, with the sales.orders the links here point to (links are checked when made)."""
    client = metastores[1].client()
    try:
        if "orders" not in client.get_all_tables("sales"):
            client.create_table(table("sales", "orders", columns=(("customer_id", "int"), ("amount", "int"))))
    finally:
        client.close()
    return metastores[1].uri


def hmsproxy_sql(uri, *args, stdin=None):
    return subprocess.run([*HMSPROXY, "sql", "--uri", uri, *args], capture_output=True, text=True, timeout=120, input=stdin, cwd=REPO)


def test_cli_create_show_describe_drop(uri, remote_uri, proxy):
    db = unique("sales")
    out = hmsproxy_sql(
        uri,
        "--user",
        "alice",
        "-e",
        f"CREATE REMOTE DATABASE {db} CONNECTED TO sales WITH DBPROPERTIES ('hive.metastore.uris'='{remote_uri}')",
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"created remote database '{db}' connected to 'sales' via 'thrift'"
    try:
        out = hmsproxy_sql(uri, "-e", "SHOW REMOTE DATABASES")
        assert out.returncode == 0, out.stderr
        lines = out.stdout.splitlines()
        assert lines[0].split() == ["database_name", "|", "remote_database", "|", "via", "|", "owner", "|", "created_at"]
        assert set(lines[1]) <= {"-", "+"}
        row = next(line for line in lines if line.startswith(db))
        assert [c.strip() for c in row.split("|")][:4] == [db, "sales", "thrift", "alice"]
        # the columns line up
        assert len({line.index("|") for line in lines[2:-1]} | {lines[0].index("|")}) == 1
        assert proxy.handler.features.get("remotes").repo.get_database(db).owner == "alice"

        out = hmsproxy_sql(uri, "-e", f"describe remote database {db}")
        assert out.returncode == 0 and remote_uri in out.stdout
    finally:
        out = hmsproxy_sql(uri, "--user", "alice", "-e", f"DROP REMOTE DATABASE {db};")
    assert out.returncode == 0 and out.stdout.strip() == f"dropped remote database '{db}'"
    assert proxy.handler.features.get("remotes").repo.get_database(db) is None


def test_cli_runs_a_script_file_in_the_current_database(uri, remote_uri, tmp_path, proxy, federated_dbs):
    db, other, t = "default", "waggle_sales", unique("orders")
    script = tmp_path / "remotes.sql"
    script.write_text(f"""
        -- two remote tables and a look at them
        CREATE REMOTE TABLE {t} CONNECTED TO sales.orders
          WITH TBLPROPERTIES ('hive.metastore.uris' = '{remote_uri}');
        CREATE REMOTE TABLE {other}.{t} WITH TBLPROPERTIES ('hive.metastore.uris' = '{remote_uri}',
          'hmsproxy.remote.check' = 'false');  -- no such table over there: made unchecked
        SHOW REMOTE TABLES IN {db};
    """)
    out = hmsproxy_sql(uri, "-f", str(script), "--database", db, "--user", "bob")
    try:
        assert out.returncode == 0, out.stderr
        blocks = out.stdout.strip().split("\n\n")
        assert len(blocks) == 3
        assert blocks[0] == f"created remote table '{db}.{t}' connected to 'sales.orders' via 'thrift'"
        assert blocks[1] == f"created remote table '{other}.{t}' connected to '{other}.{t}' via 'thrift'"
        [row] = [line for line in blocks[2].splitlines() if t in line]
        assert [c.strip() for c in row.split("|")][:6] == [db, t, "sales", "orders", "thrift", "bob"]
        rt = proxy.handler.features.get("remotes").repo.get_table(db, t)
        assert (rt.remote_db, rt.remote_name, rt.owner) == ("sales", "orders", "bob")
    finally:
        hmsproxy_sql(uri, "--database", db, "-e", f"DROP REMOTE TABLE IF EXISTS {t}; DROP REMOTE TABLE IF EXISTS {other}.{t}")
    assert (
        proxy.handler.features.get("remotes").repo.get_table(db, t) is None
        and proxy.handler.features.get("remotes").repo.get_table(other, t) is None
    )


def test_cli_remote_table_needs_an_existing_database(uri, remote_uri):
    out = hmsproxy_sql(
        uri, "--database", "no_such_db_here", "-e", f"CREATE REMOTE TABLE t WITH TBLPROPERTIES ('hive.metastore.uris'='{remote_uri}')"
    )
    assert out.returncode == 1
    assert "can't create remote table 'no_such_db_here.t': database 'no_such_db_here' does not exist" in out.stderr


def test_cli_reads_standard_input(uri):
    out = hmsproxy_sql(uri, "-f", "-", stdin="show remote databases;\n")
    assert out.returncode == 0 and out.stdout.splitlines()[0].startswith("database_name")


def test_cli_syntax_error_goes_to_stderr_with_position(uri, tmp_path):
    script = tmp_path / "bad.sql"
    script.write_text("SHOW REMOTE DATABASES;\nCREATE REMOTE TABLE db.t foo\n")
    out = hmsproxy_sql(uri, "-f", str(script))
    assert out.returncode == 1 and out.stdout == ""
    assert f"syntax error in {script} at line 2, column 26" in out.stderr
    assert "expected one of: CONNECTED, VIA, WITH, ;" in out.stderr


def test_cli_refusals_and_missing_objects(uri, remote_uri, proxy_config, proxy):
    out = hmsproxy_sql(uri, "-e", "DROP REMOTE DATABASE no_such_remote")
    assert out.returncode == 1 and out.stdout == ""
    assert "hmsproxy: remote database 'no_such_remote' does not exist" in out.stderr
    out = hmsproxy_sql(uri, "-e", "CREATE REMOTE DATABASE x WITH DBPROPERTIES ('a'='b')")
    assert out.returncode == 1 and "property 'hive.metastore.uris' is required" in out.stderr
    # Links are checked when made: a target that is not there, a catalog out of reach.
    out = hmsproxy_sql(
        uri, "-e", f"CREATE REMOTE TABLE default.x CONNECTED TO sales.ordrs WITH TBLPROPERTIES ('hive.metastore.uris'='{remote_uri}')"
    )
    assert out.returncode == 1 and f"can't create remote table default.x: {remote_uri} has no table 'sales.ordrs'" in out.stderr
    out = hmsproxy_sql(uri, "-e", "CREATE REMOTE DATABASE x WITH DBPROPERTIES ('hive.metastore.uris'='thrift://127.0.0.1:1')")
    assert (
        out.returncode == 1 and "(thrift://127.0.0.1:1) is unavailable" in out.stderr and "'hmsproxy.remote.check' = 'false'" in out.stderr
    )
    repo = proxy.handler.features.get("remotes").repo
    assert repo.get_table("default", "x") is None and repo.get_database("x") is None
    with proxy_config(lambda base: base.with_section("remotes", RemotesConfig(creators=("admin",)))):
        out = hmsproxy_sql(
            uri, "--user", "mallory", "-e", "CREATE REMOTE DATABASE x WITH DBPROPERTIES ('hive.metastore.uris'='thrift://h:1')"
        )
    assert out.returncode == 1
    assert "user 'mallory' may not create remote database 'x'" in out.stderr and "remotes.creators" in out.stderr


def test_cli_unreachable_proxy():
    out = hmsproxy_sql("thrift://127.0.0.1:1", "-e", "SHOW REMOTE DATABASES")
    assert out.returncode == 1 and "can't run statements through thrift://127.0.0.1:1" in out.stderr


def test_python_client(uri, remote_uri, proxy):
    db = unique("py")
    with HmsProxyClient(uri, user="carol") as c:
        results = c.execute(f"""CREATE REMOTE DATABASE {db} CONNECTED TO sales WITH DBPROPERTIES ('hive.metastore.uris'='{remote_uri}');
                                SHOW REMOTE DATABASES""")
        assert len(results) == 2
        assert results[0].columns == ["result"]
        mine = [r for r in results[1].as_dicts() if r["database_name"] == db]
        assert mine and mine[0]["owner"] == "carol" and mine[0]["remote_database"] == "sales"
        with pytest.raises(HmsProxyError, match=f"remote database '{db}' already exists"):
            c.execute(f"CREATE REMOTE DATABASE {db} CONNECTED TO sales WITH DBPROPERTIES ('hive.metastore.uris'='{remote_uri}')")
        with pytest.raises(HmsProxyError, match="has no database 'no_such_sales'"):
            c.execute(f"CREATE REMOTE DATABASE {db}_2 CONNECTED TO no_such_sales WITH DBPROPERTIES ('hive.metastore.uris'='{remote_uri}')")
        with pytest.raises(DdlSyntaxError) as e:
            c.execute(f"DROP REMOTE DATABASE {db}; DROP REMOTE TABLE")
        assert e.value.line == 1
        assert proxy.handler.features.get("remotes").repo.get_database(db) is not None  # the syntax error stopped everything
        [dropped] = c.execute(f"DROP REMOTE DATABASE {db}")
        assert dropped.rows == [[f"dropped remote database '{db}'"]]


def test_raw_thrift_call_answers_the_last_result(proxy_client, remote_uri):
    t = unique("raw")
    proxy_client.set_ugi("dave", [])
    r = proxy_client.hmsproxy_execute(
        f"CREATE REMOTE TABLE {t} CONNECTED TO sales.orders WITH TBLPROPERTIES ('hive.metastore.uris'='{remote_uri}'); "
        "SHOW REMOTE TABLES IN default",
        "default",
    )
    try:
        assert r.columns[:2] == ["database_name", "table_name"]
        [row] = [row for row in r.rows if row[1] == t]
        assert row[0] == "default" and row[5] == "dave"
        with pytest.raises(idl.hive.MetaException, match=r"syntax error at line 1, column 6"):
            proxy_client.hmsproxy_execute("SHOW TABLES", "rawdb")
        with pytest.raises(idl.hive.MetaException, match=r"does not exist \(statement 2 of 2\)"):
            proxy_client.hmsproxy_execute("SHOW REMOTE TABLES; DROP REMOTE TABLE nope", "rawdb")
        # the connection stays usable after errors
        assert proxy_client.hmsproxy_execute("", "rawdb").columns == []
    finally:
        proxy_client.hmsproxy_execute(f"DROP REMOTE TABLE default.{t}", "rawdb")


def test_other_local_calls_still_answered(proxy_client):
    assert proxy_client.getName() == "hmsproxy"
    assert "backends:" in proxy_client.hmsproxy_describe()


def test_store_lives_outside_the_repo(proxy):
    path = Path(proxy.handler.store.url.removeprefix("sqlite:///"))
    assert path.is_file() and not path.resolve().is_relative_to(REPO)
    proxy.handler.store.ping()

"""Remote databases and tables at the Thrift level, against real metastores (and a real sshd).

The remotes point at the session's second metastore (a database `rsrc` made
here directly on it) or at metastores of their own; links are created through
plain CREATE DATABASE / CREATE TABLE calls carrying hmsproxy.remote.* properties.
"""

from __future__ import annotations

import dataclasses
import socket
import time
import uuid

import pytest
import thriftpy2.rpc

from hmsproxy.app import build_handler
from hmsproxy.config.model import StoreConfig
from hmsproxy.features.remotes.config import RemotesConfig
from hmsproxy.protocol import idl
from tests.integration.test_proxy_calls import make_table
from tests.support.federation import stored_in
from tests.support.fixtures import CLIENT_TIMEOUT_S
from tests.support.served import served, served_many
from tests.support.sshd import require_sshd, start_sshd

hive = idl.hive
SOURCE_DB = "rsrc"


def uid() -> str:
    return uuid.uuid4().hex[:8]


def link_db(name: str, uri: str, remote_db: str = SOURCE_DB, **extra) -> hive.Database:
    params = {"hmsproxy.remote.uris": uri, "hmsproxy.remote.database": remote_db, **extra}
    return hive.Database(name=name, description=None, locationUri=None, parameters=params)


def link_table(db: str, name: str, uri: str, remote_db: str = SOURCE_DB, remote_table: str = "items"):
    table = make_table(db, name)
    table.parameters = {"hmsproxy.remote.uris": uri, "hmsproxy.remote.database": remote_db, "hmsproxy.remote.table": remote_table}
    return table


def add_source(metastore, root) -> None:
    """Database `rsrc` with `items` (partitioned by ds, one partition) and `plain` on `metastore`."""
    client = metastore.client()
    try:
        if SOURCE_DB not in client.get_all_databases():
            client.create_database(
                hive.Database(name=SOURCE_DB, description="remote source", locationUri=(root / "rsrc.db").as_uri(), parameters={})
            )
        existing = set(client.get_all_tables(SOURCE_DB))
        if "items" not in existing:
            client.create_table(make_table(SOURCE_DB, "items", partition_keys=("ds",)))
            items = client.get_table(SOURCE_DB, "items")
            sd = items.sd
            sd.location = f"{sd.location}/ds=1"
            client.add_partition(hive.Partition(values=["1"], dbName=SOURCE_DB, tableName="items", sd=sd, parameters={}))
        if "plain" not in existing:
            client.create_table(make_table(SOURCE_DB, "plain"))
    finally:
        client.close()


@pytest.fixture(scope="module")
def source(metastores, tmp_path_factory):
    add_source(metastores[1], tmp_path_factory.mktemp("rsrc"))
    return metastores[1].uri


@pytest.fixture
def local_db(proxy_client):
    name = f"loc_{uid()}"
    proxy_client.create_database(hive.Database(name=name, description=None, locationUri=None, parameters={}))
    yield name
    proxy_client.drop_database(name, True, True)


def test_remote_database_is_a_synonym_for_the_remote_one(proxy_client, source):
    name = f"rdb_{uid()}"
    proxy_client.create_database(link_db(name, source))
    try:
        assert name in proxy_client.get_all_databases()
        assert name in proxy_client.get_databases("rdb_*")
        assert name not in proxy_client.get_databases("nothing*")
        db = proxy_client.get_database(name)
        assert db.name == name
        assert db.parameters["hmsproxy.remote.uris"] == source
        assert db.parameters["hmsproxy.remote.database"] == SOURCE_DB
        assert set(proxy_client.get_all_tables(name)) == {"items", "plain"}
        table = proxy_client.get_table(name, "items")
        assert (table.dbName, table.tableName) == (name, "items")
        assert table.parameters["hmsproxy.remote.table"] == "items"
        parts = proxy_client.get_partitions(name, "items", -1)
        assert [(p.dbName, p.values) for p in parts] == [(name, ["1"])]
        assert proxy_client.get_partition_names(name, "items", -1) == ["ds=1"]
        metas = proxy_client.get_table_meta(name, "*", None)
        assert {(m.dbName, m.tableName) for m in metas} == {(name, "items"), (name, "plain")}
        # Hive 3 catalog markers name the same database: routed to the remote, whose Hive 2.3
        # metastore knows no catalogs and gets the plain name.
        marked = proxy_client.get_table(f"@hive#{name}", "plain")
        assert (marked.dbName, marked.tableName, marked.catNameHive3) == (name, "plain", "hive")
    finally:
        proxy_client.drop_database(name, False, False)
    assert name not in proxy_client.get_all_databases()
    # Only the link went: the remote database is untouched.
    assert "items" in proxy_client.get_all_tables(f"waggle_{SOURCE_DB}")


def test_writes_on_a_remote_database_are_refused(proxy_client, source):
    name = f"rdb_{uid()}"
    proxy_client.create_database(link_db(name, source))
    try:
        with pytest.raises(hive.MetaException) as err:
            proxy_client.create_table(make_table(name, "new_one"))
        assert f"remote database {name} is read-only: it links to {SOURCE_DB} in {source}" in err.value.message
        with pytest.raises(hive.MetaException, match="read-only"):
            proxy_client.alter_table(name, "plain", make_table(name, "plain"))
        with pytest.raises(hive.MetaException, match="read-only"):
            proxy_client.drop_partition(name, "items", ["1"], False)
        assert proxy_client.get_partition_names(name, "items", -1) == ["ds=1"]
    finally:
        proxy_client.drop_database(name, False, False)


def test_remote_table_renames_database_and_table_both_ways(proxy_client, source, local_db):
    proxy_client.create_table(link_table(local_db, "items_link", source))
    try:
        assert "items_link" in proxy_client.get_all_tables(local_db)
        assert proxy_client.get_tables(local_db, "items*") == ["items_link"]
        assert proxy_client.get_tables(local_db, "other*") == []
        table = proxy_client.get_table(local_db, "items_link")
        assert (table.dbName, table.tableName) == (local_db, "items_link")
        assert table.parameters["hmsproxy.remote.uris"] == source
        assert table.parameters["hmsproxy.remote.database"] == SOURCE_DB
        assert table.parameters["hmsproxy.remote.table"] == "items"
        assert table.parameters["hmsproxy.remote.factory"] == "thrift"
        # Shown as external (the proxy owns no remote data), its own type kept in a parameter.
        assert table.tableType == "EXTERNAL_TABLE" and table.parameters["hmsproxy.remote.table.type"] == "MANAGED_TABLE"
        req = proxy_client.get_table_req(hive.GetTableRequest(dbName=local_db, tblName="items_link"))
        assert (req.table.dbName, req.table.tableName) == (local_db, "items_link")
        parts = proxy_client.get_partitions(local_db, "items_link", -1)
        assert [(p.dbName, p.tableName, p.values) for p in parts] == [(local_db, "items_link", ["1"])]
        part = proxy_client.get_partition_by_name(local_db, "items_link", "ds=1")
        assert (part.dbName, part.tableName) == (local_db, "items_link")
        objs = proxy_client.get_table_objects_by_name(local_db, ["items_link", "missing"])
        assert [(t.dbName, t.tableName) for t in objs] == [(local_db, "items_link")]
        metas = proxy_client.get_table_meta(local_db, "*", None)
        assert [(m.dbName, m.tableName) for m in metas] == [(local_db, "items_link")]
        with pytest.raises(hive.MetaException) as err:
            proxy_client.alter_table(local_db, "items_link", make_table(local_db, "items_link"))
        assert f"remote table {local_db}.items_link is read-only: it links to {SOURCE_DB}.items in {source}" in err.value.message
        with pytest.raises(hive.MetaException, match="read-only"):
            proxy_client.create_table(make_table(local_db, "items_link"))
    finally:
        proxy_client.drop_table(local_db, "items_link", True)
    assert "items_link" not in proxy_client.get_all_tables(local_db)
    assert "items" in proxy_client.get_all_tables(f"waggle_{SOURCE_DB}")  # the remote table stays


def test_remote_tables_are_in_every_listing_of_their_database(proxy_client, source, local_db):
    """The virtual catalog: by type, by filter, by name and in table metas, beside a real table."""
    proxy_client.create_table(make_table(local_db, "real_one"))
    proxy_client.create_table(link_table(local_db, "items_link", source))
    try:
        # Shown as an external table (the remote's own type is kept in a parameter).
        assert sorted(proxy_client.get_tables_by_type(local_db, "*", "EXTERNAL_TABLE")) == ["items_link"]
        assert proxy_client.get_tables_by_type(local_db, "*", "MANAGED_TABLE") == ["real_one"]
        # The remote metastore evaluates the filter on the linked table.
        owner_filter = 'hive_filter_field_owner__ = "tester"'
        assert sorted(proxy_client.get_table_names_by_filter(local_db, owner_filter, -1)) == ["items_link", "real_one"]
        assert proxy_client.get_table_names_by_filter(local_db, 'hive_filter_field_owner__ = "nobody"', -1) == []
        req = hive.GetTablesRequest(dbName=local_db, tblNames=["items_link", "real_one"])
        tables = proxy_client.get_table_objects_by_name_req(req).tables
        assert sorted((t.dbName, t.tableName) for t in tables) == [(local_db, "items_link"), (local_db, "real_one")]
        metas = proxy_client.get_table_meta(local_db, "*", ["EXTERNAL_TABLE"])
        assert [(m.dbName, m.tableName, m.tableType) for m in metas] == [(local_db, "items_link", "EXTERNAL_TABLE")]
    finally:
        proxy_client.drop_table(local_db, "items_link", True)


def test_dropping_a_database_drops_its_remote_table_links(proxy_client, source):
    db = f"loc_{uid()}"
    proxy_client.create_database(hive.Database(name=db, description=None, locationUri=None, parameters={}))
    proxy_client.create_table(link_table(db, "t", source, remote_table="plain"))
    proxy_client.drop_database(db, True, False)
    proxy_client.create_database(hive.Database(name=db, description=None, locationUri=None, parameters={}))
    try:
        assert proxy_client.get_all_tables(db) == []
    finally:
        proxy_client.drop_database(db, True, True)


def test_bad_links_are_refused_clearly(proxy_client, source, local_db):
    with pytest.raises(hive.InvalidObjectException, match="hive.metastore.uris"):
        proxy_client.create_database(link_db(f"bad_{uid()}", "http://nope"))
    with pytest.raises(hive.InvalidObjectException, match="client factory 'no.such.Factory'"):
        proxy_client.create_database(link_db(f"bad_{uid()}", source, **{"hmsproxy.remote.factory": "no.such.Factory"}))
    with pytest.raises(hive.AlreadyExistsException, match=f"database '{local_db}' already exists"):
        proxy_client.create_database(link_db(local_db, source))
    with pytest.raises(hive.NoSuchObjectException, match="does not exist"):
        proxy_client.create_table(link_table(f"nodb_{uid()}", "t", source))
    name = f"rdb_{uid()}"
    proxy_client.create_database(link_db(name, source))
    try:
        with pytest.raises(hive.AlreadyExistsException, match="already exists"):
            proxy_client.create_database(link_db(name, source))
    finally:
        proxy_client.drop_database(name, False, False)


def test_only_creators_may_create_remotes(proxy, proxy_config, source):
    with proxy_config(lambda base: base.with_section("remotes", RemotesConfig(("alice",)))):
        for user, allowed in (("bob", False), ("alice", True)):
            client = thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", proxy.port, timeout=60000)
            try:
                client.set_ugi(user, [])
                name = f"rdb_{uid()}"
                if not allowed:
                    with pytest.raises(hive.MetaException) as err:
                        client.create_database(link_db(name, source))
                    assert "user 'bob' may not create remote database" in err.value.message
                    assert "'remotes.creators'" in err.value.message and "(alice)" in err.value.message
                    continue
                client.create_database(link_db(name, source))
                assert client.get_database(name).name == name
                client.drop_database(name, False, False)
            finally:
                client.close()


def test_unreachable_remote_fails_alone_fast_and_recovers(proxy_client, private_metastore, tmp_path, local_db):
    add_source(private_metastore, tmp_path)
    name = f"rdb_{uid()}"
    proxy_client.create_database(link_db(name, private_metastore.uri))
    proxy_client.create_table(link_table(local_db, "linked", private_metastore.uri))
    try:
        assert proxy_client.get_table(name, "items").tableName == "items"
        private_metastore.stop()
        start = time.monotonic()
        with pytest.raises(hive.MetaException) as err:
            proxy_client.get_all_tables(name)
        # Stopped, it refuses connections: the proxy answers on the refusal. Had it waited on the
        # metastore instead, the call would have lasted the proxy's backend timeout (120 s) or the
        # client's, the shorter; half of that tells the two apart on a busy machine.
        assert time.monotonic() - start < CLIENT_TIMEOUT_S / 2
        assert f"remote database {name}: " in err.value.message and "is unavailable" in err.value.message
        assert private_metastore.uri in err.value.message
        assert f'DROP DATABASE {name} (or hmsproxy sql -e "DROP REMOTE DATABASE {name}") removes the link' in err.value.message
        # The link's own fetch is answered from what it recorded when it was made (so Spark and Hive,
        # which fetch what they drop, can drop it: features/remotes/records.py); what needs the
        # metastore fails, naming the way out.
        recorded = proxy_client.get_table(local_db, "linked")
        assert [k.name for k in recorded.partitionKeys] == ["ds"]
        assert "is unavailable" in recorded.parameters["hmsproxy.remote.unavailable"]
        with pytest.raises(hive.MetaException) as err:
            proxy_client.get_partition_names(local_db, "linked", -1)
        assert f"remote table {local_db}.linked: " in err.value.message
        assert f"DROP TABLE {local_db}.linked" in err.value.message
        # Everything else still works: listings leave the dead remote's tables out.
        assert name in proxy_client.get_all_databases()
        assert "linked" in proxy_client.get_all_tables(local_db)
        assert proxy_client.get_table_objects_by_name(local_db, ["linked"]) == []
        assert proxy_client.get_database("default").name == "default"
        private_metastore.start()
        assert set(proxy_client.get_all_tables(name)) == {"items", "plain"}
        assert proxy_client.get_table(local_db, "linked").tableName == "linked"
    finally:
        proxy_client.drop_database(name, False, False)


# -- a second proxy on the same PostgreSQL store --------------------------------------


@pytest.fixture
def pg_store_url(pg_url):
    """A database of its own on the session's throwaway PostgreSQL (tests/support/postgres.py)."""
    return pg_url


def test_a_second_proxy_on_the_same_store_sees_new_remotes(default_config, pg_store_url, source):
    config = dataclasses.replace(default_config, store=StoreConfig(pg_store_url))
    with served_many(config, 2) as servers:
        clients = [thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", s.port, timeout=60000) for s in servers]
        try:
            name = f"rdb_{uid()}"
            assert name not in clients[1].get_all_databases()
            clients[0].create_database(link_db(name, source))
            # It checks the store every check-interval-s (1 s); 30 s is a bound only a proxy that never
            # looks again reaches (the interval itself: tests/unit/test_store_snapshot.py).
            deadline = time.monotonic() + 30
            while name not in clients[1].get_all_databases():
                assert time.monotonic() < deadline, "the second proxy never saw the new remote"
                time.sleep(0.2)
            assert set(clients[1].get_all_tables(name)) == {"items", "plain"}
            clients[1].drop_database(name, False, False)
            deadline = time.monotonic() + 30
            while name in clients[0].get_all_databases():
                assert time.monotonic() < deadline
                time.sleep(0.2)
        finally:
            for c in clients:
                c.close()


# -- SSH tunnels ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sshd(tmp_path_factory):
    require_sshd()
    server = start_sshd(tmp_path_factory.mktemp("sshd"))
    yield server
    server.stop()


@pytest.mark.parametrize("hops", [1, 2])
def test_remote_through_an_ssh_tunnel(proxy, proxy_client, sshd, source, hops):
    name = f"rdb_{uid()}"
    tunnel = {
        "ssh.tunnel.route": sshd.route(hops),
        "ssh.tunnel.private.keys": str(sshd.client_key),
        "ssh.tunnel.known.hosts": str(sshd.known_hosts),
    }
    # Behind the last hop the metastore is "localhost": the tunnel resolves it there.
    uri = source.replace("127.0.0.1", "localhost")
    proxy_client.create_database(link_db(name, uri, **tunnel))
    try:
        assert set(proxy_client.get_all_tables(name)) == {"items", "plain"}
        table = proxy_client.get_table(name, "items")
        assert table.dbName == name
        assert table.parameters["hmsproxy.remote.ssh.tunnel.route"] == sshd.route(hops)
        tunnels = proxy.handler.features.get("remotes").targets.tunnels._tunnels
        assert any(t.spec.route.count("->") == hops - 1 and t.active for t in tunnels.values())
    finally:
        proxy_client.drop_database(name, False, False)


def test_ssh_tunnel_failures_are_clear(proxy_client, sshd, source, tmp_path):
    name = f"rdb_{uid()}"
    wrong_known_hosts = tmp_path / "known_hosts"
    wrong_known_hosts.write_text("")
    tunnel = {
        "ssh.tunnel.route": sshd.route(1),
        "ssh.tunnel.private.keys": str(sshd.client_key),
        "ssh.tunnel.known.hosts": str(wrong_known_hosts),
    }
    with pytest.raises(hive.MetaException) as err:  # checked when made: the tunnel does not open
        proxy_client.create_database(link_db(name, source, **tunnel))
    assert f"can't create remote database {name}: metastore {source} (via ssh {sshd.route(1)}) is unavailable" in err.value.message
    assert "ssh hop 1" in err.value.message
    proxy_client.create_database(link_db(name, source, **tunnel, **{"hmsproxy.remote.check": "false"}))
    try:
        with pytest.raises(hive.MetaException) as err:
            proxy_client.get_all_tables(name)
        message = err.value.message
        assert f"remote database {name}: metastore {source} (via ssh {sshd.route(1)}) is unavailable" in message
        assert "ssh hop 1" in message
    finally:
        proxy_client.drop_database(name, False, False)


def test_ssh_tunnels_close_with_the_handler(default_config, tmp_path, sshd, source):
    handler = build_handler(stored_in(default_config, tmp_path))
    with served(handler) as server:
        client = thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", server.port, timeout=60000)
        try:
            client.create_database(
                link_db(
                    "tunnelled",
                    source,
                    **{
                        "ssh.tunnel.route": sshd.route(1),
                        "ssh.tunnel.private.keys": str(sshd.client_key),
                        "ssh.tunnel.known.hosts": str(sshd.known_hosts),
                    },
                )
            )
            assert "items" in client.get_all_tables("tunnelled")
            (tunnel,) = handler.features.get("remotes").targets.tunnels._tunnels.values()
            assert tunnel.active
        finally:
            client.close()
    assert not tunnel.active
    with pytest.raises(OSError):  # nothing listens on the tunnel's port any more
        socket.create_connection(("127.0.0.1", tunnel.local_port), timeout=1).close()


def test_remotes_defined_in_the_config(proxy_config, proxy_client, source, local_db):
    from hmsproxy.features.remotes.model import RemoteDatabase, RemoteTable

    uris = {"hive.metastore.uris": source}
    static = RemotesConfig(
        None,
        (RemoteDatabase("cfg_rdb", SOURCE_DB, properties=uris),),
        (RemoteTable(local_db, "cfg_items", SOURCE_DB, "items", properties=uris),),
    )
    with proxy_config(lambda base: base.with_section("remotes", static)):
        assert "cfg_rdb" in proxy_client.get_all_databases()
        assert set(proxy_client.get_all_tables("cfg_rdb")) == {"items", "plain"}
        assert proxy_client.get_table(local_db, "cfg_items").tableName == "cfg_items"
        with pytest.raises(hive.MetaException, match=r"defined in the proxy's configuration \(remotes.databases\)"):
            proxy_client.drop_database("cfg_rdb", False, False)
        with pytest.raises(hive.MetaException, match="read-only"):
            proxy_client.alter_table(local_db, "cfg_items", make_table(local_db, "cfg_items"))
    assert "cfg_rdb" not in proxy_client.get_all_databases()


def test_a_dropped_ssh_connection_is_rebuilt_on_next_use(proxy, proxy_client, sshd, source):
    name = f"rdb_{uid()}"
    route = f"{sshd.user}@localhost:{sshd.port}"  # its own target: not shared with the other tests
    known = sshd.root / "known_hosts_localhost"
    known.write_text(sshd.known_hosts.read_text().replace("[127.0.0.1]", "[localhost]"))
    proxy_client.create_database(
        link_db(
            name,
            source,
            **{
                "ssh.tunnel.route": route,
                "ssh.tunnel.private.keys": str(sshd.client_key),
                "ssh.tunnel.known.hosts": str(known),
            },
        )
    )
    try:
        assert "items" in proxy_client.get_all_tables(name)
        tunnels = proxy.handler.features.get("remotes").targets.tunnels._tunnels
        (old,) = [t for t in tunnels.values() if t.spec.known_hosts == str(known)]
        old._clients[0].close()  # the SSH connection drops (bastion restarted, network blip)
        assert not old.active
        assert "items" in proxy_client.get_all_tables(name)
        (new,) = [t for t in tunnels.values() if t.spec.known_hosts == str(known)]
        assert new is not old and new.active
    finally:
        proxy_client.drop_database(name, False, False)


def test_table_meta_lists_several_remote_tables_of_one_remote_database(proxy_client, source, local_db):
    proxy_client.create_table(link_table(local_db, "a_items", source, remote_table="items"))
    proxy_client.create_table(link_table(local_db, "b_items", source, remote_table="items"))
    proxy_client.create_table(link_table(local_db, "c_plain", source, remote_table="plain"))
    try:
        metas = proxy_client.get_table_meta(local_db, "*", None)
        assert sorted((m.dbName, m.tableName) for m in metas) == [(local_db, "a_items"), (local_db, "b_items"), (local_db, "c_plain")]
        assert [m.tableName for m in proxy_client.get_table_meta(local_db, "b*", None)] == ["b_items"]
        assert sorted(proxy_client.get_all_tables(local_db)) == ["a_items", "b_items", "c_plain"]
    finally:
        for t in ("a_items", "b_items", "c_plain"):
            proxy_client.drop_table(local_db, t, False)


def test_remotes_made_with_hmsproxy_sql_are_served_at_once(proxy, proxy_client, source, local_db):
    import subprocess
    import sys

    name = f"rdb_{uid()}"
    script = (
        f"CREATE REMOTE DATABASE {name} CONNECTED TO {SOURCE_DB} WITH DBPROPERTIES ('hive.metastore.uris'='{source}');\n"
        f"CREATE REMOTE TABLE {local_db}.plain_link CONNECTED TO {SOURCE_DB}.plain "
        f"WITH TBLPROPERTIES ('hive.metastore.uris'='{source}');\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "hmsproxy.cli", "sql", "--uri", proxy.uri, "-e", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    try:
        # No waiting: the proxy that ran the statements re-reads its remotes at once.
        assert set(proxy_client.get_all_tables(name)) == {"items", "plain"}
        table = proxy_client.get_table(local_db, "plain_link")
        assert (table.dbName, table.tableName) == (local_db, "plain_link")
        assert table.parameters["hmsproxy.remote.table"] == "plain"
    finally:
        proxy_client.drop_table(local_db, "plain_link", False)
        proxy_client.drop_database(name, False, False)


def test_status_lists_remotes_and_their_targets(proxy_client, source):
    name = f"rdb_{uid()}"
    proxy_client.create_database(link_db(name, source))
    try:
        proxy_client.get_all_tables(name)
        text = proxy_client.hmsproxy_describe()
        assert "remotes: " in text
        assert f"  remote:{source}: up; serves " in text and name in text
    finally:
        proxy_client.drop_database(name, False, False)


def test_statistics_and_functions_of_remotes(proxy_client, metastores, source, local_db):
    client = metastores[1].client()
    try:
        if "plus_one" not in client.get_functions(SOURCE_DB, "*"):
            client.create_function(
                hive.Function(
                    functionName="plus_one",
                    dbName=SOURCE_DB,
                    className="org.example.PlusOne",
                    ownerName="tester",
                    ownerType=hive.PrincipalType.USER,
                    createTime=0,
                    functionType=hive.FunctionType.JAVA,
                    resourceUris=[],
                )
            )
        stats = hive.ColumnStatistics(
            statsDesc=hive.ColumnStatisticsDesc(isTblLevel=True, dbName=SOURCE_DB, tableName="plain"),
            statsObj=[
                hive.ColumnStatisticsObj(
                    colName="id",
                    colType="int",
                    statsData=hive.ColumnStatisticsData(longStats=hive.LongColumnStatsData(lowValue=1, highValue=9, numNulls=0, numDVs=9)),
                )
            ],
        )
        client.update_table_column_statistics(stats)
    finally:
        client.close()
    name = f"rdb_{uid()}"
    proxy_client.create_database(link_db(name, source))
    proxy_client.create_table(link_table(local_db, "plain_link", source, remote_table="plain"))
    try:
        fn = proxy_client.get_function(name, "plus_one")
        assert (fn.dbName, fn.className) == (name, "org.example.PlusOne")
        assert proxy_client.get_functions(name, "plus*") == ["plus_one"]
        got = proxy_client.get_table_column_statistics(local_db, "plain_link", "id")
        assert (got.statsDesc.dbName, got.statsDesc.tableName) == (local_db, "plain_link")
        assert got.statsObj[0].statsData.longStats.highValue == 9
        req = hive.TableStatsRequest(dbName=local_db, tblName="plain_link", colNames=["id"])
        assert proxy_client.get_table_statistics_req(req).tableStats[0].colName == "id"
        with pytest.raises(hive.MetaException, match="read-only"):
            proxy_client.delete_table_column_statistics(local_db, "plain_link", "id")
        with pytest.raises(hive.MetaException, match="read-only"):
            proxy_client.drop_function(name, "plus_one")
    finally:
        proxy_client.drop_table(local_db, "plain_link", False)
        proxy_client.drop_database(name, False, False)

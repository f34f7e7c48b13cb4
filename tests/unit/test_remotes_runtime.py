"""Remotes without a network: the cached registry on a real SQLite store, link properties,
target keys, SSH routes."""

from __future__ import annotations

import time

import pytest

from hmsproxy.config.model import AccessControlType, Config, DatabaseResolution, MetastoreConfig, ServerConfig
from hmsproxy.features.remote_marks import is_link
from hmsproxy.features.remotes.model import RemoteDatabase, RemoteTable
from hmsproxy.features.remotes.routes import RemotesSessionState, Routes
from hmsproxy.features.remotes.snapshot import RemotesCache
from hmsproxy.features.remotes.store import REMOTES_SCHEMA, RemoteRepository
from hmsproxy.features.remotes.targets import Targets, link_properties, normalize_factory
from hmsproxy.features.remotes.tunnels import Hop, parse_route, tunnel_spec
from hmsproxy.store import Store
from hmsproxy.upstream.backends import Backends


def test_registry_sees_changes_of_another_writer_within_its_interval(remotes_repo, tmp_path):
    mine = RemotesCache(remotes_repo, check_interval_s=0.2)
    assert mine.snapshot().empty
    other = Store(f"sqlite:///{tmp_path / 'store.db'}", [REMOTES_SCHEMA])  # a second proxy on the same store
    try:
        RemoteRepository(other).add_database(RemoteDatabase("Sales_EU", "sales", "thrift", {"hive.metastore.uris": "thrift://h:1"}))
        RemoteRepository(other).add_table(RemoteTable("loc", "t_link", "sales", "t", "thrift", {"hive.metastore.uris": "thrift://h:1"}))
    finally:
        other.close()
    # On the real clock, so bounded only by what a cache that never looks again would reach (150
    # intervals); that a change shows once the interval has passed, and not before, is shown on a
    # fake clock in test_store_snapshot.py.
    deadline = time.monotonic() + 30
    while mine.snapshot().empty:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    snap = mine.snapshot()
    assert snap.database("sales_eu").remote_name == "sales"
    assert snap.database("@hive#SALES_EU").local_name == "sales_eu"
    assert snap.table("loc", "T_LINK").remote_name == "t"
    assert [t.local_name for t in snap.tables_of("loc")] == ["t_link"]
    assert snap.database("loc") is None and snap.table("loc", "t") is None


def test_registry_reads_the_store_only_when_its_generation_moved(remotes_repo):
    calls = []

    class Counting:
        def __init__(self, repo):
            self.repo = repo

        def generation(self):
            return self.repo.generation()

        def list_databases(self):
            calls.append("db")
            return self.repo.list_databases()

        def list_tables(self, local_db=None):
            return self.repo.list_tables(local_db)

    registry = RemotesCache(Counting(remotes_repo), check_interval_s=0)
    registry.snapshot()
    registry.snapshot()
    assert calls == ["db"]
    remotes_repo.add_database(RemoteDatabase("x", "x", "thrift", {}))
    assert registry.snapshot().database("x") is not None
    assert calls == ["db", "db"]


def test_link_properties_from_plain_ddl():
    params = {
        "hmsproxy.remote.uris": "thrift://h:9083",
        "hmsproxy.remote.database": "sales",
        "hmsproxy.remote.table": "orders",
        "ssh.tunnel.route": "u@bastion -> v@node",
        "spark.sql.sources.provider": "parquet",
        "transient_lastDdlTime": "1",
    }
    assert is_link(params) and not is_link({"a": "b"}) and not is_link(None)
    assert link_properties(params) == {"hive.metastore.uris": "thrift://h:9083", "ssh.tunnel.route": "u@bastion -> v@node"}
    assert normalize_factory(None) == "thrift"
    assert normalize_factory("org.apache.hadoop.hive.metastore.ThriftHiveMetastoreClientFactory") == "thrift"
    assert normalize_factory("my.pkg:Factory") == "my.pkg:Factory"


def test_targets_are_named_stably_and_shared(tmp_path):
    primary = MetastoreConfig("primary", ("thrift://127.0.0.1:1",), primary=True)
    registry = Backends(Config(ServerConfig(), DatabaseResolution.PREFIXED, primary))
    targets = Targets(registry, lambda: 1.0)
    props = {"hive.metastore.uris": "thrift://h:9083, thrift://h2:9083"}
    a = targets.metastore("thrift", props)
    b = targets.metastore("org.apache.hadoop.hive.metastore.ThriftHiveMetastoreClientFactory", dict(props))
    assert a == b and a.name == "remote:thrift://h:9083,thrift://h2:9083"
    assert a.uris == ("thrift://h:9083", "thrift://h2:9083")
    assert a.access_control_type is AccessControlType.READ_ONLY
    assert registry.metastore(a.name) is a  # known to the registry (versions, translations)
    tunnelled = Targets.key("thrift", {**props, "ssh.tunnel.route": "u@b"})
    assert tunnelled == "remote:thrift://h:9083,thrift://h2:9083 via ssh u@b"
    kerberized = {**props, "hive.metastore.sasl.enabled": "true", "hive.metastore.kerberos.principal": "hive/_HOST@R"}
    assert Targets.key("thrift", kerberized) == "remote:thrift://h:9083,thrift://h2:9083 as kerberos to hive/_HOST@R"
    with pytest.raises(ValueError, match="hive.metastore.uris"):
        targets.validate("thrift", {"hive.metastore.uris": "http://x"})


def test_a_renamed_remote_database_keeps_one_config_and_so_one_stack():
    primary = MetastoreConfig("primary", ("thrift://127.0.0.1:1",), primary=True)
    registry = Backends(Config(ServerConfig(), DatabaseResolution.PREFIXED, primary))
    targets = Targets(registry, lambda: 1.0)
    routes = Routes(targets, lambda: registry.config, lambda call: RemotesSessionState(), "remotes.link")
    target = targets.metastore("thrift", {"hive.metastore.uris": "thrift://h:9083"})
    renamed = routes._renaming(target, "sales", "fed_sales")
    assert renamed.database_name_mapping == {"sales": "fed_sales"} and renamed.uris == target.uris
    assert routes._renaming(target, "sales", "fed_sales") is renamed  # call after call: found by identity
    assert registry.stack(renamed) is registry.stack(routes._renaming(target, "sales", "fed_sales"))
    assert routes._renaming(target, "ops", "fed_ops") is not renamed
    moved = MetastoreConfig(target.name, ("thrift://127.0.0.1:4242",))  # e.g. the copy of a rebuilt tunnel
    assert routes._renaming(moved, "sales", "fed_sales").uris == ("thrift://127.0.0.1:4242",)


def test_ssh_routes():
    assert parse_route("bastionuser@bastion -> user@node:2222") == (Hop("bastionuser", "bastion", 22), Hop("user", "node", 2222))
    assert parse_route("host", default_port=2200) == (Hop(None, "host", 2200),)
    with pytest.raises(ValueError, match="empty hop"):
        parse_route("a@b -> ")
    with pytest.raises(ValueError, match="bad port"):
        parse_route("a@b:xx")
    spec = tunnel_spec({"ssh.tunnel.route": "a@b -> c@d -> e@f", "ssh.tunnel.private.keys": "/k1, /k2", "ssh.tunnel.known.hosts": "/kh"})
    assert [spec.key_for(i) for i in range(3)] == ["/k1", "/k2", "/k2"]
    assert spec.known_hosts == "/kh" and spec.strict
    assert spec.route == "a@b:22 -> c@d:22 -> e@f:22"
    assert tunnel_spec({}) is None
    assert not tunnel_spec({"ssh.tunnel.route": "x", "ssh.tunnel.strict.host.key.checking": "no"}).strict


def test_config_remotes_are_parsed_and_validated(tmp_path):
    from hmsproxy.app import load_config
    from hmsproxy.config import ConfigError

    base = "primary-meta-store: {name: primary, remote-meta-store-uris: 'thrift://127.0.0.1:1'}\nremotes:\n  creators: [alice]\n"
    good = tmp_path / "good.yml"
    good.write_text(
        base
        + (
            "  databases:\n"
            "    - {name: Sales_EU, remote-database: sales, uris: 'thrift://hms-eu:9083'}\n"
            "  tables:\n"
            "    - database: shop\n      name: orders_eu\n      remote-table: orders\n"
            "      properties: {hive.metastore.uris: 'thrift://hms-eu:9083', ssh.tunnel.route: 'u@b'}\n"
        )
    )
    remotes = load_config(good).sections["remotes"]
    assert remotes.creators == ("alice",)
    (db,) = remotes.databases
    assert (db.local_name, db.remote_name, db.factory, db.properties) == (
        "sales_eu",
        "sales",
        "thrift",
        {"hive.metastore.uris": "thrift://hms-eu:9083"},
    )
    (t,) = remotes.tables
    assert (t.local_db, t.local_name, t.remote_db, t.remote_name) == ("shop", "orders_eu", "shop", "orders")
    assert t.properties["ssh.tunnel.route"] == "u@b"
    bad = tmp_path / "bad.yml"
    bad.write_text(base + "  databases:\n    - {name: x, uris: 'http://nope'}\n")
    with pytest.raises(ConfigError, match=r"remotes\.databases\[0\].*hive.metastore.uris"):
        load_config(bad)
    twice = tmp_path / "twice.yml"
    twice.write_text(base + "  databases:\n    - {name: x, uris: 'thrift://h:1'}\n    - {name: X, uris: 'thrift://h:2'}\n")
    with pytest.raises(ConfigError, match="defined twice"):
        load_config(twice)


def test_config_remotes_win_over_the_stores_and_are_marked(remotes_repo):
    from hmsproxy.features.remotes.config import RemotesConfig
    from hmsproxy.features.remotes.model import RemoteDatabase, RemoteTable

    remotes_repo.add_database(RemoteDatabase("a", "from_store", "thrift", {}))
    remotes_repo.add_database(RemoteDatabase("b", "b", "thrift", {}))
    static = RemotesConfig(None, (RemoteDatabase("a", "from_config"),), (RemoteTable("shop", "t", "sales", "t"),))
    registry = RemotesCache(remotes_repo, check_interval_s=0)
    view = registry.view(static)
    assert view.database("a").remote_name == "from_config" and view.database("b").remote_name == "b"
    assert view.static_databases == {"a"} and view.static_tables == {("shop", "t")}
    assert [t.local_name for t in view.tables_of("shop")] == ["t"]
    assert registry.view(static) is view  # cached while neither changes
    assert registry.view(None).database("a").remote_name == "from_store"


def test_a_tunnel_connection_ends_quietly_when_its_ssh_connection_went_first():
    """Closing the channel of an SSH connection already gone raises EOFError in paramiko; the
    forwarding thread ends anyway and closes the client's socket (CI saw the thread die of it)."""
    import socket

    from hmsproxy.features.remotes.tunnels import Tunnel, TunnelSpec

    class DeadChannel:
        """A channel whose SSH connection is gone: readable at EOF, and close() raises as paramiko's does."""

        def __init__(self):
            self._eof, self._writer = socket.socketpair()
            self._writer.close()

        def fileno(self):
            return self._eof.fileno()

        def recv(self, n):
            return self._eof.recv(n)

        def close(self):
            self._eof.close()
            raise EOFError()

    class Transport:
        def open_channel(self, *args, **kwargs):
            return DeadChannel()

    class Client:
        def get_transport(self):
            return Transport()

    tunnel = Tunnel(TunnelSpec(parse_route("u@bastion"), (), None, False), "hms", 9083, 1.0)
    tunnel._clients = [Client()]
    conn, client_side = socket.socketpair()
    client_side.settimeout(5)
    tunnel._serve(conn, ("127.0.0.1", 1))  # returns, not raises
    assert client_side.recv(1) == b""  # the client's connection was closed
    client_side.close()


def test_links_to_one_catalog_with_other_credentials_are_other_targets():
    props = {"uri": "http://127.0.0.1:8181", "warehouse": "prod", "credential": "a:1"}
    first, again = Targets.key("iceberg-rest", props), Targets.key("iceberg-rest", dict(props))
    other = Targets.key("iceberg-rest", {**props, "credential": "b:2"})
    assert first == again and first != other
    assert first.startswith("remote:iceberg-rest:") and "a:1" not in first and "b:2" not in other

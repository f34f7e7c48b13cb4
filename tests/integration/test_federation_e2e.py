"""Federation rules through real metastores, end to end (the unit tests only route names).

Uses the session's proxy and metastores (tests/support/fixtures.py): the
federated metastore `waggle` (prefix `waggle_`) holds `sales` (write white list)
and `hr`; each test swaps in the config it needs with `proxy_config`.
"""

from __future__ import annotations

import dataclasses
import signal
import subprocess
import uuid

import pytest
import thriftpy2.rpc

from hmsproxy.config.model import AccessControlType as ACT
from hmsproxy.dev.ports import free_port
from hmsproxy.protocol import idl
from tests.integration.test_cli import HMSPROXY, stop
from tests.integration.test_proxy_calls import make_table
from tests.integration.test_readme_examples import wait_for_output
from tests.support.federation import prefixed_config, sqlite_store
from tests.support.served import served

hive = idl.hive


def uid() -> str:
    return uuid.uuid4().hex[:8]


def with_federated(**changes):
    """A `proxy_config` maker: the default federation with the federated metastore changed."""
    return lambda base: dataclasses.replace(base, federated=(dataclasses.replace(base.federated[0], **changes),))


def with_primary(**changes):
    return lambda base: dataclasses.replace(base, primary=dataclasses.replace(base.primary, **changes))


@pytest.fixture
def sales_table(metastores, federated_dbs):
    """A fresh table in `sales` on the federated metastore, made directly there."""
    name = f"e2e_{uid()}"
    client = metastores[1].client()
    try:
        client.create_table(make_table("sales", name))
        yield name
        if name in client.get_all_tables("sales"):
            client.drop_table("sales", name, True)
    finally:
        client.close()


def reported_version(metastore) -> str:
    """What the metastore itself answers to fb303 getVersion (Hive 2.3 says "3.0")."""
    client = metastore.client()
    try:
        return client.getVersion()
    finally:
        client.close()


def backend_tables(metastore, db: str) -> list[str]:
    client = metastore.client()
    try:
        return client.get_all_tables(db)
    finally:
        client.close()


# -- database-name-mapping -------------------------------------------------------------


def test_a_mapped_database_is_reachable_under_both_names(proxy_config, proxy_client, sales_table):
    with proxy_config(with_federated(database_name_mapping={"sales": "sales_eu"})):
        listed = proxy_client.get_all_databases()
        assert "waggle_sales_eu" in listed
        assert "waggle_sales" in listed  # like Waggle Dance, the original name keeps working
        assert proxy_client.get_databases("waggle_sales_e*") == ["waggle_sales_eu"]
        for name in ("waggle_sales_eu", "waggle_sales"):
            # Answers carry the name the client used (#45; tests/integration/test_aliases_waggle_dance.py).
            assert proxy_client.get_database(name).name == name
            table = proxy_client.get_table(name, sales_table)
            assert (table.dbName, table.tableName) == (name, sales_table)
            assert sales_table in proxy_client.get_all_tables(name)
        metas = proxy_client.get_table_meta("waggle_sales_eu", sales_table, None)
        assert [(m.dbName, m.tableName) for m in metas] == [("waggle_sales_eu", sales_table)]
    # Without the mapping the alias is gone again.
    assert "waggle_sales_eu" not in proxy_client.get_all_databases()


# -- READ_ONLY ---------------------------------------------------------------------------


def test_read_only_refuses_writes_naming_database_and_rule(proxy_config, proxy_client, metastores, sales_table):
    rule = "metastore 'waggle' has access-control-type READ_ONLY"
    with proxy_config(with_federated(access_control_type=ACT.READ_ONLY)):
        with pytest.raises(hive.MetaException) as err:
            proxy_client.create_table(make_table("waggle_sales", f"new_{uid()}"))
        assert err.value.message == f"hmsproxy: writes to database 'waggle_sales' are not allowed: {rule}"
        with pytest.raises(hive.MetaException) as err:
            proxy_client.drop_table("waggle_sales", sales_table, True)
        assert err.value.message == f"hmsproxy: writes to database 'waggle_sales' are not allowed: {rule}"
        # Reads still work, and the connection survives the refusals.
        assert proxy_client.get_table("waggle_sales", sales_table).tableName == sales_table
    # Nothing reached the backend.
    tables = backend_tables(metastores[1], "sales")
    assert sales_table in tables and not [t for t in tables if t.startswith("new_")]


# -- write white lists ---------------------------------------------------------------------


def test_primary_create_on_whitelist(proxy_config, proxy_client, metastores):
    listed_db, new_db, table = f"e2e_wl_{uid()}", f"e2e_new_{uid()}", f"t_{uid()}"
    direct = metastores[0].client()
    direct.create_database(hive.Database(name=listed_db, description=None, locationUri=None, parameters={}))
    try:
        with proxy_config(
            with_primary(
                access_control_type=ACT.READ_AND_WRITE_AND_CREATE_ON_DATABASE_WHITELIST,
                writable_database_white_list=("e2e_wl_.*",),
            )
        ):
            # A whitelisted database is writable.
            proxy_client.create_table(make_table(listed_db, table))
            assert table in direct.get_all_tables(listed_db)
            # Creating a database is allowed, and the new database is writable (as in Waggle Dance).
            proxy_client.create_database(hive.Database(name=new_db, description=None, locationUri=None, parameters={}))
            proxy_client.create_table(make_table(new_db, table))
            assert table in direct.get_all_tables(new_db)
            proxy_client.drop_table(new_db, table, True)
            # Any other database is not.
            with pytest.raises(hive.MetaException) as err:
                proxy_client.create_table(make_table("default", table))
            assert err.value.message == (
                "hmsproxy: writes to database 'default' are not allowed: it is not in writable-database-white-list "
                "of metastore 'primary' (READ_AND_WRITE_AND_CREATE_ON_DATABASE_WHITELIST)"
            )
            assert table not in direct.get_all_tables("default")
    finally:
        for db in (listed_db, new_db):
            if db in direct.get_all_databases():
                direct.drop_database(db, True, True)
        direct.close()


def test_federated_write_whitelist_allows_only_listed_databases(proxy_client, metastores, federated_dbs):
    # The default federation: waggle is READ_AND_WRITE_ON_DATABASE_WHITELIST with [sales].
    table = f"e2e_{uid()}"
    proxy_client.create_table(make_table("waggle_sales", table))
    try:
        assert table in backend_tables(metastores[1], "sales")
        with pytest.raises(hive.MetaException) as err:
            proxy_client.create_table(make_table("waggle_hr", table))
        assert err.value.message == (
            "hmsproxy: writes to database 'waggle_hr' are not allowed: it is not in writable-database-white-list "
            "of metastore 'waggle' (READ_AND_WRITE_ON_DATABASE_WHITELIST)"
        )
        assert table not in backend_tables(metastores[1], "hr")
        # Creating databases is never allowed on a federated metastore.
        with pytest.raises(hive.MetaException, match="creating database 'waggle_new' is not allowed"):
            proxy_client.create_database(hive.Database(name="waggle_new", description=None, locationUri=None, parameters={}))
    finally:
        proxy_client.drop_table("waggle_sales", table, True)


# -- hmsproxy status ---------------------------------------------------------------------------


def test_status_prints_the_federation_and_each_backends_state_and_version(metastores, federated_dbs, tmp_path):
    port, dead_port = free_port(), free_port()  # nothing listens on dead_port
    config = tmp_path / "hmsproxy.yml"
    config.write_text(
        f"server: {{host: 127.0.0.1, port: {port}, connect-timeout-s: 2, fanout-timeout-ms: 60000}}\n"
        f"store: {{url: 'sqlite:///{tmp_path}/hmsproxy.db'}}\n"
        "database-resolution: PREFIXED\n"
        "primary-meta-store:\n"
        "  name: primary\n"
        f"  remote-meta-store-uris: {metastores[0].uri}\n"
        "  access-control-type: READ_AND_WRITE_AND_CREATE\n"
        "  hive-version: '2.3'\n"  # configured: shown as is; waggle's is probed
        "federated-meta-stores:\n"
        "  - name: waggle\n"
        f"    remote-meta-store-uris: {metastores[1].uri}\n"
        "  - name: gone\n"
        f"    remote-meta-store-uris: thrift://127.0.0.1:{dead_port}\n"
    )
    log = tmp_path / "serve.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [*HMSPROXY, "serve", "--config", str(config), "--pid-file", str(tmp_path / "hmsproxy.pid")],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=tmp_path,
            start_new_session=True,
        )
    try:
        wait_for_output(proc, log, f"serving thrift://127.0.0.1:{port}", 60)
        client = thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", port, timeout=30000)
        try:  # one fan-out call contacts every backend
            assert "waggle_sales" in client.get_all_databases()
        finally:
            client.close()
        done = subprocess.run([*HMSPROXY, "status", "--uri", f"thrift://127.0.0.1:{port}"], capture_output=True, text=True, timeout=60)
    finally:
        assert stop(proc, signal.SIGTERM) == 0
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "PREFIXED" in out
    assert metastores[0].uri in out and metastores[1].uri in out and f"127.0.0.1:{dead_port}" in out
    lines = {line.strip().split(":", 1)[0]: line.strip() for line in out.split("backends:", 1)[1].splitlines() if line.strip()}
    assert lines["primary"] == "primary: up, hive 2.3", out
    # Not configured: getVersion's "3.0" is no version (Hive 2.3 says it too); it has no catalogs.
    assert reported_version(metastores[1]) == "3.0"
    assert lines["waggle"] == 'waggle: up, hive before 3, e.g. 2.3 (getVersion says "3.0"; it has no catalogs)', out
    assert lines["gone"].startswith("gone: DOWN"), out
    assert "last error" in lines["gone"]


def test_status_never_states_a_hive_version_getversion_does_not_tell(metastores, newer_metastores, tmp_path):
    """Hive 2.3 and 3.1 both answer getVersion with "3.0": with no hive-version configured, status
    says what the proxy could tell (catalogs or not), never "hive 3.0" as a fact."""
    h31 = newer_metastores["3.1"]
    config = dataclasses.replace(prefixed_config(metastores[0].uri, h31.uri), store=sqlite_store(tmp_path))
    with served(config) as proxy:
        client = thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", proxy.port, timeout=30000)
        try:  # one fan-out call contacts every backend
            client.get_all_databases()
        finally:
            client.close()
        done = subprocess.run([*HMSPROXY, "status", "--uri", proxy.uri], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert (reported_version(metastores[0]), reported_version(h31)) == ("3.0", "3.0")
    backends = done.stdout.split("backends:", 1)[1]
    assert 'primary: up, hive before 3, e.g. 2.3 (getVersion says "3.0"; it has no catalogs)' in backends, done.stdout
    assert 'waggle: up, hive 3 or later (getVersion says "3.0"; it has catalogs)' in backends, done.stdout

"""Real Hive 3.1 and 4.0 metastores (jars fetched with Maven once), started by the same LocalMetastore as 2.3.

Without network (Maven cannot fetch) these tests skip, except in CI (CI=true), where they fail.
"""

from __future__ import annotations

import copy
import signal
import subprocess
from urllib.parse import urlparse

import pytest
import thriftpy2.rpc
from thriftpy2.thrift import TApplicationException

from hmsproxy.dev import maven
from hmsproxy.dev.metastore import LocalMetastore
from hmsproxy.dev.ports import free_port
from hmsproxy.dev.versions import hive_version
from hmsproxy.protocol import idl
from hmsproxy.testing import table
from tests.integration.test_cli import start_dev_hms, stop, wait_for_line
from tests.support.hive_jars import require_hive

hive = idl.hive

#: What getVersion answers: Hive 3.1's handler returns a hard-coded "3.0".
GET_VERSION = {"3.1": "3.0", "4.0": "4.0.1"}


@pytest.fixture(scope="module", params=sorted(GET_VERSION))
def metastore(request, tmp_path_factory):
    version = request.param
    require_hive(version)
    ms = LocalMetastore(free_port(), tmp_path_factory.mktemp(f"hive-{version}"), hive_version=version, name=f"hive-{version}")
    try:
        ms.start()
        yield ms
    finally:
        ms.stop()


@pytest.fixture
def client(metastore):
    c = thriftpy2.rpc.make_client(idl.HmsProxy, metastore.host, metastore.port, timeout=60000)
    try:
        yield c
    finally:
        c.close()


def get_table(client, version: str, db: str, name: str):
    # Hive 4.0.1 removed get_table (see test_get_table_is_gone_in_4); get_table_req works on both.
    if version == "4.0":
        return client.get_table_req(hive.GetTableRequest(dbName=db, tblName=name)).table
    return client.get_table(db, name)


def partitioned_table(db: str, name: str):
    return table(db, name, partition_keys=(("ds", "string"),), parameters={"purpose": "hive-versions"}, owner="tester")


def test_unknown_version_is_refused_before_anything_starts(tmp_path):
    with pytest.raises(ValueError, match="unknown Hive version '9.9'"):
        LocalMetastore(free_port(), tmp_path, hive_version="9.9")
    assert not list(tmp_path.iterdir())


def test_reports_its_version(metastore, client):
    assert client.getVersion() == GET_VERSION[metastore.hive_version]


def test_database_partitioned_table_and_partition(metastore, client):
    version = metastore.hive_version
    db = f"sales_{version.replace('.', '_')}"
    client.create_database(hive.Database(name=db, description="hive versions", locationUri=None, parameters={"k": "v"}))
    client.create_table(partitioned_table(db, "orders"))
    table = get_table(client, version, db, "orders")
    sd = copy.deepcopy(table.sd)
    sd.location = f"{table.sd.location}/ds=2026-11-01"
    client.add_partition(hive.Partition(values=["2026-11-01"], dbName=db, tableName="orders", sd=sd, parameters={}))

    assert db in client.get_all_databases()
    assert client.get_database(db).parameters == {"k": "v"}
    assert client.get_all_tables(db) == ["orders"]
    table = get_table(client, version, db, "orders")
    assert [k.name for k in table.partitionKeys] == ["ds"]
    assert table.parameters["purpose"] == "hive-versions"
    assert urlparse(table.sd.location).path == str(metastore.warehouse_dir / f"{db}.db" / "orders")
    assert client.get_partition_names(db, "orders", -1) == ["ds=2026-11-01"]
    assert client.get_partition(db, "orders", ["2026-11-01"]).sd.location.endswith("/orders/ds=2026-11-01")


def open_txn_ids(client) -> set[int]:
    # get_open_txns_info, not get_open_txns: Hive 3+ answers the latter's open_txns as a
    # list<i64> where our (2.3) IDL says set<i64>, so thriftpy2 skips the field (None).
    return {t.id for t in client.get_open_txns_info().open_txns if t.state == hive.TxnState.OPEN}


def test_open_and_abort_transactions(metastore, client):
    opened = client.open_txns(hive.OpenTxnRequest(num_txns=2, user="tester", hostname="localhost")).txn_ids
    assert len(opened) == 2
    assert set(opened) <= open_txn_ids(client)
    client.abort_txns(hive.AbortTxnsRequest(txn_ids=opened))
    assert not set(opened) & open_txn_ids(client)


def test_get_table_is_gone_in_4(metastore, client):
    client.create_database(hive.Database(name="gone", description=None, locationUri=None, parameters={}))
    client.create_table(partitioned_table("gone", "t"))
    if metastore.hive_version == "4.0":
        with pytest.raises(TApplicationException, match="Invalid method name: 'get_table'"):
            client.get_table("gone", "t")
    else:
        assert client.get_table("gone", "t").tableName == "t"


def test_restart_is_offline_and_keeps_state(metastore):
    version = metastore.hive_version
    # The stamp says the download is complete, so Maven is not run at all.
    assert maven.fetch(version, hive_version(version).maven_goals, mvn="/nonexistent/mvn") == maven.hive_home(version)
    metastore.restart()
    c = metastore.client()
    try:
        assert f"sales_{version.replace('.', '_')}" in c.get_all_databases()
    finally:
        c.close()
    runs = metastore.log_path.read_text().count("schema tool =====")
    assert runs == (1 if version == "4.0" else 0)  # 4.0's schema is made once, on the new database


def test_dev_hms_cli_runs_hive_3_1(tmp_path):
    require_hive("3.1")
    port, state = free_port(), tmp_path / "hms31"
    proc = start_dev_hms("--hive", "3.1", "--port", str(port), "--state-dir", str(state))
    try:
        wait_for_line(proc, f"Hive 3.1 metastore ready at thrift://127.0.0.1:{port}", 180)
        client = thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", port, timeout=30000)
        try:
            assert client.getVersion() == GET_VERSION["3.1"]
        finally:
            client.close()
    finally:
        assert stop(proc, signal.SIGTERM, timeout_s=60) == 0
    leftover = subprocess.run(["pgrep", "-f", str(state)], capture_output=True, text=True).stdout.strip()
    assert leftover == ""

"""The federation scenario under Kerberos: a Kerberized proxy federating two Kerberized Hive 2.3
metastores (the primary and `waggle_`-prefixed one, PREFIXED resolution), used by a real SparkSession
logged in from a keytab (its own process, as test_kerberos_inbound.py's Spark test).

Spark lists both metastores' databases, creates, inserts into and reads a table on the primary, and
reads a table of the federated metastore through its prefix; every audit line of its calls names
alice, the short name of its principal. One pair of metastore JVMs for the module.
"""

from __future__ import annotations

import dataclasses
import json
import uuid

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hmsproxy.clients.proxy import HmsProxyClient
from hmsproxy.config.model import AuditConfig, MetastoreSaslConfig, ServerSaslConfig
from hmsproxy.dev.kerberos import MetastoreKerberos
from hmsproxy.protocol import idl
from hmsproxy.testing.builders import parquet_table
from hmsproxy.upstream.kerberos import GssapiSettings, KerberosLogin
from hmsproxy.upstream.wire import ThriftConnection
from tests.integration.test_kerberos_inbound import HIVE, PROXY, _audit, realm, run_spark_job  # noqa: F401 - fixture
from tests.support.federation import prefixed_config
from tests.support.served import served

hive = idl.hive


@pytest.fixture(scope="module")
def pair(realm, metastore_factory):  # noqa: F811 - the imported fixture
    """Two Kerberized metastores, hive/localhost@REALM each; the proxy's keytab reaches both."""
    client = GssapiSettings(KerberosLogin(realm.principal(PROXY), str(realm.principals[PROXY])), f"hive/_HOST@{realm.realm}")
    kerberos = MetastoreKerberos(realm.krb5_conf, realm.principal(HIVE), realm.principals[HIVE], client)
    primary, federated = metastore_factory(2, name="kerberized_federation", host="localhost", kerberos=kerberos)
    yield primary, federated, client
    primary.stop()
    federated.stop()


@pytest.fixture(scope="module")
def federated_table(pair, tmp_path_factory):
    """fedsrc_<hex>.orders on the federated metastore (created there directly, as the proxy's
    principal), two rows in a Parquet file: `waggle_fedsrc_<hex>.orders` through the proxy."""
    _, federated, client = pair
    db = f"fedsrc_{uuid.uuid4().hex[:8]}"
    root = tmp_path_factory.mktemp("federated")
    location = root / db / "orders"
    location.mkdir(parents=True)
    pq.write_table(pa.table({"id": pa.array([10, 20], pa.int64()), "name": ["x", "y"]}), location / "part-0.parquet")
    conn = ThriftConnection("federated", (federated.uri,), connect_timeout_s=30, call_timeout_s=120, sasl=client)
    try:
        database = hive.Database(name=db, locationUri=(root / db).as_uri(), parameters={})
        assert conn.call("create_database", idl.HmsProxy.create_database_args(database=database)).o1 is None
        table = parquet_table(db, "orders", location.as_uri(), columns=(("id", "bigint"), ("name", "string")))
        assert conn.call("create_table", idl.HmsProxy.create_table_args(tbl=table)).o1 is None
    finally:
        conn.close()
    return db


@pytest.fixture(scope="module")
def federating_proxy(realm, pair, tmp_path_factory):  # noqa: F811
    primary, federated, _ = pair
    audit_file = tmp_path_factory.mktemp("audit") / "audit.log"
    sasl = MetastoreSaslConfig(principal=f"hive/_HOST@{realm.realm}")
    base = prefixed_config(primary.uri, federated.uri)
    identity = ServerSaslConfig(enabled=True, principal=realm.principal(PROXY), keytab=str(realm.principals[PROXY]))
    config = dataclasses.replace(
        base,
        server=dataclasses.replace(base.server, sasl=identity),
        primary=dataclasses.replace(base.primary, sasl=sasl),
        federated=tuple(dataclasses.replace(fed, sasl=sasl) for fed in base.federated),
        audit=AuditConfig(enabled=True, file=str(audit_file)),
    )
    with served(config) as server:
        yield server, audit_file


@pytest.mark.spark
def test_spark_from_a_keytab_runs_the_federation_scenario_through_the_kerberized_proxy(
    federating_proxy,
    federated_table,
    pair,
    realm,  # noqa: F811
    kerberos_env,
    tmp_path,
):
    server, audit_file = federating_proxy
    db = f"spark_fed_{uuid.uuid4().hex[:8]}"
    uri = f"thrift://localhost:{server.port}"
    # A remote table on the Kerberized metastore, made by alice with Hive's own Kerberos keys (the
    # proxy reaches it with its keytab, and checks the target is there before making the link).
    remote = f"default.kerberized_{uuid.uuid4().hex[:8]}"
    realm.kinit("alice", kerberos_env)
    principal = f"hive/_HOST@{realm.realm}"
    link = (
        f"CREATE REMOTE TABLE {remote} CONNECTED TO {federated_table}.orders WITH TBLPROPERTIES ("
        f"'hive.metastore.uris'='{pair[1].uri}', 'hive.metastore.sasl.enabled'='true', 'hive.metastore.kerberos.principal'='{principal}')"
    )
    with HmsProxyClient(uri, sasl_principal=realm.principal(PROXY)) as client:
        client.execute(link)
    try:
        answer = run_spark_job(
            realm,
            tmp_path,
            "tests.support.kerberos_federation_job",
            uri,
            "alice",
            str(tmp_path / "warehouse"),
            db,
            f"waggle_{federated_table}.orders",
            remote,
        )
    finally:
        with HmsProxyClient(uri, sasl_principal=realm.principal(PROXY)) as client:
            client.execute(f"DROP REMOTE TABLE {remote}")
    assert {"default", "waggle_default", f"waggle_{federated_table}"} <= set(answer["databases"]), answer["databases"]
    assert answer["rows"] == [[1, "a"], [2, "b"]]
    assert answer["federated_rows"] == [[10, "x"], [20, "y"]]
    assert answer["remote_rows"] == [[10, "x"], [20, "y"]]  # the remote table reads the same files
    lines = [line for line in _audit(audit_file) if db in json.dumps(line) or federated_table in json.dumps(line)]
    methods = {line["method"] for line in lines}
    assert {"create_database", "get_table", "drop_database"} <= methods, methods
    assert any(m.startswith("create_table") for m in methods), methods
    assert {line["user"] for line in lines} == {"alice"}, lines

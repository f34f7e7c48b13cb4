"""The proxy in front of a Kerberized Hive 2.3 metastore (issue #29, outbound SASL).

Real parts only: an MIT KDC on loopback (tests/support/kdc.py), a Hive 2.3 metastore from
pyspark's jars that speaks only SASL GSSAPI (dev/kerberos.py), the proxy logging in from its own
keytab, and a plain Python Thrift client in front of the proxy. A second entry for the same
metastore with a principal the realm lacks shows how a failed authentication is reported: as a
metastore that is down, with the principal and Kerberos' reason, while the good one serves on.
"""

from __future__ import annotations

import dataclasses
import uuid

import pytest
import thriftpy2.rpc

from hmsproxy.config.model import AccessControlType, Config, DatabaseResolution, MetastoreConfig, MetastoreSaslConfig, ServerSaslConfig
from hmsproxy.dev.kerberos import MetastoreKerberos
from hmsproxy.protocol import idl
from hmsproxy.upstream.kerberos import GssapiSettings, KerberosLogin
from tests.support.federation import prefixed_config
from tests.support.ops import handler_metric
from tests.support.served import served

HIVE = "hive/localhost"  # the metastore's principal (a thrift://localhost URI makes _HOST localhost)
PROXY = "hmsproxy/localhost"  # the proxy's own


@pytest.fixture(scope="module")
def realm(kdc):
    kdc.add_principal(HIVE)
    kdc.add_principal(PROXY)
    return kdc


@pytest.fixture(scope="module", params=["auth", "auth-int", "auth-conf"])
def qop(request) -> str:
    """The SASL security layer: the metastore offers only it (hadoop.rpc.protection), the proxy asks for it."""
    return request.param


@pytest.fixture(scope="module")
def kerberized(realm, qop, metastore_factory):
    """One Kerberized Hive 2.3 metastore per QOP, one at a time (its readiness check logs in as the proxy)."""
    client = GssapiSettings(KerberosLogin(realm.principal(PROXY), str(realm.principals[PROXY])), f"hive/_HOST@{realm.realm}", qop)
    kerberos = MetastoreKerberos(realm.krb5_conf, realm.principal(HIVE), realm.principals[HIVE], client, qop)
    (hms,) = metastore_factory(1, name=f"kerberized_{qop.replace('-', '_')}", host="localhost", kerberos=kerberos)
    yield hms
    hms.stop()


def _sasl(realm, qop: str, principal: str = "hive/_HOST") -> MetastoreSaslConfig:
    return MetastoreSaslConfig(principal=f"{principal}@{realm.realm}", qop=qop)


@pytest.fixture(scope="module")
def kerberos_config(realm, qop, kerberized) -> Config:
    """The proxy: primary = the Kerberized metastore; `wrong` = the same metastore under a principal the realm lacks."""
    base = prefixed_config(kerberized.uri, kerberized.uri)
    primary = dataclasses.replace(base.primary, sasl=_sasl(realm, qop))
    wrong = MetastoreConfig(
        "wrong",
        (kerberized.uri,),
        database_prefix="wrong_",
        access_control_type=AccessControlType.READ_ONLY,
        sasl=_sasl(realm, qop, "nosuch/_HOST"),
    )
    server = dataclasses.replace(base.server, sasl=ServerSaslConfig(principal=realm.principal(PROXY), keytab=str(realm.principals[PROXY])))
    return Config(server, DatabaseResolution.PREFIXED, primary, (wrong,), store=base.store)


@pytest.fixture(scope="module")
def proxy_server(kerberos_config):
    with served(kerberos_config) as server:
        yield server


@pytest.fixture
def client(proxy_server):
    c = thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", proxy_server.port, timeout=120_000)
    yield c
    c.close()


def test_the_metastore_refuses_plain_thrift(kerberized):
    plain = kerberized.client(timeout_s=20)
    try:
        with pytest.raises(Exception):  # noqa: B017 - the metastore drops the connection: EOF or reset
            plain.get_all_databases()
    finally:
        plain.close()


def test_create_and_read_through_the_proxy(client, proxy_server, kerberized, tmp_path):
    db = f"krb_{uuid.uuid4().hex[:8]}"
    client.create_database(idl.hive.Database(name=db, description="through SASL", locationUri=(tmp_path / db).as_uri(), parameters={}))
    cols = [idl.hive.FieldSchema(name="id", type="bigint", comment=None)]
    sd = idl.hive.StorageDescriptor(
        cols=cols,
        location=(tmp_path / db / "t").as_uri(),
        inputFormat="org.apache.hadoop.mapred.TextInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
        serdeInfo=idl.hive.SerDeInfo(serializationLib="org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe", parameters={}),
        parameters={},
    )
    client.create_table(
        idl.hive.Table(tableName="t", dbName=db, owner="alice", sd=sd, partitionKeys=[], parameters={}, tableType="MANAGED_TABLE")
    )
    relayed_before = proxy_server.handler.backends.state("primary").relayed
    table = client.get_table(db, "t")
    assert (table.dbName, table.tableName, [c.name for c in table.sd.cols]) == (db, "t", ["id"])
    assert client.get_table(db, "t").sd.location == table.sd.location  # the same answer again (a shortcut may serve it)
    assert db in client.get_all_databases()
    # get_table went the relay's way: read through the SASL frame layer as bytes, not decoded.
    assert proxy_server.handler.backends.state("primary").relayed > relayed_before
    # And the metastore has it: asked directly, over the proxy's own SASL connection code.
    direct = kerberized._readiness_client(30)
    try:
        assert db in direct.get_all_databases()
    finally:
        direct.close()
    client.drop_database(db, True, True)


def test_readiness_asks_the_kerberized_primary_over_sasl(proxy_server):
    from hmsproxy.ops.readiness import readiness_of

    ready, results = readiness_of(proxy_server.handler).run()
    primary = next(r for r in results if r.name == "primary")
    assert ready and primary.ok, results


def test_a_wrong_principal_is_a_metastore_down_named_with_its_cause(client, proxy_server, realm):
    with pytest.raises(idl.hive.MetaException) as raised:
        client.get_all_tables("wrong_default")
    message = raised.value.message
    assert f"nosuch/localhost@{realm.realm}" in message
    assert "not found" in message.lower()  # Kerberos' reason: the server principal is unknown to the KDC
    state = proxy_server.handler.backends.state("wrong")
    assert state.up is False
    assert handler_metric(proxy_server.handler, "hmsproxy_backend_up", backend="wrong") == 0
    # The proxy serves the good metastore on, on the same client connection.
    assert "default" in client.get_all_databases()
    assert handler_metric(proxy_server.handler, "hmsproxy_backend_up", backend="primary") == 1


def test_a_security_layer_the_metastore_does_not_offer_is_named(realm, qop, kerberized):
    from hmsproxy.upstream.wire import BackendUnavailable, ThriftConnection

    other = "auth-conf" if qop != "auth-conf" else "auth"
    sasl = GssapiSettings(KerberosLogin(realm.principal(PROXY), str(realm.principals[PROXY])), f"hive/_HOST@{realm.realm}", other)
    conn = ThriftConnection("kerberized", (kerberized.uri,), connect_timeout_s=10, call_timeout_s=30, sasl=sasl)
    with pytest.raises(BackendUnavailable) as raised:
        conn.call("get_all_databases", idl.HmsProxy.get_all_databases_args())
    assert f"offers QOP {qop}, not {other}" in raised.value.reason


def test_a_missing_keytab_is_named(realm, kerberized, tmp_path):
    from hmsproxy.upstream.wire import BackendUnavailable, ThriftConnection

    missing = tmp_path / "gone.keytab"
    sasl = GssapiSettings(KerberosLogin(realm.principal(PROXY), str(missing)), f"hive/_HOST@{realm.realm}")
    conn = ThriftConnection("kerberized", (kerberized.uri,), connect_timeout_s=10, call_timeout_s=30, sasl=sasl)
    with pytest.raises(BackendUnavailable) as raised:
        conn.call("get_all_databases", idl.HmsProxy.get_all_databases_args())
    assert str(missing) in raised.value.reason
    assert realm.principal(PROXY) in raised.value.reason

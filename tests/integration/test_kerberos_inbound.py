"""Kerberos on the proxy's own port (server.sasl.enabled) in front of a Kerberized Hive 2.3 metastore.

The client is an implementation independent of the proxy's: thriftpy2's SASL transport with
pure-sasl's GSSAPI (over the `kerberos` binding), logged in with `kinit -kt` into its own ticket
cache. The proxy accepts it as alice, whatever set_ugi then claims: the audit line says alice. A
plain Thrift client, and a SASL client without a ticket, get no answer; the proxy says why in its
log. The proxy's own client code (wire.ThriftConnection with sasl) gets a relayed get_table through
both SASL layers.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import struct
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import thriftpy2.rpc
from thriftpy2.protocol.binary import TBinaryProtocol
from thriftpy2.thrift import TClient
from thriftpy2.transport import TSocket

from hmsproxy.config.auth_to_local import parse_rule
from hmsproxy.config.model import AuditConfig, Config, DatabaseResolution, MetastoreSaslConfig, ServerSaslConfig, StoreConfig, TlsConfig
from hmsproxy.dev.kerberos import MetastoreKerberos
from hmsproxy.protocol import idl
from hmsproxy.upstream.kerberos import GssapiSettings, KerberosLogin
from hmsproxy.upstream.wire import BackendUnavailable, ThriftConnection
from tests.integration.test_cli import HMSPROXY, own_pid_file, stop, wait_for_line
from tests.support.federation import prefixed_config
from tests.support.served import served

HIVE = "hive/localhost"
PROXY = "hmsproxy/localhost"


@pytest.fixture(scope="module")
def realm(kdc):
    for name in (HIVE, PROXY, "alice", "carol"):
        kdc.add_principal(name)
    return kdc


@pytest.fixture(scope="module")
def kerberized(realm, metastore_factory):
    client = GssapiSettings(KerberosLogin(realm.principal(PROXY), str(realm.principals[PROXY])), f"hive/_HOST@{realm.realm}")
    kerberos = MetastoreKerberos(realm.krb5_conf, realm.principal(HIVE), realm.principals[HIVE], client)
    (hms,) = metastore_factory(1, name="kerberized_inbound", host="localhost", kerberos=kerberos)
    yield hms
    hms.stop()


@pytest.fixture(scope="module")
def audit_file(tmp_path_factory):
    return tmp_path_factory.mktemp("audit") / "audit.log"


def _serve(
    realm,
    kerberized,
    audit_file,
    qop: str = "auth",
    tls: TlsConfig | None = None,
    auth_to_local: tuple[str, ...] = (),
    store_url: str | None = None,
    principal: str | None = None,
    **token_limits,
):
    """The proxy, its port Kerberos-only (`qop`); carol may act for others (impersonation).
    `store_url`: a store of the test's (proxies sharing tokens); `principal`: server.sasl.principal
    (default hmsproxy/localhost); `token_limits`: ServerSaslConfig's token_* fields."""
    base = prefixed_config(kerberized.uri, kerberized.uri)
    primary = dataclasses.replace(base.primary, sasl=MetastoreSaslConfig(principal=f"hive/_HOST@{realm.realm}"))
    identity = ServerSaslConfig(
        enabled=True,
        principal=principal or realm.principal(PROXY),
        keytab=str(realm.principals[PROXY]),
        qop=qop,
        impersonation=("carol",),
        auth_to_local=tuple(parse_rule(rule) for rule in auth_to_local),
        **token_limits,
    )
    server_config = dataclasses.replace(base.server, sasl=identity)
    config = Config(
        server_config,
        DatabaseResolution.PREFIXED,
        primary,
        (),
        store=StoreConfig(store_url) if store_url else base.store,
        audit=AuditConfig(enabled=True, file=str(audit_file)),
    )
    return served(config, tls=tls)


@pytest.fixture(scope="module")
def proxy_server(realm, kerberized, audit_file):
    with _serve(realm, kerberized, audit_file) as server:
        yield server


@pytest.fixture
def encrypting_proxy(realm, kerberized, tmp_path):
    """A proxy whose port offers QOP auth-conf only: every frame encrypted (its own audit file)."""
    with _serve(realm, kerberized, tmp_path / "audit.log", qop="auth-conf") as server:
        yield server


class PureSaslClient:
    """pure-sasl's SASLClient in the shape thriftpy2's TSaslClientTransport calls (start/step/encode)."""

    def __init__(self, host: str, service: str):
        from puresasl.client import SASLClient

        self._client = SASLClient(host, service, mechanism="GSSAPI")
        self.error = ""

    def start(self, mechanism):
        return True, mechanism, self._client.process()

    def step(self, challenge):
        return True, self._client.process(challenge)

    def encode(self, data):
        """thriftpy2 sends what this returns as the frame; a plain one when it is `data` unchanged (QOP auth)."""
        wrapped = self._client.wrap(data)
        return True, wrapped if wrapped == data else struct.pack(">I", len(wrapped)) + wrapped

    def decode(self, frame):
        return True, self._client.unwrap(frame[4:])  # thriftpy2 hands over the frame with its length

    def getError(self):  # noqa: N802 - thriftpy2's name
        return self.error


def independent_client(port: int, cafile: str | None = None, service: str = "hmsproxy", host: str = "localhost"):
    """A metastore client over thriftpy2's SASL transport and pure-sasl GSSAPI, to `service`@`host`
    (hmsproxy@localhost; inside TLS, verified against `cafile`, when given)."""
    from thriftpy2.transport import TSSLSocket
    from thriftpy2.transport.sasl import TSaslClientTransport

    if cafile is None:
        socket = TSocket(host, port, socket_timeout=60_000)
    else:  # the certificate names 127.0.0.1; the Kerberos service stays hmsproxy@localhost
        socket = TSSLSocket("127.0.0.1", port, socket_timeout=60_000, cafile=cafile)
    # No buffered transport on top: thriftpy2's SASL transport buffers writes itself, and its read(n)
    # waits for n bytes, which a buffered transport's read-ahead would never get.
    transport = TSaslClientTransport(lambda: PureSaslClient(host, service), "GSSAPI", socket)
    transport.open()
    return TClient(idl.HmsProxy, TBinaryProtocol(transport)), transport


def own_client(port: int, realm, principal: str, keytab: str, qop: str = "auth") -> ThriftConnection:
    """The proxy's own client code (wire.ThriftConnection with SASL) towards the proxy's port."""
    sasl = GssapiSettings(KerberosLogin(realm.principal(principal), keytab), f"hmsproxy/_HOST@{realm.realm}", qop)
    return ThriftConnection("proxy", (f"thrift://localhost:{port}",), connect_timeout_s=10, call_timeout_s=60, sasl=sasl)


def _audit(audit_file) -> list[dict]:
    return [json.loads(line) for line in audit_file.read_text().splitlines()]


def test_an_authenticated_client_is_itself_whatever_set_ugi_claims(proxy_server, realm, kerberos_env, audit_file, tmp_path):
    realm.kinit("alice", kerberos_env)
    client, transport = independent_client(proxy_server.port)
    db = f"inbound_{uuid.uuid4().hex[:8]}"
    try:
        client.set_ugi("mallory", ["admins"])
        client.create_database(idl.hive.Database(name=db, locationUri=(tmp_path / db).as_uri(), parameters={}))
        assert db in client.get_all_databases()
        client.drop_database(db, True, True)
    finally:
        transport.close()
    mine = [line for line in _audit(audit_file) if line["method"] in ("set_ugi", "create_database", "get_all_databases", "drop_database")]
    assert {line["method"] for line in mine} == {"set_ugi", "create_database", "get_all_databases", "drop_database"}
    assert {line["user"] for line in mine} == {"alice"}, mine


def test_a_service_principal_in_the_impersonation_list_acts_for_others(proxy_server, realm, audit_file):
    conn = own_client(proxy_server.port, realm, "carol", str(realm.principals["carol"]))
    try:
        conn.call("set_ugi", idl.HmsProxy.set_ugi_args(user_name="bob", group_names=[]))
        assert "default" in conn.call("get_all_databases", idl.HmsProxy.get_all_databases_args()).success
    finally:
        conn.close()
    lines = [line for line in _audit(audit_file) if line["method"] == "get_all_databases" and line["user"] in ("bob", "carol")]
    assert lines and {line["user"] for line in lines} == {"bob"}, lines


def test_the_proxys_own_client_code_both_ways_with_a_relayed_answer(proxy_server, realm):
    conn = own_client(proxy_server.port, realm, "carol", str(realm.principals["carol"]))
    relayed = proxy_server.handler.backends.state("primary").relayed
    try:
        assert "default" in conn.call("get_all_databases", idl.HmsProxy.get_all_databases_args()).success
        answer = conn.call("get_database", idl.HmsProxy.get_database_args(name="default"))
        assert answer.success.name == "default"
    finally:
        conn.close()
    assert proxy_server.handler.backends.state("primary").relayed > relayed  # get_database went out as relayed bytes, in SASL frames


def test_an_encrypting_port_with_both_clients(encrypting_proxy, realm, kerberos_env, tmp_path):
    """server.sasl.qop auth-conf: pure-sasl and the proxy's own client both pick it and every frame
    both ways is encrypted (a relayed answer included); a client that wants auth only is refused."""
    realm.kinit("alice", kerberos_env)
    client, transport = independent_client(encrypting_proxy.port)
    db = f"sealed_{uuid.uuid4().hex[:8]}"
    try:
        client.create_database(idl.hive.Database(name=db, locationUri=(tmp_path / db).as_uri(), parameters={}))
        assert db in client.get_all_databases()
        client.drop_database(db, True, True)
    finally:
        transport.close()
    conn = own_client(encrypting_proxy.port, realm, "carol", str(realm.principals["carol"]), qop="auth-conf")
    relayed = encrypting_proxy.handler.backends.state("primary").relayed
    try:
        assert conn.call("get_database", idl.HmsProxy.get_database_args(name="default")).success.name == "default"
    finally:
        conn.close()
    assert encrypting_proxy.handler.backends.state("primary").relayed > relayed
    plain_auth = own_client(encrypting_proxy.port, realm, "carol", str(realm.principals["carol"]), qop="auth")
    with pytest.raises(BackendUnavailable, match="offers QOP auth-conf, not auth"):
        plain_auth.call("get_all_databases", idl.HmsProxy.get_all_databases_args())


def test_hmsproxy_serve_from_a_yaml_file(realm, kerberized, tmp_path):
    """The keys as an operator writes them, through `hmsproxy serve`: Kerberos on both sides."""
    from hmsproxy.dev.ports import free_port

    port = free_port()
    config = tmp_path / "hmsproxy.yml"
    config.write_text(
        "server:\n"
        "  host: 127.0.0.1\n"
        f"  port: {port}\n"
        f"  sasl: {{enabled: true, principal: {realm.principal(PROXY)}, keytab: {realm.principals[PROXY]}}}\n"
        "store:\n"
        f"  url: sqlite:///{tmp_path / 'store.db'}\n"
        "primary-meta-store:\n"
        "  name: primary\n"
        f"  remote-meta-store-uris: {kerberized.uri}\n"
        f"  sasl: {{enabled: true, principal: 'hive/_HOST@{realm.realm}'}}\n"
    )
    serving = [*HMSPROXY, "serve", "--config", str(config), *own_pid_file(config)]
    proc = subprocess.Popen(serving, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        banner = wait_for_line(proc, "serving thrift://", 60)[-1]
        assert "(Kerberos)" in banner
        conn = own_client(port, realm, "carol", str(realm.principals["carol"]))
        try:
            assert "default" in conn.call("get_all_databases", idl.HmsProxy.get_all_databases_args()).success
        finally:
            conn.close()
    finally:
        assert stop(proc) == 0


def test_auth_to_local_rules_name_the_user_and_refuse_the_rest(realm, kerberized, kerberos_env, tmp_path, caplog):
    rule = f"RULE:[1:$1@$0](alice@{realm.realm.replace('.', '[.]')})s/@.*/_k/"
    caplog.set_level(logging.WARNING, logger="hmsproxy.downstream.server")
    with _serve(realm, kerberized, tmp_path / "audit.log", auth_to_local=(rule,)) as server:
        realm.kinit("alice", kerberos_env)
        client, transport = independent_client(server.port)
        try:
            assert "default" in client.get_all_databases()
        finally:
            transport.close()
        refused = own_client(server.port, realm, "carol", str(realm.principals["carol"]))
        with pytest.raises(BackendUnavailable):  # no rule applies to carol: her connection is closed
            refused.call("get_all_databases", idl.HmsProxy.get_all_databases_args())
    assert {line["user"] for line in _audit(tmp_path / "audit.log")} == {"alice_k"}
    assert any(f"no auth-to-local rule gives carol@{realm.realm} a user name" in r.getMessage() for r in caplog.records), caplog.text


def test_kerberos_inside_tls(realm, kerberized, kerberos_env, tmp_path):
    """server.tls and server.sasl.enabled together: TLS first, then SASL inside it, as Hive layers them."""
    from tests.support.ops import make_test_certs

    certs = make_test_certs(tmp_path / "certs")
    with _serve(realm, kerberized, tmp_path / "audit.log", tls=TlsConfig(str(certs.cert), str(certs.key))) as server:
        realm.kinit("alice", kerberos_env)
        client, transport = independent_client(server.port, cafile=str(certs.cert))
        try:
            assert "default" in client.get_all_databases()
            assert client.get_database("default").name == "default"
        finally:
            transport.close()
        with pytest.raises(Exception):  # noqa: B017 - SASL without TLS: the TLS handshake fails, the proxy closes
            independent_client(server.port)[0].get_all_databases()
    assert {line["user"] for line in _audit(tmp_path / "audit.log")} == {"alice"}


def test_a_plain_client_is_refused_and_the_log_says_why(proxy_server, caplog):
    caplog.set_level(logging.WARNING, logger="hmsproxy.downstream.server")
    plain = thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", proxy_server.port, timeout=30_000)
    try:
        with pytest.raises(Exception):  # noqa: B017 - the proxy closes the connection: EOF or reset
            plain.get_all_databases()
    finally:
        plain.close()
    assert any("the client spoke plain Thrift" in r.getMessage() for r in caplog.records), caplog.text


def test_a_client_without_a_ticket_gets_nothing(proxy_server, realm, kerberos_env):
    with pytest.raises(Exception) as raised:  # noqa: B017 - pure-sasl cannot start without credentials
        independent_client(proxy_server.port)
    assert "credential" in str(raised.value).lower() or "ticket" in str(raised.value).lower() or "cache" in str(raised.value).lower()
    # The proxy's own client code with a keytab that does not exist never reaches a call either.
    conn = own_client(proxy_server.port, realm, "carol", "/nonexistent/carol.keytab")
    with pytest.raises(BackendUnavailable, match="does not exist"):
        conn.call("get_all_databases", idl.HmsProxy.get_all_databases_args())


REPO = Path(__file__).resolve().parents[2]
SPARK_TIMEOUT_S = 420
#: Without it Hadoop's client never uses the keytab ("Failed to find any Kerberos tgt").
CORE_SITE = """<?xml version="1.0"?>
<configuration>
  <property><name>hadoop.security.authentication</name><value>kerberos</value></property>
</configuration>
"""


def run_spark_job(realm, tmp_path, module: str, uri: str, user: str | None, *args: str, token_file: Path | None = None) -> dict:
    """`python -m module URI PRINCIPAL KEYTAB SERVICE_PRINCIPAL *args` (a Spark job of tests/support
    logged in from `user`'s keytab, the proxy's principal its metastore's) in its own process with
    the environment Kerberos needs; its `RESULT {json}` line. With `token_file` (and no user) it
    has no Kerberos login at all: HADOOP_TOKEN_FILE_LOCATION names the token it logs in with."""
    from tests.support.kerberos_spark_job import BY_TOKEN

    conf_dir = tmp_path / "hadoop-conf"
    conf_dir.mkdir()
    (conf_dir / "core-site.xml").write_text(CORE_SITE)
    env = {
        **os.environ,
        **realm.env(tmp_path / "no-ticket-cache"),  # the keytab logs Spark in, not a cache
        "HADOOP_CONF_DIR": str(conf_dir),
        "JDK_JAVA_OPTIONS": f"-Djava.security.krb5.conf={realm.krb5_conf}",
        "PYTHONPATH": str(REPO),
        **({"HADOOP_TOKEN_FILE_LOCATION": str(token_file)} if token_file else {}),
    }
    command = [
        sys.executable,
        "-m",
        module,
        uri,
        realm.principal(user) if user else BY_TOKEN,
        str(realm.principals[user]) if user else BY_TOKEN,
        f"hmsproxy/_HOST@{realm.realm}",
        *args,
    ]
    done = subprocess.run(command, env=env, cwd=REPO, capture_output=True, text=True, timeout=SPARK_TIMEOUT_S, stdin=subprocess.DEVNULL)
    results = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and results, f"Spark failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-6000:]}"
    return json.loads(results[-1][len("RESULT ") :])


@pytest.mark.spark
def test_spark_logged_in_from_a_keytab_uses_the_proxy_as_a_kerberized_metastore(proxy_server, realm, audit_file, tmp_path):
    """A real SparkSession (its own process: one per process) with spark.kerberos.principal/keytab and
    hive.metastore.sasl.enabled, pointed at the proxy as at a Kerberized metastore: it creates,
    writes, reads and drops through it, and the proxy knows it as alice."""
    db = f"spark_krb_{uuid.uuid4().hex[:8]}"
    uri = f"thrift://localhost:{proxy_server.port}"
    answer = run_spark_job(realm, tmp_path, "tests.support.kerberos_spark_job", uri, "alice", str(tmp_path / "warehouse"), db)
    assert answer == {"rows": [[1, "a"], [2, "b"]], "tables": ["t"]}
    spark_lines = [line for line in _audit(audit_file) if line.get("db") == db or db in json.dumps(line)]
    methods = {line["method"] for line in spark_lines}
    assert {"create_database", "get_table", "drop_database"} <= methods and any(m.startswith("create_table") for m in methods), methods
    assert {line["user"] for line in spark_lines} == {"alice"}, spark_lines


def token_fetch(uri: str, realm, out: Path) -> subprocess.CompletedProcess:
    """`hmsproxy token fetch` from the Kerberized proxy at `uri` into `out`, as the current ticket cache."""
    command = [*HMSPROXY, "token", "fetch", "--uri", uri, "--sasl", "--principal", f"hmsproxy/_HOST@{realm.realm}", "--out", str(out)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


@pytest.mark.spark
def test_spark_with_no_ticket_uses_a_delegation_token_from_its_token_file(proxy_server, realm, audit_file, kerberos_env, tmp_path):
    """As a Spark job handed a token at submission: `hmsproxy token fetch` (alice's ticket) writes
    Hadoop's token file, and a SparkSession with no Kerberos login at all (no ticket cache, no
    keytab) and HADOOP_TOKEN_FILE_LOCATION at it creates, writes, reads and drops through the
    Kerberized proxy as alice (its Hive client logs in over DIGEST-MD5 with the token)."""
    realm.kinit("alice", kerberos_env)
    token_file = tmp_path / "spark.token"
    fetched = token_fetch(f"thrift://localhost:{proxy_server.port}", realm, token_file)
    assert fetched.returncode == 0, fetched.stderr
    db = f"spark_tok_{uuid.uuid4().hex[:8]}"
    uri = f"thrift://localhost:{proxy_server.port}"
    answer = run_spark_job(
        realm, tmp_path, "tests.support.kerberos_spark_job", uri, None, str(tmp_path / "warehouse"), db, token_file=token_file
    )
    assert answer == {"rows": [[1, "a"], [2, "b"]], "tables": ["t"]}
    spark_lines = [line for line in _audit(audit_file) if line.get("db") == db or db in json.dumps(line)]
    assert "create_database" in {line["method"] for line in spark_lines}
    assert {line["user"] for line in spark_lines} == {"alice"}, spark_lines

"""Kerberos failures, each on its own, with the real KDC: the message names the cause, and the same
proxy keeps serving a good client.

Client towards the Kerberized proxy: a principal the KDC doesn't know, one the proxy's keytab
lacks, an expired ticket (a principal whose tickets live 8 s), a clock 10 minutes ahead
(libfaketime), and QOPs: a port offering several, each client picking one. The proxy itself: a
missing keytab or one without its principal stops `check-config` and `serve` at start, naming
them; a proxy whose clock is off refuses clients naming the skew; its metastore login with a
keytab lacking its principal names both. One Kerberized Hive 2.3 metastore for the module.
"""

# ruff: noqa: F811 - `kerberized`, the imported fixture, is a parameter of the tests that use it

from __future__ import annotations

import dataclasses
import json
import logging
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from thriftpy2.protocol import TBinaryProtocolFactory
from thriftpy2.thrift import TClient
from thriftpy2.transport import TBufferedTransportFactory, TSocket

from hmsproxy.config.model import AuditConfig, Config, DatabaseResolution, MetastoreSaslConfig, ProxyUser, ServerSaslConfig
from hmsproxy.protocol import idl
from hmsproxy.protocol.client import open_client
from hmsproxy.protocol.kerberos_client import caller_mechanism
from hmsproxy.protocol.sasl import PROXY as PROXY_PEER
from hmsproxy.protocol.sasl import SaslError, SaslTransport
from hmsproxy.upstream.kerberos import GssapiSettings, KerberosLogin
from hmsproxy.upstream.wire import BackendUnavailable, ThriftConnection
from tests.integration.test_cli import HMSPROXY
from tests.integration.test_kerberos_inbound import kerberized  # noqa: F401 - the fixture: one metastore, over this module's realm
from tests.support.children import terminate_group
from tests.support.federation import prefixed_config
from tests.support.served import served

HIVE = "hive/localhost"
PROXY = "hmsproxy/localhost"
SHORT = "shorty"  # tickets of 8 s
#: Beyond the KDC's and the proxy's 5-minute allowance.
SKEW = "+600s"


@pytest.fixture(scope="module")
def realm(kdc):
    for name in (HIVE, PROXY, "alice", "bob", "svc"):
        kdc.add_principal(name)
    kdc.add_principal(SHORT, options='-maxlife "8 seconds"')
    return kdc


def _config(realm, kerberized, qop=("auth",), impersonation=(), audit_file=None) -> Config:
    base = prefixed_config(kerberized.uri, kerberized.uri)
    primary = dataclasses.replace(base.primary, sasl=MetastoreSaslConfig(principal=f"hive/_HOST@{realm.realm}"))
    sasl = ServerSaslConfig(
        enabled=True, principal=realm.principal(PROXY), keytab=str(realm.principals[PROXY]), qop=qop, impersonation=impersonation
    )
    audit = AuditConfig(enabled=True, file=str(audit_file)) if audit_file else base.audit
    return Config(dataclasses.replace(base.server, sasl=sasl), DatabaseResolution.PREFIXED, primary, (), store=base.store, audit=audit)


def _serve(config: Config):
    return served(config)


@pytest.fixture(scope="module")
def proxy_server(realm, kerberized):
    with _serve(_config(realm, kerberized)) as server:
        yield server


@pytest.fixture(scope="module")
def good_cache(realm, tmp_path_factory):
    """bob's ticket cache: the good client every test asks after the failure."""
    ccache = tmp_path_factory.mktemp("bob") / "krb5cc"
    realm.kinit("bob", ccache)
    return ccache


def _principal(realm) -> str:
    return f"hmsproxy/_HOST@{realm.realm}"


def _uri(server) -> str:
    return f"thrift://localhost:{server.port}"


def _still_serves(server, realm, good_cache, monkeypatch) -> None:
    """Another client, with a good ticket, is answered by the same proxy (a call reaching the metastore)."""
    with monkeypatch.context() as patch:
        patch.setenv("KRB5CCNAME", f"FILE:{good_cache}")
        client = open_client("localhost", server.port, user="bob", timeout_s=60, sasl_principal=_principal(realm))
        try:
            assert "default" in client.get_all_databases()
        finally:
            client.close()


def _sql(server, realm, *prefix: str, principal: str | None = None) -> subprocess.CompletedProcess:
    cmd = [
        *prefix,
        *HMSPROXY,
        "sql",
        "--uri",
        _uri(server),
        "--sasl",
        "--principal",
        principal or _principal(realm),
        "-e",
        "SHOW REMOTE DATABASES",
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


def _faketime() -> str:
    found = shutil.which("faketime")
    if found is None:
        from tests.support.required import unavailable

        unavailable("no faketime (`make kerberos` installs Debian's faketime)")
    return found


# -- the client towards the Kerberized proxy -------------------------------------------------------


def test_a_principal_the_kdc_does_not_know(proxy_server, realm, kerberos_env, good_cache, monkeypatch):
    realm.kinit("alice", kerberos_env)
    done = _sql(proxy_server, realm, principal=f"nosuch/_HOST@{realm.realm}")
    assert done.returncode != 0
    assert f"nosuch/localhost@{realm.realm}" in done.stderr and "not found in Kerberos database" in done.stderr, done.stderr
    _still_serves(proxy_server, realm, good_cache, monkeypatch)


def test_a_principal_the_proxys_keytab_lacks(proxy_server, realm, kerberos_env, good_cache, monkeypatch, caplog):
    """The KDC knows hive/localhost, so the client gets a ticket for it: the proxy can't read it, and says whose it is."""
    realm.kinit("alice", kerberos_env)
    with caplog.at_level(logging.WARNING, logger="hmsproxy.downstream.server"):
        with pytest.raises(SaslError) as raised:
            open_client("localhost", proxy_server.port, user="alice", timeout_s=60, sasl_principal=f"hive/_HOST@{realm.realm}")
    message = str(raised.value)
    assert f"Kerberos authentication to {realm.principal(PROXY)} failed" in message, message
    assert f"ticket for {realm.principal(HIVE)}" in message, message
    deadline = time.monotonic() + 30  # the proxy logs it after sending the refusal
    while not any(realm.principal(HIVE) in r.getMessage() for r in caplog.records):  # the proxy's log says it too
        assert time.monotonic() < deadline, [r.getMessage() for r in caplog.records]
        time.sleep(0.2)
    _still_serves(proxy_server, realm, good_cache, monkeypatch)


def test_the_hive_cli_asking_for_a_principal_the_proxys_keytab_lacks(proxy_server, realm, kerberos_env, good_cache, monkeypatch, hive_cli):
    """The proxy's refusal reaches a Java client: the CLI's own output says only that it could not make
    its metastore client; its log (hive.log) has the proxy's reason after libthrift's "Peer indicated failure"."""
    import re

    from tests.integration.test_kerberos_inbound import CORE_SITE

    realm.kinit("alice", kerberos_env)
    args = [
        "--hiveconf", "hive.metastore.sasl.enabled=true",
        "--hiveconf", f"hive.metastore.kerberos.principal=hive/_HOST@{realm.realm}",
        "--hiveconf", "hive.metastore.connect.retries=1",
    ]  # fmt: skip
    env = {"JDK_JAVA_OPTIONS": f"-Djava.security.krb5.conf={realm.krb5_conf}"}
    done = hive_cli(_uri(proxy_server), "SHOW DATABASES;\n", 300, args=args, env=env, conf={"core-site.xml": CORE_SITE})
    assert done.returncode != 0
    log = re.search(r"\(hive log: ([^)]+)\)", done.stdout + done.stderr)
    assert log, done.stdout[-2000:]
    output = Path(log.group(1)).read_text(errors="replace")
    assert f"Peer indicated failure: Kerberos authentication to {realm.principal(PROXY)} failed" in output, output[-4000:]
    assert f"ticket for {realm.principal(HIVE)}" in output, output[-4000:]
    _still_serves(proxy_server, realm, good_cache, monkeypatch)


def test_an_expired_ticket(proxy_server, realm, kerberos_env, good_cache, monkeypatch):
    realm.kinit(SHORT, kerberos_env)
    deadline = time.monotonic() + 60
    while _sql(proxy_server, realm).returncode == 0:  # valid for 8 s from the KDC's clock: wait it out
        assert time.monotonic() < deadline, "the 8 s ticket never expired"
        time.sleep(2)
    done = _sql(proxy_server, realm)
    assert done.returncode != 0
    assert f"the Kerberos ticket in FILE:{kerberos_env} has expired (kinit again)" in done.stderr, done.stderr
    _still_serves(proxy_server, realm, good_cache, monkeypatch)


def test_a_client_clock_ten_minutes_ahead(proxy_server, realm, kerberos_env, good_cache, monkeypatch):
    """Its TGS request is refused by the KDC. (A kinit under the skewed clock itself succeeds: MIT's
    kdc_timesync corrects the cache's clock from the KDC's reply.)"""
    realm.kinit("alice", kerberos_env)
    done = _sql(proxy_server, realm, _faketime(), "-f", SKEW)
    assert done.returncode != 0
    assert "Clock skew too great" in done.stderr and f"{realm.principal(PROXY)}" in done.stderr, done.stderr
    _still_serves(proxy_server, realm, good_cache, monkeypatch)


def _call_with_qop(server, realm, qop: str) -> list[str]:
    target, mechanism_for = caller_mechanism(_principal(realm), "localhost", PROXY_PEER, qop)
    transport = TBufferedTransportFactory().get_transport(
        SaslTransport(TSocket("127.0.0.1", server.port), mechanism_for, f"GSSAPI to {target}", 60)
    )
    transport.open()
    try:
        client = TClient(idl.HmsProxy, TBinaryProtocolFactory().get_protocol(transport))
        return client.get_all_databases()
    finally:
        transport.close()


@pytest.mark.parametrize("qop", ["auth", "auth-int", "auth-conf"])
def test_a_port_offering_every_qop_serves_each_clients_pick(realm, kerberized, kerberos_env, qop, caplog):
    """Hive's hive.metastore.thrift.sasl.qop=auth-conf,auth-int,auth: the client's layer is used both
    ways (a wrong guess by either side would garble every frame), relayed answers included."""
    realm.kinit("alice", kerberos_env)
    with _serve(_config(realm, kerberized, qop=("auth-conf", "auth-int", "auth"))) as server:
        with caplog.at_level(logging.INFO, logger="hmsproxy.downstream.server"):
            assert "default" in _call_with_qop(server, realm, qop)
        assert any(f"(user alice, QOP {qop})" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("qop", ["auth", "auth-int", "auth-conf"])
def test_an_independent_client_picks_its_qop_among_those_offered(realm, kerberized, kerberos_env, qop, caplog):
    """pure-sasl's GSSAPI (thriftpy2's SASL transport) wanting only `qop` reads the proxy's offer of
    all three, and the proxy serves the connection under that layer (its log says which)."""
    from thriftpy2.protocol.binary import TBinaryProtocol
    from thriftpy2.transport.sasl import TSaslClientTransport

    from tests.integration.test_kerberos_inbound import PureSaslClient

    class Picking(PureSaslClient):
        def __init__(self):
            from puresasl.client import SASLClient

            self._client = SASLClient("localhost", "hmsproxy", mechanism="GSSAPI", qops=[qop.encode()])
            self.error = ""

    realm.kinit("alice", kerberos_env)
    with _serve(_config(realm, kerberized, qop="auth-conf,auth-int,auth")) as server:
        with caplog.at_level(logging.INFO, logger="hmsproxy.downstream.server"):
            transport = TSaslClientTransport(Picking, "GSSAPI", TSocket("localhost", server.port, socket_timeout=60_000))
            transport.open()
            try:
                assert "default" in TClient(idl.HmsProxy, TBinaryProtocol(transport)).get_all_databases()
            finally:
                transport.close()
        assert any(f"authenticated as {realm.principal('alice')} (user alice, QOP {qop})" in r.getMessage() for r in caplog.records)


def test_a_qop_the_port_does_not_offer_is_named(realm, kerberized, kerberos_env):
    realm.kinit("alice", kerberos_env)
    with _serve(_config(realm, kerberized, qop="auth-int,auth-conf")) as server:
        with pytest.raises(SaslError, match="offers QOP auth-int, auth-conf, not auth"):
            _call_with_qop(server, realm, "auth")
        assert "default" in _call_with_qop(server, realm, "auth-conf")


def _audit(audit_file: Path) -> list[dict]:
    return [json.loads(line) for line in audit_file.read_text().splitlines()] if audit_file.exists() else []


def test_a_proxy_user_acts_only_for_its_users_and_from_its_hosts(realm, kerberized, kerberos_env, tmp_path):
    """server.sasl.impersonation: svc may act for alice from 127.0.0.1; for mallory it is refused
    (MetaException naming the rule, audited as denied), and a rule for other hosts refuses it here."""
    realm.kinit("svc", kerberos_env)
    audit_file = tmp_path / "audit.log"
    rules = (ProxyUser("svc", hosts=("127.0.0.1",), users=("alice",)),)
    with _serve(_config(realm, kerberized, impersonation=rules, audit_file=audit_file)) as server:
        client = open_client("localhost", server.port, user="alice", timeout_s=60, sasl_principal=_principal(realm))
        try:
            assert "default" in client.get_all_databases()
        finally:
            client.close()
        with pytest.raises(idl.hive.MetaException) as raised:
            open_client("localhost", server.port, user="mallory", timeout_s=60, sasl_principal=_principal(realm))
        assert "svc may not act as mallory (server.sasl.impersonation allows svc users: alice)" in raised.value.message
        lines = _audit(audit_file)
        assert {line["user"] for line in lines if line["method"] == "get_all_databases"} == {"alice"}
        refused = [line for line in lines if line["method"] == "set_ugi" and line["outcome"] == "denied"]
        assert refused and refused[0]["user"] == "svc" and "may not act as mallory" in refused[0]["error"], lines
    with _serve(_config(realm, kerberized, impersonation=(ProxyUser("svc", hosts=("10.0.0.0/8",), users=("*",)),))) as elsewhere:
        with pytest.raises(idl.hive.MetaException, match=r"svc may not act for others from 127\.0\.0\.1"):
            open_client("localhost", elsewhere.port, user="alice", timeout_s=60, sasl_principal=_principal(realm))
        client = open_client("localhost", elsewhere.port, user="svc", timeout_s=60, sasl_principal=_principal(realm))
        try:  # as itself it needs no rule
            assert "default" in client.get_all_databases()
        finally:
            client.close()


# -- the proxy ---------------------------------------------------------------------------------------


def _config_file(tmp_path: Path, realm, kerberized, keytab: str) -> Path:
    from hmsproxy.dev.ports import free_port

    port = free_port()
    path = tmp_path / "hmsproxy.yml"
    path.write_text(
        f"""server:
  host: 127.0.0.1
  port: {port}
  sasl: {{enabled: true, principal: "{realm.principal(PROXY)}", keytab: "{keytab}"}}
primary-meta-store:
  name: primary
  remote-meta-store-uris: {kerberized.uri}
  sasl: {{enabled: true, principal: "hive/_HOST@{realm.realm}"}}
""",
        encoding="utf-8",
    )
    return path


def _run(args, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([*HMSPROXY, *args], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, env=env)


@pytest.mark.parametrize("keytab", ["missing", "lacks the principal"])
def test_a_bad_keytab_stops_check_config_and_serve_at_start(realm, kerberized, tmp_path, keytab):
    path = str(tmp_path / "gone.keytab") if keytab == "missing" else str(realm.principals["alice"])
    config = _config_file(tmp_path, realm, kerberized, path)
    env = {**os.environ, **realm.env(tmp_path / "cc")}
    checked = _run(["check-config", "--config", str(config)], env)
    served = _run(["serve", "--config", str(config), "--pid-file", str(tmp_path / "pid")], env)  # exits: never listens
    for done in (checked, served):
        assert done.returncode != 0
        assert f"{path}" in done.stderr, done.stderr
        assert "server.sasl" in done.stderr, done.stderr
    if keytab == "missing":
        assert "no such file" in checked.stderr
    else:
        assert realm.principal(PROXY) in checked.stderr and realm.principal(PROXY) in served.stderr, served.stderr


def test_a_proxy_clock_ten_minutes_ahead_refuses_clients_naming_the_skew(realm, kerberized, tmp_path, kerberos_env):
    from tests.integration.test_cli import wait_for_line

    config = _config_file(tmp_path, realm, kerberized, str(realm.principals[PROXY]))
    env = {**os.environ, **realm.env(tmp_path / "proxy-cc")}
    proc = subprocess.Popen(
        [_faketime(), "-f", SKEW, *HMSPROXY, "serve", "--config", str(config), "--pid-file", str(tmp_path / "pid")],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        start_new_session=True,  # faketime forks and waits: the proxy is its child, stopped with the group
    )
    try:
        wait_for_line(proc, "serving", 60)
        realm.kinit("alice", kerberos_env)
        port = int(config.read_text().split("port: ")[1].split()[0])
        with pytest.raises(SaslError) as raised:
            open_client("localhost", port, user="alice", timeout_s=60, sasl_principal=_principal(realm))
        assert "Clock skew too great" in str(raised.value), raised.value
    finally:
        terminate_group(proc)


def test_a_metastore_login_with_a_keytab_lacking_the_principal_names_both(realm, kerberized):
    keytab = str(realm.principals["alice"])
    reason = _metastore_refusal(realm, kerberized, keytab, f"hive/_HOST@{realm.realm}")
    assert f"cannot log in as {realm.principal(PROXY)} from {keytab}" in reason, reason


def test_a_metastore_principal_the_metastores_keytab_lacks_is_named(realm, kerberized, proxy_server, good_cache, monkeypatch):
    """The KDC knows hmsproxy/localhost, so the proxy gets a ticket for it, which the metastore cannot read."""
    reason = _metastore_refusal(realm, kerberized, str(realm.principals[PROXY]), f"hmsproxy/_HOST@{realm.realm}")
    assert f"as {realm.principal(PROXY)} to {realm.principal(PROXY)} failed" in reason, reason
    assert "GSS initiate failed (the server gives no cause; its log has it." in reason and "a server keytab without the principal" in reason
    _still_serves(proxy_server, realm, good_cache, monkeypatch)


def test_a_kdc_whose_clock_is_off_makes_the_metastore_login_name_the_skew(realm, kerberized):
    """The KDC ten minutes behind: MIT's client takes the KDC's time for its tickets (kdc_timesync), so
    the metastore, on the real clock, finds the proxy's authenticator skewed. Hive's metastore answers
    only "GSS initiate failed" (the cause is in its log): the proxy's reason says so and names clock
    skew first among the usual causes. The KDC is restarted on the real clock afterwards."""

    realm.stop()
    skewed = _krb5kdc(realm, _faketime(), "-f", "-600s")
    try:
        _wait_listening(realm.port)
        reason = _metastore_refusal(realm, kerberized, str(realm.principals[PROXY]), f"hive/_HOST@{realm.realm}")
        assert f"to {realm.principal(HIVE)} failed" in reason, reason
        assert "GSS initiate failed (the server gives no cause; its log has it. Usually: a clock skew of over 5 minutes" in reason
    finally:
        terminate_group(skewed)
        realm.process = _krb5kdc(realm)
        _wait_listening(realm.port)


def _metastore_refusal(realm, kerberized, keytab: str, metastore_principal: str) -> str:
    """The reason the proxy's connection code (the proxy's principal from `keytab`) gives when the
    metastore can't be reached as `metastore_principal`."""
    sasl = GssapiSettings(KerberosLogin(realm.principal(PROXY), keytab), metastore_principal)
    conn = ThriftConnection("kerberized", (kerberized.uri,), connect_timeout_s=10, call_timeout_s=30, sasl=sasl)
    with pytest.raises(BackendUnavailable) as raised:
        conn.call("get_all_databases", idl.HmsProxy.get_all_databases_args())
    return raised.value.reason


def _krb5kdc(realm, *prefix: str) -> subprocess.Popen:
    """The realm's KDC again, on its database and port (`prefix`: e.g. faketime and its offset)."""
    from tests.support.kdc import _binary

    cmd = [*prefix, _binary("krb5kdc"), "-n", "-r", realm.realm]
    return subprocess.Popen(
        cmd,
        env={**os.environ, **realm.env()},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        start_new_session=True,  # under faketime the KDC is faketime's child: stopped with the group
    )


def _wait_listening(port: int, timeout_s: float = 30) -> None:
    import socket

    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            assert time.monotonic() < deadline, f"the KDC did not listen on {port} within {timeout_s} s"
            time.sleep(0.1)

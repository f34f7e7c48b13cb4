"""#44: Kerberos as Hive's clients meet it, each case compared with a Kerberized Hive 2.3 metastore's
own answer to the same call (a real MIT KDC).

* Delegation tokens whose owner is a full principal (`alice@HMSPROXY.TEST`, what Spark's
  HiveDelegationTokenProvider asks for) or a short name (`alice`), from a Python client
  (thriftpy2 + pure-sasl) and from Hive 2.3's own Java HiveMetaStoreClient (java/HiveTokenClient.java):
  what the token records, whether its holder logs in with it alone (DIGEST-MD5), renew, cancel.
* Spark's own HiveDelegationTokenProvider, run by the driver of an application on the standalone
  cluster, whose two executors then log in with the token (tests/support/spark_token_provider_job.py).
* `_HOST`: the metastore runs with `hive/_HOST@REALM` and the proxy, bound to 127.0.0.1, with
  `hmsproxy/_HOST@REALM`; clients dial both by this machine's canonical name and are accepted.

Two differences are stated and asserted: Hive 2.3 refuses every renewal by a Kerberos caller (it
compares the caller's full name with the renewer's short name, HADOOP-15068), where the proxy
follows Hive 3's fix and compares short names; and Hive lets anyone cancel any token, where the
proxy keeps Hadoop's owner-or-renewer rule.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from thriftpy2.protocol.binary import TBinaryProtocol
from thriftpy2.thrift import TClient
from thriftpy2.transport import TSocket

from hmsproxy.dev.kerberos import MetastoreKerberos
from hmsproxy.protocol import idl
from hmsproxy.protocol.delegation_token import Token, TokenIdentifier
from hmsproxy.protocol.kerberos_client import local_host_name
from hmsproxy.upstream.kerberos import GssapiSettings, KerberosLogin
from tests.contract.jars import java_tool
from tests.integration.test_kerberos_inbound import HIVE, PROXY, _audit, independent_client, realm, run_spark_job  # noqa: F401 - fixtures
from tests.integration.test_kerberos_inbound import _serve as serve_kerberized
from tests.support.hive_cli import pyspark_jars
from tests.support.token_digest import TokenDigest

SOURCE = Path(__file__).parent / "java" / "HiveTokenClient.java"
#: This machine's canonical name: what `_HOST` becomes in the metastore's and the proxy's own principal.
NAME = local_host_name().lower()


@pytest.fixture(scope="module")
def krb(realm):  # noqa: F811
    """hive/NAME and hmsproxy/NAME in the metastore's and the proxy's keytabs (NAME is often localhost)."""
    for service, keytab_of in (("hive", HIVE), ("hmsproxy", PROXY)):
        if f"{service}/{NAME}" not in realm.principals:
            realm.add_principal(f"{service}/{NAME}", realm.principals[keytab_of])
    realm.add_principal("dave")
    return realm


@pytest.fixture(scope="module")
def kerberized(krb, metastore_factory):
    """A Kerberized Hive 2.3 metastore whose principal is hive/_HOST@REALM (Hive resolves it), dialled by NAME."""
    client = GssapiSettings(KerberosLogin(krb.principal(PROXY), str(krb.principals[PROXY])), f"hive/_HOST@{krb.realm}")
    kerberos = MetastoreKerberos(krb.krb5_conf, f"hive/_HOST@{krb.realm}", krb.principals[HIVE], client)
    (hms,) = metastore_factory(1, name="kerberized_token_owners", host=NAME, kerberos=kerberos)
    yield hms
    hms.stop()


@pytest.fixture(scope="module")
def audit_file(tmp_path_factory):
    return tmp_path_factory.mktemp("audit") / "audit.log"


@pytest.fixture(scope="module")
def proxy(krb, kerberized, audit_file):
    """The proxy bound to 127.0.0.1 with hmsproxy/_HOST@REALM, in front of the metastore."""
    with serve_kerberized(krb, kerberized, audit_file, principal=f"hmsproxy/_HOST@{krb.realm}") as server:
        yield server


def _ends(kerberized, proxy) -> dict[str, tuple[int, str]]:
    """Where each side is dialled, by this machine's name, and its service."""
    return {"metastore": (kerberized.port, "hive"), "proxy": (proxy.port, "hmsproxy")}


def _login_with(port: int, token_str: str) -> str:
    """A client holding only the token: 'served' when it logs in and lists the databases."""
    from thriftpy2.transport.sasl import TSaslClientTransport

    token = Token.decode(token_str)
    transport = TSaslClientTransport(lambda: TokenDigest(token), "DIGEST-MD5", TSocket(NAME, port, socket_timeout=60_000))
    transport.open()
    try:
        return "served" if "default" in TClient(idl.HmsProxy, TBinaryProtocol(transport)).get_all_databases() else "no default"
    finally:
        transport.close()


def _recorded(token_str: str) -> str:
    ident = TokenIdentifier.from_bytes(Token.decode(token_str).identifier)
    return f"owner={ident.owner} renewer={ident.renewer} realUser={ident.real_user}"


def _step(steps: dict, name: str, run) -> None:
    try:
        steps[name] = (True, run())
    except Exception as e:  # noqa: BLE001 - the answer, whatever it is, is what gets compared
        steps[name] = (False, getattr(e, "message", None) or str(e))


def python_steps(port: int, service: str, owner: str, renewer: str) -> dict[str, tuple[bool, str]]:
    """The Python client's get, login by token, renew and cancel, as alice's ticket."""
    client, transport = independent_client(port, service=service, host=NAME)
    steps: dict[str, tuple[bool, str]] = {}
    token: list[str] = []
    try:
        _step(steps, "get", lambda: _recorded(token.append(client.get_delegation_token(owner, renewer)) or token[0]))
        if token:
            _step(steps, "login", lambda: _login_with(port, token[0]))
            _step(steps, "renew", lambda: "renewed" if client.renew_delegation_token(token[0]) > 0 else "expired")
            _step(steps, "cancel", lambda: client.cancel_delegation_token(token[0]) or "cancelled")
    finally:
        transport.close()
    return steps


#: (owner, renewer) as the clients ask: Spark's (a full owner, the service's principal pattern as
#: renewer), Hive's CLI's (a short owner), each renewable by alice or not, and another user.
CASES = [
    ("alice@{realm}", "alice"),
    ("alice", "alice"),
    ("alice@{realm}", "hive/_HOST@{realm}"),
    ("alice", "hive/_HOST@{realm}"),
    ("bob@{realm}", "alice"),
]


def _outcomes(steps: dict) -> dict:
    """Each step's answer, or that it was refused (the two word their refusals differently)."""
    return {name: (ok, value if ok else "refused") for name, (ok, value) in steps.items()}


def _expected_difference(metastore: dict, proxy: dict) -> None:
    """Hive 2.3 refuses alice@REALM renewing a token whose renewer is alice; the proxy renews (Hive 3)."""
    if "renew" in metastore and metastore["renew"][0] is False and "non-matching renewer alice" in metastore["renew"][1]:
        assert proxy["renew"] == (True, "renewed"), proxy
        metastore["renew"] = proxy["renew"]


@pytest.mark.parametrize("owner, renewer", CASES)
def test_python_client_tokens_as_the_metastore_gives_them(krb, kerberized, proxy, kerberos_env, audit_file, owner, renewer):
    owner, renewer = owner.format(realm=krb.realm), renewer.format(realm=krb.realm)
    krb.kinit("alice", kerberos_env)
    answers = {side: python_steps(port, service, owner, renewer) for side, (port, service) in _ends(kerberized, proxy).items()}
    metastore, through_proxy = answers["metastore"], answers["proxy"]
    print(json.dumps(answers, indent=1))
    if owner.startswith("bob"):  # another user: a proxy-user request, which neither allows alice
        assert not metastore["get"][0] and not through_proxy["get"][0], answers
        assert "not allowed to impersonate bob" in metastore["get"][1] and "may not get a token for bob" in through_proxy["get"][1]
        return
    _expected_difference(metastore, through_proxy)
    assert _outcomes(through_proxy) == _outcomes(metastore)
    assert metastore["get"] == (True, f"owner={owner} renewer={renewer.split('/')[0].split('@')[0]} realUser=")
    logins = [line for line in _audit(audit_file) if line["method"] == "get_all_databases"]
    assert logins and logins[-1]["user"] == "alice", logins[-1:]  # the token's login is alice, a full owner too


@pytest.fixture(scope="module")
def hive_token_answers(krb, kerberized, proxy, tmp_path_factory) -> dict[tuple[str, str, str], dict[str, tuple[bool, str]]]:
    """java/HiveTokenClient.java (Hive 2.3's client from pyspark's jars) run once, every case against
    both ends (a JVM's start costs more than all its calls): {(side, owner, renewer): {step: (ok, value)}},
    the login's "user" step in each case's steps."""
    classes = tmp_path_factory.mktemp("hive-token-client")
    classpath = f"{pyspark_jars()}/*"
    compiled = subprocess.run(
        [java_tool("javac"), "-nowarn", "-cp", classpath, "-d", str(classes), str(SOURCE)], capture_output=True, text=True, timeout=300
    )
    assert compiled.returncode == 0, compiled.stderr
    cases = [(owner.format(realm=krb.realm), renewer.format(realm=krb.realm)) for owner, renewer in CASES]
    sides = {
        f"thrift://{NAME}:{port}": (side, f"{service}/_HOST@{krb.realm}") for side, (port, service) in _ends(kerberized, proxy).items()
    }
    command = [
        java_tool("java"),
        f"-Djava.security.krb5.conf={krb.krb5_conf}",
        "-cp",
        f"{classes}:{classpath}",
        "HiveTokenClient",
        krb.principal("alice"),
        str(krb.principals["alice"]),
        ";".join(f"{owner}|{renewer}" for owner, renewer in cases),
        *[arg for uri, (_, service) in sides.items() for arg in (uri, service)],
    ]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    lines = [line.split("\t", 4) for line in proc.stdout.splitlines() if line.count("\t") >= 4]
    assert proc.returncode == 0 and lines, f"HiveTokenClient failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr[-3000:]}"
    user = {uri: (status == "OK", value) for uri, case, name, status, value in lines if name == "user"}
    answers = {(side, *case): {"user": user.get(uri)} for uri, (side, _) in sides.items() for case in cases}
    for uri, case, name, status, value in lines:
        if name != "user":
            answers[(sides[uri][0], *case.split("|", 1))][name] = (status == "OK", value)
    return answers


@pytest.mark.parametrize("owner, renewer", CASES)
def test_hives_java_client_tokens_as_the_metastore_gives_them(krb, hive_token_answers, owner, renewer):
    owner, renewer = owner.format(realm=krb.realm), renewer.format(realm=krb.realm)
    answers = {side: dict(hive_token_answers[(side, owner, renewer)]) for side in ("metastore", "proxy")}
    metastore, through_proxy = answers["metastore"], answers["proxy"]
    print(json.dumps(answers, indent=1))
    assert metastore["user"] == through_proxy["user"] == (True, krb.principal("alice"))
    if owner.startswith("bob"):
        assert not metastore["get"][0] and not through_proxy["get"][0], answers
        return
    _expected_difference(metastore, through_proxy)
    assert _outcomes(through_proxy) == _outcomes(metastore)
    assert metastore["get"][1].endswith("kind=HIVE_DELEGATION_TOKEN") and f"owner={owner} " in metastore["get"][1]
    assert metastore["login"] == (True, "served")


@pytest.fixture(scope="module")
def token_task_jar(tmp_path_factory) -> Path:
    """java/hmsproxytest/HiveTokenTask.java compiled against pyspark's jars, as a jar for spark.jars."""
    root = tmp_path_factory.mktemp("hive-token-task")
    classes = root / "classes"
    sources = sorted(str(path) for path in (SOURCE.parent / "hmsproxytest").glob("*.java"))
    compiled = subprocess.run(
        [java_tool("javac"), "-nowarn", "-cp", f"{pyspark_jars()}/*", "-d", str(classes), *sources],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert compiled.returncode == 0, compiled.stderr
    jar = root / "hive-token-task.jar"
    subprocess.run([java_tool("jar"), "cf", str(jar), "-C", str(classes), "."], check=True, capture_output=True, timeout=120)
    return jar


@pytest.mark.spark
def test_sparks_own_token_provider_on_a_standalone_cluster(krb, kerberized, proxy, spark_cluster, token_task_jar, audit_file, tmp_path):
    """A Spark application on the standalone cluster, logged in from alice's keytab: its driver runs
    Spark's HiveDelegationTokenProvider against the metastore and through the proxy, as the keytab's
    user (owner alice@REALM) and as `--proxy-user alice` (owner alice), and its two executors each
    log in with each token by Hive's client."""
    sides = {
        side: [f"thrift://{NAME}:{port}", f"{service}/_HOST@{krb.realm}"] for side, (port, service) in _ends(kerberized, proxy).items()
    }
    before = len(_audit(audit_file)) if audit_file.exists() else 0
    answer = run_spark_job(
        krb,
        tmp_path,
        "tests.support.spark_token_provider_job",
        spark_cluster.master_url,
        "alice",
        str(krb.krb5_conf),
        str(token_task_jar),
        json.dumps(sides),
    )
    print(json.dumps(answer, indent=1))
    assert answer["user"] == krb.principal("alice")
    assert answer["spark_logged_in"] is False  # standalone: spark-submit leaves spark.kerberos.keytab alone; the driver logs in
    for side, (_, service) in sides.items():
        # --proxy-user alice: the provider calls as the real user (alice@REALM), so "alice" is her own token too
        for form, owner in (("full", krb.principal("alice")), ("short", "alice")):
            got = answer[side][form]
            assert got["token"], f"{side}, {form}: Spark's provider got no token (its warning is in the driver's log)"
            recorded = _recorded(got["token"])
            assert recorded == f"owner={owner} renewer={service.split('/')[0]} realUser=", (side, form, recorded)
            assert got["executors"] == ["executor 0\tserved", "executor 1\tserved"], (side, form, got)
    logins = [line for line in _audit(audit_file)[before:] if line["method"] == "get_all_databases"]
    assert len(logins) >= 2 and {line["user"] for line in logins} == {"alice"}, logins


def test_a_stranger_may_not_cancel_where_hive_lets_anyone(krb, kerberized, proxy, kerberos_env):
    """Hive's metastore cancels any token for any authenticated caller (its TokenStoreDelegationTokenSecretManager
    checks no one); the proxy keeps Hadoop's rule: the owner or the renewer, on short names."""
    answers = {}
    for side, (port, service) in _ends(kerberized, proxy).items():
        krb.kinit("alice", kerberos_env)
        client, transport = independent_client(port, service=service, host=NAME)
        try:
            token_str = client.get_delegation_token(krb.principal("alice"), "alice")
        finally:
            transport.close()
        krb.kinit("dave", kerberos_env)
        client, transport = independent_client(port, service=service, host=NAME)
        steps: dict[str, tuple[bool, str]] = {}
        try:
            _step(steps, "cancel", lambda: client.cancel_delegation_token(token_str) or "cancelled")  # noqa: B023 - run at once
        finally:
            transport.close()
        answers[side] = steps["cancel"]
    assert answers["metastore"] == (True, "cancelled")
    assert answers["proxy"] == (False, f"dave is not allowed to cancel a token of {krb.principal('alice')} (renewer alice)")


def test_the_proxy_bound_to_an_address_takes_the_machines_name_for_host(krb, kerberized, proxy, kerberos_env):
    """hmsproxy/_HOST@REALM on a proxy bound to 127.0.0.1 is hmsproxy/NAME, as hive/_HOST@REALM is
    hive/NAME on the metastore: a client dialling either by NAME is accepted."""
    assert proxy.handler.config.server.sasl.principal == f"hmsproxy/_HOST@{krb.realm}" and proxy.host == "127.0.0.1"
    assert proxy._kerberos.principal == f"hmsproxy/{NAME}@{krb.realm}"
    krb.kinit("alice", kerberos_env)
    for side, (port, service) in _ends(kerberized, proxy).items():
        client, transport = independent_client(port, service=service, host=NAME)
        try:
            assert "default" in client.get_all_databases(), side
        finally:
            transport.close()

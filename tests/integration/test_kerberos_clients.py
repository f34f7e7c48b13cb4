"""hmsproxy's own clients towards a Kerberized proxy port (server.sasl), as the caller's ticket cache.

`hmsproxy sql --sasl --principal`, HmsProxyClient(sasl_principal=...) and protocol/client.open_client
(the streaming API's and the jobs' connection) negotiate SASL GSSAPI with the ticket `kinit -kt`
put in the test's own cache; the proxy takes alice from it whatever `--user` claims (the audit
says so). Without a ticket the command is refused with the proxy's principal and Kerberos' reason.
The proxy and its Kerberized Hive 2.3 metastore are test_kerberos_inbound.py's, one pair for this module.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import uuid
from pathlib import Path
from urllib.parse import urlparse

import pyarrow.parquet as pq
import pytest

from hmsproxy.clients.proxy import HmsProxyClient
from hmsproxy.protocol.client import open_client
from hmsproxy.protocol.sasl import SaslError
from hmsproxy.streaming import DelimitedInputWriter, HiveEndPoint
from hmsproxy.testing.builders import parquet_table
from tests.integration.test_cli import HMSPROXY
from tests.integration.test_kerberos_inbound import CORE_SITE, _serve, audit_file, kerberized, realm, token_fetch  # noqa: F401 - fixtures

#: The proxy's principal as a client names it: `_HOST` is the URI's host.
PROXY_PRINCIPAL = "hmsproxy/_HOST@{realm}"


@pytest.fixture(scope="module")
def proxy_server(realm, kerberized, audit_file):  # noqa: F811 - the imported fixtures
    with _serve(realm, kerberized, audit_file) as server:
        yield server


def _uri(server) -> str:
    return f"thrift://localhost:{server.port}"  # the host the proxy's principal names


def _audit_users(audit_file, method: str, since: int) -> set[str]:  # noqa: F811
    lines = [json.loads(line) for line in audit_file.read_text().splitlines()[since:]]
    return {line["user"] for line in lines if line["method"] == method}


def _lines(audit_file) -> int:  # noqa: F811
    return len(audit_file.read_text().splitlines()) if audit_file.exists() else 0


def _sql(server, realm, *args: str) -> subprocess.CompletedProcess:  # noqa: F811
    cmd = [*HMSPROXY, "sql", "--uri", _uri(server), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


def test_hmsproxy_sql_with_a_ticket_runs_as_the_ticket_says(proxy_server, realm, kerberos_env, audit_file):  # noqa: F811
    realm.kinit("alice", kerberos_env)
    since = _lines(audit_file)
    principal = PROXY_PRINCIPAL.format(realm=realm.realm)
    done = _sql(proxy_server, realm, "--sasl", "--principal", principal, "--user", "mallory", "-e", "SHOW REMOTE DATABASES")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip(), "a result table"
    assert _audit_users(audit_file, "hmsproxy_execute_script", since) == {"alice"}


def test_hmsproxy_sql_without_a_ticket_is_refused_with_the_reason(proxy_server, realm, kerberos_env):  # noqa: F811
    principal = PROXY_PRINCIPAL.format(realm=realm.realm)
    done = _sql(proxy_server, realm, "--sasl", "--principal", principal, "-e", "SHOW REMOTE DATABASES")
    assert done.returncode == 1
    assert f"hmsproxy/localhost@{realm.realm}" in done.stderr, done.stderr
    assert "kinit" in done.stderr and "credentials" in done.stderr.lower(), done.stderr  # Kerberos' own words: no credentials


def test_hmsproxy_sql_without_sasl_gets_no_answer_from_a_kerberized_port(proxy_server, realm, kerberos_env):  # noqa: F811
    done = _sql(proxy_server, realm, "-e", "SHOW REMOTE DATABASES")
    assert done.returncode == 1 and "can't run statements through" in done.stderr, done.stderr


def test_the_python_client_with_a_ticket(proxy_server, realm, kerberos_env, audit_file):  # noqa: F811
    realm.kinit("alice", kerberos_env)
    since = _lines(audit_file)
    with HmsProxyClient(_uri(proxy_server), user="mallory", sasl_principal=PROXY_PRINCIPAL.format(realm=realm.realm)) as client:
        [shown] = client.execute("SHOW REMOTE DATABASES")
        assert shown.columns
    assert _audit_users(audit_file, "hmsproxy_execute_script", since) == {"alice"}


def test_open_client_without_a_ticket_names_the_principal(proxy_server, realm, kerberos_env):  # noqa: F811
    with pytest.raises(SaslError, match=f"hmsproxy/localhost@{realm.realm}.*kinit"):
        open_client("localhost", proxy_server.port, user="x", timeout_s=30, sasl_principal=PROXY_PRINCIPAL.format(realm=realm.realm))


def test_a_qop_the_proxy_does_not_offer_is_refused_naming_the_proxy(realm, kerberized, kerberos_env, tmp_path):  # noqa: F811
    """The clients ask for QOP auth; a proxy offering auth-conf only refuses them, and the error
    names the proxy and its setting, not a metastore's."""
    realm.kinit("alice", kerberos_env)
    with _serve(realm, kerberized, tmp_path / "audit.log", qop="auth-conf") as server:
        with pytest.raises(Exception, match=r"the proxy offers QOP auth-conf, not auth \(the proxy's server.sasl.qop\)") as raised:
            HmsProxyClient(_uri(server), sasl_principal=PROXY_PRINCIPAL.format(realm=realm.realm)).execute("SHOW REMOTE DATABASES")
        assert "metastore" not in str(raised.value)


def test_the_streaming_api_commits_a_transaction_through_the_kerberized_proxy(proxy_server, realm, kerberos_env, audit_file, tmp_path):  # noqa: F811
    realm.kinit("alice", kerberos_env)
    principal = PROXY_PRINCIPAL.format(realm=realm.realm)
    table = f"stream_{uuid.uuid4().hex[:8]}"
    location = (tmp_path / table).as_uri()
    client = open_client("localhost", proxy_server.port, user="alice", timeout_s=60, sasl_principal=principal)
    with contextlib.closing(client):
        client.create_table(parquet_table("default", table, location, columns=(("id", "int"), ("msg", "string"))))
    since = _lines(audit_file)
    ep = HiveEndPoint(_uri(proxy_server), "default", table)
    conn = ep.new_connection(user="alice", sasl_principal=principal)
    try:
        batch = conn.fetch_transaction_batch(1, DelimitedInputWriter(["id", "msg"], ",", ep))
        batch.begin_next_transaction()
        batch.write(b"1,through Kerberos")
        batch.commit()
        batch.close()
    finally:
        conn.close()
    root = Path(urlparse(location).path)
    files = [p for p in root.iterdir() if p.is_file() and not p.name.startswith(("_", "."))]
    assert sorted((r["id"], r["msg"]) for f in files for r in pq.read_table(f).to_pylist()) == [(1, "through Kerberos")]
    assert _audit_users(audit_file, "commit_txn", since) == {"alice"}


def _hive_cli_kerberos_args(realm) -> list[str]:  # noqa: F811
    """The Hive CLI's settings for a Kerberized metastore, the proxy's principal as its principal."""
    return [
        "--hiveconf", "hive.metastore.sasl.enabled=true",
        "--hiveconf", f"hive.metastore.kerberos.principal={PROXY_PRINCIPAL.format(realm=realm.realm)}",
        # A fetch task asks for file-system tokens when Hadoop's security is on, naming a renewer;
        # the local file system gives none, but the renewer's name must be there.
        "--hiveconf", f"yarn.resourcemanager.principal=rm/localhost@{realm.realm}",
    ]  # fmt: skip


def test_the_hive_cli_with_a_ticket_through_the_kerberized_proxy(proxy_server, realm, kerberos_env, audit_file, hive_cli):  # noqa: F811
    """The real Hive 2.3 CLI with hive.metastore.sasl.enabled and the proxy's principal, logged in by
    the ticket cache `kinit` filled (Hadoop's UGI reads KRB5CCNAME): databases shown, a table
    created and described, all as alice."""
    realm.kinit("alice", kerberos_env)
    since = _lines(audit_file)
    db = f"hivecli_krb_{uuid.uuid4().hex[:8]}"
    script = f"SHOW DATABASES;\nCREATE DATABASE {db};\nCREATE TABLE {db}.t (id INT, name STRING);\nDESCRIBE {db}.t;\nDROP DATABASE {db} CASCADE;\n"
    env = {"JDK_JAVA_OPTIONS": f"-Djava.security.krb5.conf={realm.krb5_conf}"}
    done = hive_cli(_uri(proxy_server), script, args=_hive_cli_kerberos_args(realm), env=env, conf={"core-site.xml": CORE_SITE})
    assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-6000:]}"
    lines = [line.split() for line in done.stdout.splitlines()]
    assert ["default"] in lines, done.stdout
    assert ["id", "int"] in lines and ["name", "string"] in lines, done.stdout
    mine = [json.loads(line) for line in audit_file.read_text().splitlines()[since:] if db in line]
    methods = {line["method"] for line in mine}
    assert "create_database" in methods and any(m.startswith("create_table") for m in methods), methods
    assert {line["user"] for line in mine} == {"alice"}, mine


def test_the_hive_cli_with_no_ticket_logs_in_with_a_token_file(proxy_server, realm, kerberos_env, audit_file, hive_cli, tmp_path):  # noqa: F811
    """`hmsproxy token fetch` (alice's ticket) writes Hadoop's token file; the real Hive 2.3 CLI, with
    no Kerberos ticket at all and HADOOP_TOKEN_FILE_LOCATION at that file, logs in to the proxy over
    DIGEST-MD5 with the token (Hive's client takes the token whose service is its
    hive.metastore.token.signature, empty by default) and works as alice."""
    realm.kinit("alice", kerberos_env)
    token_file = tmp_path / "tokens" / "hive.token"
    fetched = token_fetch(_uri(proxy_server), realm, token_file)
    assert fetched.returncode == 0, fetched.stderr
    assert token_file.read_bytes().startswith(b"HDTS\x00") and token_file.stat().st_mode & 0o077 == 0
    since = _lines(audit_file)
    db = f"hivecli_tok_{uuid.uuid4().hex[:8]}"
    script = f"SHOW DATABASES;\nCREATE DATABASE {db};\nCREATE TABLE {db}.t (id INT);\nDESCRIBE {db}.t;\nDROP DATABASE {db} CASCADE;\n"
    env = {
        "JDK_JAVA_OPTIONS": f"-Djava.security.krb5.conf={realm.krb5_conf}",
        "KRB5CCNAME": f"FILE:{tmp_path / 'no-ticket-here'}",  # nothing to log in with but the token
        "HADOOP_TOKEN_FILE_LOCATION": str(token_file),
    }
    done = hive_cli(_uri(proxy_server), script, args=_hive_cli_kerberos_args(realm), env=env, conf={"core-site.xml": CORE_SITE})
    assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-6000:]}"
    lines = [line.split() for line in done.stdout.splitlines()]
    assert ["default"] in lines and ["id", "int"] in lines, done.stdout
    mine = [json.loads(line) for line in audit_file.read_text().splitlines()[since:] if db in line]
    assert "create_database" in {line["method"] for line in mine}, mine
    assert {line["user"] for line in mine} == {"alice"}, mine


def test_token_fetch_without_a_ticket_is_refused_naming_the_cause(proxy_server, realm, kerberos_env, tmp_path):  # noqa: F811
    fetched = token_fetch(_uri(proxy_server), realm, tmp_path / "t")
    assert fetched.returncode == 1 and "can't get a delegation token from" in fetched.stderr and "kinit" in fetched.stderr, fetched.stderr
    assert not (tmp_path / "t").exists()

"""`hmsproxy stream`, `hmsproxy job` and `hmsproxy lookup` towards a Kerberized proxy port, as the
caller's ticket cache (`--sasl --principal`, as `hmsproxy sql`; test_kerberos_clients.py has that one).

The real KDC, the proxy (server.sasl) in front of a Kerberized Hive 2.3 metastore (test_kerberos_inbound.py's
pair, one for this module). Each command runs in its own process with alice's ticket while claiming
`--user mallory` where it takes one, and the audit names alice for every call it made; without a
ticket each is refused with the proxy's principal and Kerberos' reason. The job's SparkSession (a
local one the job starts) reaches the proxy as a Kerberized metastore from the same ticket cache, with
no Hadoop configuration directory: the job sets what Spark needs itself.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hmsproxy.clients.proxy import HmsProxyClient
from hmsproxy.protocol.client import open_client
from hmsproxy.testing.builders import parquet_table
from tests.integration.test_cli import HMSPROXY
from tests.integration.test_kerberos_clients import PROXY_PRINCIPAL, _lines, _uri, proxy_server  # noqa: F401 - fixture
from tests.integration.test_kerberos_inbound import (  # noqa: F401 - fixtures
    REPO,
    SPARK_TIMEOUT_S,
    audit_file,
    kerberized,
    realm,
    run_spark_job,
    token_fetch,
)


def _principal(realm) -> str:  # noqa: F811
    return PROXY_PRINCIPAL.format(realm=realm.realm)


def _users_naming(audit_file, name: str, since: int) -> tuple[set[str], set[str]]:  # noqa: F811
    """(users, methods) of the audit lines since `since` that mention `name`."""
    lines = [json.loads(line) for line in audit_file.read_text().splitlines()[since:] if name in line]
    return {line["user"] for line in lines}, {line["method"] for line in lines}


def _hmsproxy(args: list[str], tmp_path: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return _run([*HMSPROXY, *args], tmp_path, timeout)


def _run(argv: list[str], tmp_path: Path, timeout: float) -> subprocess.CompletedProcess:
    """ARGV in its own process group (a job's Spark JVM is killed with it), this test's Kerberos
    environment (KRB5_CONFIG, KRB5CCNAME) inherited."""
    env = dict(os.environ, PYTHONPATH=str(REPO), SPARK_LOCAL_IP="127.0.0.1")
    for key in ("HADOOP_CONF_DIR", "JDK_JAVA_OPTIONS"):
        env.pop(key, None)  # what the job's Spark needs, it sets itself
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=env, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 9)
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def _refused(done: subprocess.CompletedProcess, realm) -> None:  # noqa: F811
    """Exit 1, and the message names the proxy's principal, the cure and Kerberos' own reason."""
    assert done.returncode == 1, (done.returncode, done.stderr)
    assert f"hmsproxy/localhost@{realm.realm}" in done.stderr, done.stderr
    assert "kinit" in done.stderr and "credentials" in done.stderr.lower(), done.stderr
    assert "Traceback" not in done.stderr, done.stderr


def _create_table(server, realm, tmp_path, name: str, rows: pa.Table | None = None) -> Path:  # noqa: F811
    """default.NAME, a Parquet table (id, msg) or `rows`' columns, created as alice; its directory."""
    location = tmp_path / name
    location.mkdir()
    columns = (("id", "bigint"), ("msg", "string"))
    if rows is not None:
        pq.write_table(rows, location / "part-0.parquet")
    client = open_client("localhost", server.port, user="alice", timeout_s=60, sasl_principal=_principal(realm))
    with contextlib.closing(client):
        client.create_table(parquet_table("default", name, location.as_uri(), columns=columns))
    return location


def _job_session(server, realm, table: str, tmp_path: Path) -> dict:  # noqa: F811
    """tests/support/kerberos_job_session.py's answer for `table`, in its own process, as the ticket cache says."""
    args = ["-m", "tests.support.kerberos_job_session", _uri(server), _principal(realm), table]
    done = _run([sys.executable, *args], tmp_path, SPARK_TIMEOUT_S)
    results = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and results, f"{done.stdout[-3000:]}\n{done.stderr[-6000:]}"
    return json.loads(results[-1][len("RESULT ") :])


def _rows(location: Path) -> list[tuple]:
    files = [p for p in location.rglob("*.parquet") if not any(part.startswith(("_", ".")) for part in p.relative_to(location).parts)]
    return sorted((r["id"], r["msg"]) for f in files for r in pq.read_table(f).to_pylist())


def test_hmsproxy_stream_ingests_a_csv_as_the_ticket_says(proxy_server, realm, kerberos_env, audit_file, tmp_path):  # noqa: F811
    realm.kinit("alice", kerberos_env)
    table = f"kstream_{uuid.uuid4().hex[:8]}"
    location = _create_table(proxy_server, realm, tmp_path, table)
    (tmp_path / "in.csv").write_text("1,one\n2,two\n3,three\n")
    since = _lines(audit_file)
    args = ["stream", f"default.{table}", "--input", "in.csv", "--uri", _uri(proxy_server), "--user", "mallory"]
    done = _hmsproxy([*args, "--sasl", "--principal", _principal(realm)], tmp_path)
    assert done.returncode == 0, done.stderr
    assert _rows(location) == [(1, "one"), (2, "two"), (3, "three")]
    users, methods = _users_naming(audit_file, table, since)
    assert users == {"alice"}, users
    assert {"get_table", "lock"} <= methods, methods


def test_hmsproxy_stream_without_a_ticket_is_refused_with_the_reason(proxy_server, realm, kerberos_env, tmp_path):  # noqa: F811
    (tmp_path / "in.csv").write_text("1,one\n")
    args = ["stream", "default.anything", "--input", "in.csv", "--uri", _uri(proxy_server)]
    _refused(_hmsproxy([*args, "--sasl", "--principal", _principal(realm)], tmp_path), realm)
    assert not (tmp_path / "rejected.txt").exists()


def test_stream_job_and_lookup_want_both_options(tmp_path):
    """--sasl without --principal (or the reverse) is a usage error, before any connection."""
    for args in (
        ["stream", "default.t", "--sasl"],
        ["lookup", "t", "--where", "id=1", "--principal", "p"],
        ["job", "--sasl", "compact", "t"],
    ):
        done = _hmsproxy([*args, "--uri", "thrift://127.0.0.1:1"], tmp_path)
        assert done.returncode == 2 and "--sasl and --principal go together" in done.stderr, (args, done.stderr)


@pytest.mark.spark
def test_hmsproxy_job_rebuilds_an_index_and_lookup_reads_it_as_the_ticket_says(proxy_server, realm, kerberos_env, audit_file, tmp_path):  # noqa: F811
    """CREATE INDEX … DEFERRED through the Kerberized port, then `hmsproxy job rebuild-index`: its
    connections and its local SparkSession (hive.metastore.sasl.enabled, the proxy's principal,
    Hadoop's Kerberos login from the ticket cache) as alice; then `hmsproxy lookup` reads the rows
    through the index, as alice too."""
    realm.kinit("alice", kerberos_env)
    table = f"kindex_{uuid.uuid4().hex[:8]}"
    rows = pa.table({"id": pa.array(range(20), pa.int64()), "msg": [f"m{i}" for i in range(20)]})
    location = _create_table(proxy_server, realm, tmp_path, table, rows)
    pq.write_table(
        pa.table({"id": pa.array(range(20, 30), pa.int64()), "msg": [f"m{i}" for i in range(20, 30)]}), location / "part-1.parquet"
    )
    with HmsProxyClient(_uri(proxy_server), sasl_principal=_principal(realm)) as client:
        client.execute(f"CREATE INDEX id_idx ON TABLE default.{table} (id) AS 'COMPACT' WITH DEFERRED REBUILD")
    since = _lines(audit_file)
    principal = ["--sasl", "--principal", _principal(realm)]
    job = _hmsproxy(["job", "rebuild-index", f"default.{table}.id_idx", "--uri", _uri(proxy_server), *principal], tmp_path, SPARK_TIMEOUT_S)
    assert job.returncode == 0, f"{job.stdout[-3000:]}\n{job.stderr[-6000:]}"
    assert f"rebuild-index default.{table}.id_idx: 1 built" in job.stdout, job.stdout
    users, methods = _users_naming(audit_file, table, since)
    assert users == {"alice"}, users
    assert "get_index_by_name" in methods, methods

    since = _lines(audit_file)
    args = ["lookup", f"default.{table}", "--where", "id=7", "--format", "json", "--uri", _uri(proxy_server), "--user", "mallory"]
    found = _hmsproxy([*args, *principal], tmp_path)
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout) == [{"id": 7, "msg": "m7"}]
    assert "index id_idx" in found.stderr, found.stderr
    users, _ = _users_naming(audit_file, table, since)
    assert users == {"alice"}, users

    # plain Spark SQL in a job's session: the Spark extension reads the index over its own Kerberized connection
    since = _lines(audit_file)
    answer = _job_session(proxy_server, realm, f"default.{table}", tmp_path)
    assert answer["plain_sql"] == answer["pruned"] == [[2, "m2"]], answer
    assert answer["extension"] == ["hmsproxy index id_idx: 1 of 2 files"], answer
    users, methods = _users_naming(audit_file, table, since)
    assert "get_indexes" in methods and users == {"alice"}, (users, methods)

    # and from a session with no Kerberos login, only a delegation token (a cluster's driver): DIGEST-MD5
    token_file = tmp_path / "spark.token"
    assert token_fetch(_uri(proxy_server), realm, token_file).returncode == 0
    since = _lines(audit_file)
    db = f"ktoken_{uuid.uuid4().hex[:8]}"
    answer = run_spark_job(
        realm,
        tmp_path,
        "tests.support.kerberos_spark_job",
        _uri(proxy_server),
        None,
        str(tmp_path / "wh"),
        db,
        f"default.{table}",
        token_file=token_file,
    )
    assert answer["indexed_rows"] == [[2, "m2"]] and answer["extension"] == ["hmsproxy index id_idx: 1 of 2 files"], answer
    users, methods = _users_naming(audit_file, table, since)
    assert "get_indexes" in methods and users == {"alice"}, (users, methods)


def test_hmsproxy_job_and_lookup_without_a_ticket_are_refused_with_the_reason(proxy_server, realm, kerberos_env, tmp_path):  # noqa: F811
    """Refused before any Spark starts (the job checks its index on the proxy first)."""
    principal = ["--sasl", "--principal", _principal(realm)]
    job = _hmsproxy(["job", "rebuild-index", "default.t.idx", "--uri", _uri(proxy_server), *principal], tmp_path)
    _refused(job, realm)
    assert job.stderr.startswith("hmsproxy job rebuild-index: can't reach the metastore at "), job.stderr
    assert "skew-layout" not in job.stderr + job.stdout, job.stderr  # the connection's name, not the job's
    lookup = _hmsproxy(["lookup", "default.t", "--where", "id=1", "--uri", _uri(proxy_server), *principal], tmp_path)
    _refused(lookup, realm)


@pytest.mark.spark
def test_a_jobs_spark_session_reads_through_the_kerberized_proxy_as_the_ticket_says(
    proxy_server,  # noqa: F811
    realm,  # noqa: F811
    kerberos_env,
    audit_file,  # noqa: F811
    tmp_path,
):
    """The Spark side of a job: the session JobContext starts for `--sasl --principal` uses the proxy as a
    Kerberized metastore (hive.metastore.sasl.enabled, the proxy's principal, Java's GSSAPI from the
    ticket cache, the JVM told KRB5_CONFIG's realm); its catalog's calls are alice's. The Spark helpers
    (clients/spark.py: a pruned read, hmsproxy's statements) on that session find the principal in
    its settings and are alice too."""
    realm.kinit("alice", kerberos_env)
    table = f"ksession_{uuid.uuid4().hex[:8]}"
    rows = pa.table({"id": pa.array([1, 2], pa.int64()), "msg": ["a", "b"]})
    _create_table(proxy_server, realm, tmp_path, table, rows)
    since = _lines(audit_file)
    answer = _job_session(proxy_server, realm, f"default.{table}", tmp_path)
    assert answer["rows"] == [[1, "a"], [2, "b"]] and answer["pruned"] == answer["plain_sql"] == [[2, "b"]], answer
    assert answer["extension"] == [], answer  # asked the proxy: no index on this table
    assert answer["remote_columns"], answer  # SHOW REMOTE DATABASES answered through the Kerberized port
    users, methods = _users_naming(audit_file, table, since)
    assert {"get_table", "get_indexes"} <= methods, methods  # get_indexes: the Spark extension's Kerberized connection
    assert users == {"alice"}, users
    assert _users_naming(audit_file, "hmsproxy_execute_script", since)[0] == {"alice"}

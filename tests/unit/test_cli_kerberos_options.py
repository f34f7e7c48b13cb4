"""`--sasl --principal` on every command that talks to a proxy (stream, job, lookup, sql): one without
the other is a usage error; a command without them loads no Kerberos code (gssapi, the SASL
client), as `hmsproxy sql`'s import guard asks; the job's SparkSession gets Hive's SASL settings."""

from __future__ import annotations

import argparse
import io

import pytest

from hmsproxy import cli
from hmsproxy.dev.ports import free_port
from hmsproxy.jobs.cli import build_parser, run_job_command
from hmsproxy.jobs.context import JobContext
from hmsproxy.jobs.session import DRIVER_JAVA_OPTIONS, kerberized_conf
from hmsproxy.protocol.sasl_options import TOGETHER, add_sasl_options, sasl_principal
from tests.support.cli_imports import modules_loaded_by
from tests.unit.test_job_context_checks_first import metastore  # noqa: F401 - fixture

#: gssapi and the code that loads it (protocol/sasl.py, the frames, is plain Python: errors are caught by its class).
KERBEROS_MODULES = ("gssapi", "hmsproxy.protocol.kerberos_client")


def _parsed(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_sasl_options(parser)
    return parser.parse_args(argv)


def test_the_principal_only_with_sasl():
    assert sasl_principal(_parsed()) is None
    assert sasl_principal(_parsed("--sasl", "--principal", "hive/_HOST@R")) == "hive/_HOST@R"
    for argv in (["--sasl"], ["--principal", "hive/_HOST@R"]):
        with pytest.raises(ValueError, match="go together"):
            sasl_principal(_parsed(*argv))


@pytest.mark.parametrize(
    "argv",
    [
        ["stream", "db.t", "--sasl"],
        ["lookup", "db.t", "--where", "id=1", "--principal", "hive/_HOST@R"],
        ["sql", "-e", "SHOW REMOTE DATABASES", "--sasl"],
    ],
)
def test_one_option_without_the_other_is_a_usage_error(argv, capsys):
    assert cli.main([*argv, "--uri", f"thrift://127.0.0.1:{free_port()}"]) == 2
    assert TOGETHER in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [
        ["stream", "db.t", "--input", "/dev/null"],
        ["lookup", "db.t", "--where", "id=1"],
        ["sql", "-e", "SHOW REMOTE DATABASES"],
    ],
)
def test_commands_without_sasl_load_no_kerberos_code(argv, tmp_path):
    status, modules = modules_loaded_by([*argv, "--uri", f"thrift://127.0.0.1:{free_port()}"], tmp_path)
    assert status == 1  # nothing listens: refused after every import the command makes
    assert [m for m in modules if m.split(".")[0] == "gssapi" or m in KERBEROS_MODULES] == []


def test_the_guard_sees_kerberos_code_when_sasl_is_given(tmp_path):
    closed = f"thrift://127.0.0.1:{free_port()}"
    status, modules = modules_loaded_by(["stream", "db.t", "--uri", closed, "--sasl", "--principal", "hive/_HOST@R"], tmp_path)
    assert status == 1
    assert "hmsproxy.protocol.kerberos_client" in modules


def test_the_jobs_spark_session_is_told_the_proxy_is_kerberized(monkeypatch):
    monkeypatch.setenv("KRB5_CONFIG", "/etc/realm/krb5.conf:/etc/krb5.conf")
    conf = kerberized_conf("hive/_HOST@R", {"spark.executor.memory": "1g"})
    assert conf["spark.hadoop.hive.metastore.sasl.enabled"] == "true"
    assert conf["spark.hadoop.hive.metastore.kerberos.principal"] == "hive/_HOST@R"
    assert conf["spark.executor.memory"] == "1g"
    java = conf[DRIVER_JAVA_OPTIONS].split()
    assert java == ["-Djavax.security.auth.useSubjectCredsOnly=false", "-Djava.security.krb5.conf=/etc/realm/krb5.conf"]


def test_settings_the_user_gave_win(monkeypatch):
    monkeypatch.delenv("KRB5_CONFIG", raising=False)
    given = {
        "spark.hadoop.hive.metastore.kerberos.principal": "other/_HOST@R",
        DRIVER_JAVA_OPTIONS: "-Xss4m -Djava.security.krb5.conf=/mine",
    }
    conf = kerberized_conf("hive/_HOST@R", given)
    assert conf["spark.hadoop.hive.metastore.kerberos.principal"] == "other/_HOST@R"
    assert conf[DRIVER_JAVA_OPTIONS] == "-Xss4m -Djava.security.krb5.conf=/mine -Djavax.security.auth.useSubjectCredsOnly=false"
    assert (
        kerberized_conf("p", {DRIVER_JAVA_OPTIONS: "-Djavax.security.auth.useSubjectCredsOnly=true"})[DRIVER_JAVA_OPTIONS].count(
            "useSubject"
        )
        == 1
    )


def test_a_job_with_sasl_checks_first_on_a_kerberized_connection(metastore, monkeypatch):  # noqa: F811
    """The principal reaches the job's connections (the fake records it) before any Spark starts."""
    _, connected = metastore
    made: list[JobContext] = []
    real = JobContext

    def context(*args, **kwargs):
        made.append(real(*args, stdout=io.StringIO(), stderr=io.StringIO(), **kwargs))
        return made[-1]

    monkeypatch.setattr("hmsproxy.jobs.context.JobContext", context)
    args = build_parser().parse_args(["--sasl", "--principal", "hive/_HOST@R", "rebuild-index", "db.t.by_id"])
    assert run_job_command(args) == 1
    assert connected == ["thrift://127.0.0.1:9083 as hive/_HOST@R"]
    assert made[0].spark_conf["spark.hadoop.hive.metastore.sasl.enabled"] == "true"

"""`hmsproxy sql` tells Spark's and Hive's SQL from hmsproxy's statements, and its --help lists them all."""

from __future__ import annotations

import pytest

from hmsproxy import cli
from hmsproxy.dev.ports import free_port
from hmsproxy.features import builtin_grammar
from tests.support.cli_imports import modules_loaded_by, unwanted


@pytest.mark.parametrize("text", ["SELECT 1", "show tables", "  -- a comment\nSHOW DATABASES;", "INSERT INTO t VALUES (1)"])
def test_spark_sql_is_sent_to_spark_in_one_line_without_asking_the_proxy(text, capsys):
    closed = f"thrift://127.0.0.1:{free_port()}"  # nothing listens: the answer can't come from a proxy
    assert cli.main(["sql", "--uri", closed, "-e", text]) == 1
    err = capsys.readouterr().err
    first = text.split("\n")[-1].rstrip(";") if "--" in text else text
    assert err == (
        f"hmsproxy: {first!r} is Spark SQL or Hive SQL, not one of hmsproxy's statements: run it in Spark or Hive, "
        "whose metastore is the proxy (`hmsproxy sql --help` lists hmsproxy's own)\n"
    )


def test_hmsproxy_statements_still_go_to_the_proxy(capsys):
    closed = f"thrift://127.0.0.1:{free_port()}"
    assert cli.main(["sql", "--uri", closed, "-e", "SHOW REMOTE DATABASES"]) == 1
    assert capsys.readouterr().err.startswith(f"hmsproxy: can't run statements through {closed}")


@pytest.mark.parametrize("flags", [["--sasl"], ["--principal", "hive/_HOST@EXAMPLE.COM"]])
def test_sasl_and_principal_go_together(flags, capsys):
    closed = f"thrift://127.0.0.1:{free_port()}"
    assert cli.main(["sql", "--uri", closed, *flags, "-e", "SHOW REMOTE DATABASES"]) == 2
    assert "--sasl and --principal go together" in capsys.readouterr().err


def test_the_statement_a_syntax_error_is_in_is_the_one_named():
    script = "SHOW REMOTE DATABASES;\nSHOW REMOTE TABLES IN db; SELECT *\n  FROM t"
    assert cli._spark_sql(script, 2, 28) == "SELECT *"
    assert cli._spark_sql(script, 2, 6) is None  # in SHOW REMOTE TABLES: a real syntax error, said as one
    assert cli._spark_sql("SHOW REMOTE DATABSES", 1, 13) is None
    assert cli._spark_sql(";\n") is None  # nothing to run is not Spark SQL


def test_help_lists_every_family_of_statements(capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["sql", "--help"])
    assert done.value.code == 0
    out = " ".join(capsys.readouterr().out.split())  # as one line: the families are wrapped
    summaries = [s.summary for s in builtin_grammar().sets]
    assert len(summaries) == 4 and all(summaries)
    for summary in summaries:
        assert " ".join(summary.split()) in out


@pytest.mark.parametrize("statement", ["SHOW REMOTE DATABASES", "SELECT 1"])
def test_sql_loads_no_thrift_library_parser_or_feature(statement, tmp_path):
    """`hmsproxy sql`'s start-up is its imports: no thriftpy2 (its package loads its IDL parser), no
    lark grammar, no feature's statements, no YAML, no Spark (tests/support/cli_imports.py)."""
    closed = f"thrift://127.0.0.1:{free_port()}"
    status, modules = modules_loaded_by(["sql", "--uri", closed, "-e", statement], tmp_path)
    assert status == 1  # nothing listens / Spark SQL: refused either way, after every import it makes
    assert "hmsproxy.cli" in modules and "hmsproxy.features.remotes.starts" in modules  # the guard sees the path
    assert unwanted(modules) == []


def test_the_guard_sees_what_other_commands_load(tmp_path):
    """The same check on `sql --help` (which composes the grammar): it names lark and the statements."""
    status, modules = modules_loaded_by(["sql", "--help"], tmp_path)
    assert status == 0
    assert {"lark", "hmsproxy.features.remotes.statements"} <= set(unwanted(modules))

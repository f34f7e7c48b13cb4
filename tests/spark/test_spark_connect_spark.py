"""hmsproxy's Spark helpers (`sql`, `lookup`, `read`) and `hmsproxy job` on Spark Connect: a real
Connect server from pyspark's wheel whose Hive catalog is the proxy, clients in their own processes
(tests/support/connect_client.py), every answer compared with the classic session's."""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

import pytest

from hmsproxy.clients.spark import lookup, read, sql
from hmsproxy.dev.ports import free_ports
from hmsproxy.features.skew.layout import from_parameters
from hmsproxy.jobs.cli import build_parser, run_job_command
from hmsproxy.jobs.context import JobContext
from tests.spark import test_index_rebuild_spark as index_e2e
from tests.spark import test_jobs_spark as compact_e2e
from tests.spark import test_skew_layout_spark as skew_e2e
from tests.support.children import run_in_group
from tests.support.required import unavailable

pytestmark = pytest.mark.spark

REPO_ROOT = Path(__file__).resolve().parents[2]
HMSPROXY = str(Path(sys.executable).with_name("hmsproxy"))
DB = "on_connect"


@pytest.fixture(scope="module")
def connect_server(proxy, tmp_path_factory):
    from tests.support.spark_connect import connect_available, start_connect_server

    missing = connect_available()
    if missing:
        unavailable(missing)
    root = tmp_path_factory.mktemp("spark-connect")
    server = start_connect_server(root, proxy.uri, root / "warehouse")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def db(spark):
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {DB}")
    return DB


def env() -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED")}
    return dict(clean, PYTHONPATH=str(REPO_ROOT), SPARK_LOCAL_IP="127.0.0.1")


def on_connect(server, tmp_path, *actions) -> list:
    """Each action's rows (lists), run by a Connect client process on `server`."""
    argv = [sys.executable, "-m", "tests.support.connect_client", server.url, json.dumps(actions)]
    done = run_in_group(argv, env(), tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def rows(frame) -> list[list]:
    """A classic frame's rows as the client prints them (JSON's lists, floats and strings)."""
    return sorted(json.loads(json.dumps([list(r) for r in frame.collect()])))


def job_on_connect(server, tmp_path, *job: str):
    return run_in_group([HMSPROXY, "job", "--remote", server.url, *job], env(), tmp_path)


def test_sql_lookup_and_read_on_connect_equal_a_classic_session(spark, proxy, db, connect_server, tmp_path):
    events = index_e2e.make_events(spark, db)
    skewed = skew_e2e.make_table(spark, db)
    skew_e2e.set_skew(proxy, skewed, ["country"], [["US"], ["IN"]])
    status, ctx = skew_e2e.run_job(spark, proxy, skewed)
    assert status == 0, ctx.stderr.getvalue()
    users, countries = (3, 4, 39), ("US", "IN", "C03")

    # On Connect: the index made and built (the build runs on the Connect session), then read.
    created, built, shown, *answers = on_connect(
        connect_server, tmp_path,
        ["sql", f"CREATE INDEX user_idx ON TABLE {events} (user_id) AS 'COMPACT' WITH DEFERRED REBUILD"],
        ["sql", f"ALTER INDEX user_idx ON {events} REBUILD"],
        ["sql", f"SHOW FORMATTED INDEX ON {events}"],
        *[["lookup", events, {"user_id": u}] for u in users],
        ["lookup", events, {"user_id": [3, 7]}],
        *[["read", skewed, {"ds": skew_e2e.DAYS[0], "country": c}] for c in countries],
        ["read", skewed, {"country": "US"}],
        ["sql", f"SELECT count(*) FROM {skewed}"],
    )  # fmt: skip
    assert created[0][0].endswith("ALTER INDEX ... REBUILD builds it")
    assert built[0][0].startswith(f"rebuild-index {events}.user_idx: 3 built, 0 fresh and skipped, 0 failed")
    assert sorted(shown) == rows(sql(spark, f"SHOW FORMATTED INDEX ON {events}"))
    assert set(index_e2e.states(spark, events).values()) == {"fresh"}

    classic = [
        *[lookup(spark, events, user_id=u) for u in users],
        lookup(spark, events, user_id=[3, 7]),
        *[read(spark, skewed, ds=skew_e2e.DAYS[0], country=c) for c in countries],
        read(spark, skewed, country="US"),
        spark.sql(f"SELECT count(*) FROM {skewed}"),
    ]
    assert [sorted(a) for a in answers] == [rows(frame) for frame in classic]
    for user, answer in zip(users, answers):
        assert answer and sorted(answer) == rows(spark.sql(f"SELECT * FROM {events} WHERE user_id = {user}"))


def test_jobs_on_connect_equal_jobs_on_a_classic_session(spark, proxy, proxy_client, db, connect_server, tmp_path):
    _, on_classic = compact_e2e.make_table(spark, db)
    _, remote = compact_e2e.make_table(spark, db)
    before = compact_e2e.Before(spark, proxy_client, db, remote)
    ctx = JobContext(proxy.uri, spark=spark, stdout=io.StringIO(), stderr=io.StringIO())
    assert run_job_command(build_parser().parse_args(["compact", f"{db}.{on_classic}", "--files", "2"]), ctx) == 0
    done = job_on_connect(connect_server, tmp_path, "compact", f"{db}.{remote}", "--files", "2")
    assert done.returncode == 0, done.stderr[-4000:]
    assert f"compact {db}.{remote}: 3 rewritten, 0 skipped, 0 failed; {3 * compact_e2e.ROWS_PER_DAY} rows" in done.stdout
    for ds in compact_e2e.DAYS:
        compact_e2e.assert_compacted(spark, proxy_client, before, db, remote, ds, files=2)
        assert compact_e2e.rows(spark, f"{db}.{remote}", ds) == compact_e2e.rows(spark, f"{db}.{on_classic}", ds)
    compact_e2e.assert_no_leftovers(proxy_client, db, remote)

    skewed = skew_e2e.make_table(spark, db)
    skew_e2e.set_skew(proxy, skewed, ["country"], [["US"], ["IN"]])
    done = job_on_connect(connect_server, tmp_path, "skew-layout", skewed)
    assert done.returncode == 0, done.stderr[-4000:]
    assert f"skew-layout {skewed}: 3 laid out, 0 skipped, 0 failed; {3 * 210} rows" in done.stdout
    for ds in skew_e2e.DAYS:
        record = from_parameters(skew_e2e.partition(proxy, skewed, ds).parameters)
        assert [(g.values, g.rows) for g in record.groups] == [(("US",), 120), (("IN",), 50), (None, 40)]
        pruned = read(spark, skewed, ds=ds, country="IN")
        assert skew_e2e.rows_of(pruned) == skew_e2e.full_scan(spark, skewed, ds=ds, country="IN")
        assert all(Path(f).name.startswith("skew-1-IN-") for f in pruned.inputFiles())

    events = index_e2e.make_events(spark, db)
    sql(spark, f"CREATE INDEX user_idx ON TABLE {events} (user_id) AS 'COMPACT' WITH DEFERRED REBUILD")
    done = job_on_connect(connect_server, tmp_path, "rebuild-index", f"{events}.user_idx")
    assert done.returncode == 0, done.stderr[-4000:]
    assert f"rebuild-index {events}.user_idx: 3 built, 0 fresh and skipped, 0 failed" in done.stdout
    assert set(index_e2e.states(spark, events).values()) == {"fresh"}
    frame = lookup(spark, events, user_id=3)
    assert index_e2e.rows_of(frame) == index_e2e.full_scan(spark, events, "user_id = 3") and len(frame.inputFiles()) == 1


def test_a_connect_server_that_does_not_answer_is_one_line_and_exit_1(proxy, tmp_path):
    [port] = free_ports(1)
    done = run_in_group([HMSPROXY, "job", "compact", f"{DB}.t", "--remote", f"sc://127.0.0.1:{port}"], env(), tmp_path, timeout=120)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"hmsproxy job compact: Spark Connect server sc://127.0.0.1:{port} does not answer (127.0.0.1:{port}: Connection refused): "
        "start it, or give --remote (or SPARK_REMOTE) a running one"
    ]

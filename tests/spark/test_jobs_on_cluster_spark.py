"""The maintenance jobs on a Spark standalone cluster (a master and two workers from pyspark's wheel):
`hmsproxy job NAME --master spark://…` and spark-submit in client deploy mode give what the same job
gives on a local session, with the work done by executors in the workers' own processes.

The jobs run no Python on executors: every cluster run here has PYSPARK_PYTHON (the interpreter
executors would start for Python code) set to a stub that records its start and fails, and the
first test shows the stub does catch an application that runs Python on executors.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
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

pytestmark = pytest.mark.spark

REPO_ROOT = Path(__file__).resolve().parents[2]
HMSPROXY = str(Path(sys.executable).with_name("hmsproxy"))
JOBS_MAIN = str(REPO_ROOT / "hmsproxy" / "jobs" / "__main__.py")
STUB_EXIT = 97
#: Both workers' executors registered before the first task, so the work is spread over both processes.
CLUSTER_CONF = [
    "spark.scheduler.minRegisteredResourcesRatio=1.0",
    "spark.scheduler.maxRegisteredResourcesWaitingTime=120s",
    "spark.ui.enabled=false",
]

PYTHON_ON_EXECUTORS = """
import sys
from pyspark.sql import SparkSession
spark = SparkSession.builder.master(sys.argv[1]).appName("python-on-executors").getOrCreate()
try:
    print(spark.sparkContext.parallelize(range(4), 2).map(lambda x: x + 1).collect())
finally:
    spark.stop()
"""


@pytest.fixture(scope="module")
def db(spark) -> str:
    spark.sql("CREATE DATABASE IF NOT EXISTS jobs_on_cluster")
    return "jobs_on_cluster"


@pytest.fixture
def no_python(tmp_path) -> tuple[str, Path]:
    """(an executable standing in for Python on executors, the file it writes to when started)."""
    marker = tmp_path / "python-started-on-an-executor"
    stub = tmp_path / "no-python"
    stub.write_text(f'#!/bin/sh\necho "$@" >> {marker}\necho "an executor started Python; the jobs must run none" >&2\nexit {STUB_EXIT}\n')
    stub.chmod(0o755)
    return str(stub), marker


def cluster_env(stub: str) -> dict[str, str]:
    return dict(
        os.environ,
        PYTHONPATH=str(REPO_ROOT),
        SPARK_LOCAL_IP="127.0.0.1",
        PYSPARK_PYTHON=stub,  # what executors would start for Python code
        PYSPARK_DRIVER_PYTHON=sys.executable,  # spark-submit's driver: this interpreter, with hmsproxy
    )


def run_job(cluster, stub: str, proxy, tmp_path: Path, *job: str) -> subprocess.CompletedProcess:
    confs = [arg for conf in CLUSTER_CONF for arg in ("--conf", conf)]
    return run_in_group([HMSPROXY, "job", "--uri", proxy.uri, "--master", cluster.master_url, *confs, *job], cluster_env(stub), tmp_path)


def spark_submit(*argv: str, env: dict[str, str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    from tests.support.spark_cluster import spark_home

    return run_in_group([str(spark_home() / "bin" / "spark-submit"), *argv], dict(env, SPARK_HOME=str(spark_home())), cwd, timeout)


def new_app(cluster, before: set[str]) -> dict:
    """The one application the master completed since `before` (ids)."""
    [app] = [a for a in cluster.completed_apps() if a["id"] not in before]
    return app


def assert_ran_on_executors(cluster, app: dict, marker: Path) -> None:
    """Tasks finished in the workers' executor processes (their own logs say so), and no executor
    started Python."""
    logs = [p for p in cluster.executor_logs() if p.parts[-3] == app["id"]]
    assert len(logs) == 2, logs  # one executor per worker
    worked = [p for p in logs if "Finished task" in p.read_text(errors="replace")]
    assert worked, f"no executor of {app['id']} finished a task"
    assert not marker.exists(), marker.read_text()


def app_ids(cluster) -> set[str]:
    return {a["id"] for a in cluster.completed_apps()}


def local_then_cluster(spark, proxy, cluster, no_python, tmp_path, local_job: list[str], cluster_job: list[str]):
    """(the local run's context, the cluster run's process): `local_job` in this process's local
    session, `cluster_job` as `hmsproxy job … --master spark://…`, which must run on both workers'
    executors and start no Python there."""
    stub, marker = no_python
    ctx = JobContext(proxy.uri, spark=spark, stdout=io.StringIO(), stderr=io.StringIO())
    status = run_job_command(build_parser().parse_args(local_job), ctx)
    assert status == 0, ctx.stderr.getvalue()
    apps = app_ids(cluster)
    done = run_job(cluster, stub, proxy, tmp_path, *cluster_job)
    assert done.returncode == 0, done.stderr[-4000:]
    assert_ran_on_executors(cluster, new_app(cluster, apps), marker)
    return ctx, done


def test_the_stub_fails_an_application_that_runs_python_on_executors(spark_cluster, no_python, tmp_path):
    """The premise of the other tests' proof: Python on an executor starts the stub, which fails the job."""
    stub, marker = no_python
    script = tmp_path / "python_on_executors.py"
    script.write_text(PYTHON_ON_EXECUTORS)
    done = run_in_group([sys.executable, str(script), spark_cluster.master_url], cluster_env(stub), tmp_path)
    assert done.returncode != 0, done.stdout
    assert marker.exists()
    assert "an executor started Python" in done.stderr or str(STUB_EXIT) in done.stderr


def test_compact_on_the_cluster_equals_compact_on_a_local_session(spark, db, proxy, proxy_client, spark_cluster, no_python, tmp_path):
    local_db, local_name = compact_e2e.make_table(spark, db)
    cluster_db, cluster_name = compact_e2e.make_table(spark, db)
    local_before = compact_e2e.Before(spark, proxy_client, local_db, local_name)
    cluster_before = compact_e2e.Before(spark, proxy_client, cluster_db, cluster_name)
    assert local_before.rows == cluster_before.rows

    ctx, done = local_then_cluster(
        spark, proxy, spark_cluster, no_python, tmp_path,
        ["compact", f"{local_db}.{local_name}", "--files", "2"], ["compact", f"{cluster_db}.{cluster_name}", "--files", "2"],
    )  # fmt: skip

    summary = f"3 rewritten, 0 skipped, 0 failed; {3 * compact_e2e.ROWS_PER_DAY} rows"
    assert f"compact {local_db}.{local_name}: {summary}" in ctx.stdout.getvalue()
    assert f"compact {cluster_db}.{cluster_name}: {summary}" in done.stdout
    for ds in compact_e2e.DAYS:
        compact_e2e.assert_compacted(spark, proxy_client, local_before, local_db, local_name, ds, files=2)
        compact_e2e.assert_compacted(spark, proxy_client, cluster_before, cluster_db, cluster_name, ds, files=2)
        assert compact_e2e.rows(spark, f"{cluster_db}.{cluster_name}", ds) == compact_e2e.rows(spark, f"{local_db}.{local_name}", ds)
    compact_e2e.assert_no_leftovers(proxy_client, cluster_db, cluster_name)


def test_rebuild_index_on_the_cluster_equals_a_local_rebuild(spark, db, proxy, spark_cluster, no_python, tmp_path):
    local, remote = index_e2e.make_events(spark, db), index_e2e.make_events(spark, db)
    for table in (local, remote):
        sql(spark, f"CREATE INDEX user_idx ON TABLE {table} (user_id) AS 'COMPACT' WITH DEFERRED REBUILD")

    ctx, done = local_then_cluster(
        spark, proxy, spark_cluster, no_python, tmp_path, ["rebuild-index", f"{local}.user_idx"], ["rebuild-index", f"{remote}.user_idx"]
    )

    assert f"rebuild-index {local}.user_idx: 3 built, 0 fresh and skipped, 0 failed" in ctx.stdout.getvalue()
    assert f"rebuild-index {remote}.user_idx: 3 built, 0 fresh and skipped, 0 failed" in done.stdout
    assert set(index_e2e.states(spark, remote).values()) == {"fresh"} == set(index_e2e.states(spark, local).values())
    for user in (3, 4, 39):
        expected = index_e2e.full_scan(spark, local, f"user_id = {user}")
        assert expected and index_e2e.full_scan(spark, remote, f"user_id = {user}") == expected
        from_cluster_index = lookup(spark, remote, user_id=user)
        assert index_e2e.rows_of(from_cluster_index) == index_e2e.rows_of(lookup(spark, local, user_id=user)) == expected
        assert len(from_cluster_index.inputFiles()) == 1  # the index the executors wrote names the one file
        assert index_e2e.arrow_rows(proxy, remote, user_id=user) == expected


def test_skew_layout_on_the_cluster_equals_a_local_layout(spark, db, proxy, spark_cluster, no_python, tmp_path):
    local, remote = skew_e2e.make_table(spark, db), skew_e2e.make_table(spark, db)
    for table in (local, remote):
        skew_e2e.set_skew(proxy, table, ["country"], [["US"], ["IN"]])

    ctx, done = local_then_cluster(spark, proxy, spark_cluster, no_python, tmp_path, ["skew-layout", local], ["skew-layout", remote])
    assert f"skew-layout {local}: 3 laid out, 0 skipped, 0 failed; {3 * 210} rows" in ctx.stdout.getvalue()

    assert f"skew-layout {remote}: 3 laid out, 0 skipped, 0 failed; {3 * 210} rows" in done.stdout
    for ds in skew_e2e.DAYS:
        records = [from_parameters(skew_e2e.partition(proxy, table, ds).parameters) for table in (local, remote)]
        assert [[(g.values, g.rows) for g in r.groups] for r in records] == [[(("US",), 120), (("IN",), 50), (None, 40)]] * 2
        for country in ("US", "IN", "C03"):
            pruned = read(spark, remote, ds=ds, country=country)
            assert skew_e2e.rows_of(pruned) == skew_e2e.full_scan(spark, local, ds=ds, country=country)
            assert skew_e2e.rows_of(pruned) == skew_e2e.full_scan(spark, remote, ds=ds, country=country)


def test_spark_submit_in_client_mode_runs_the_job_on_the_cluster(spark, db, proxy, proxy_client, spark_cluster, no_python, tmp_path):
    stub, marker = no_python
    _, name = compact_e2e.make_table(spark, db)
    before = compact_e2e.Before(spark, proxy_client, db, name)
    confs = [arg for conf in [*CLUSTER_CONF, f"spark.hadoop.hive.metastore.uris={proxy.uri}"] for arg in ("--conf", conf)]
    apps = app_ids(spark_cluster)
    done = spark_submit(
        "--master", spark_cluster.master_url, "--deploy-mode", "client", *confs, JOBS_MAIN, "compact", f"{db}.{name}", "--files", "1",
        env=cluster_env(stub), cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    assert f"compact {db}.{name}: 3 rewritten, 0 skipped, 0 failed" in done.stdout
    assert_ran_on_executors(spark_cluster, new_app(spark_cluster, apps), marker)
    for ds in compact_e2e.DAYS:
        compact_e2e.assert_compacted(spark, proxy_client, before, db, name, ds, files=1)


def test_spark_submit_in_cluster_mode_on_standalone_is_refused_by_spark_for_python(spark_cluster, no_python, tmp_path):
    """Spark's own rule (SparkSubmit): a Python application's driver can't run inside a standalone
    cluster; docs/jobs.md says to use client mode there (cluster mode works on YARN and Kubernetes)."""
    stub, _ = no_python
    done = spark_submit(
        "--master",
        spark_cluster.master_url,
        "--deploy-mode",
        "cluster",
        JOBS_MAIN,
        "list",
        env=cluster_env(stub),
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode != 0
    assert "Cluster deploy mode is currently not supported for python applications on standalone clusters" in done.stderr


def test_a_master_that_does_not_answer_is_one_line_and_exit_1(proxy, spark, db, no_python, tmp_path):
    """Checked before any JVM starts, from `hmsproxy job` and under spark-submit alike (where the
    master is spark-submit's). Spark itself would retry its registration for about a minute."""
    stub, _ = no_python
    [port] = free_ports(1)
    dead = f"spark://127.0.0.1:{port}"
    spark.sql("CREATE TABLE IF NOT EXISTS jobs_on_cluster.tiny (id INT) STORED AS PARQUET")
    expected = (
        f"hmsproxy job compact: Spark master {dead} does not answer (127.0.0.1:{port}: Connection refused): "
        "start it, or give --master (or --conf spark.master=…) a running one"
    )

    started = time.monotonic()
    done = run_in_group(
        [HMSPROXY, "job", "compact", "jobs_on_cluster.tiny", "--uri", proxy.uri, "--master", dead], cluster_env(stub), tmp_path
    )
    elapsed = time.monotonic() - started
    assert done.returncode == 1
    assert done.stderr.splitlines() == [expected], done.stderr
    print(f"hmsproxy job with a dead master: exit 1 after {elapsed:.1f} s")

    submitted = spark_submit(
        "--master", dead, "--conf", f"spark.hadoop.hive.metastore.uris={proxy.uri}", JOBS_MAIN, "compact", "jobs_on_cluster.tiny",
        env=cluster_env(stub), cwd=tmp_path, timeout=120,
    )  # fmt: skip
    assert submitted.returncode == 1
    # spark-submit's PythonRunner merges the Python driver's stderr into its own stdout.
    assert [line for line in submitted.stdout.splitlines() if line.startswith("hmsproxy job ")] == [expected], submitted.stdout[-3000:]

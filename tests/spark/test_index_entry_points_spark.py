"""Index builds from the command line as users run them (`hmsproxy sql` starting its own local
SparkSession, `hmsproxy lookup` with no Spark at all), and a rebuild killed with SIGKILL half-way:
the previous index partition keeps answering for the files it was built from, and the next
rebuild succeeds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

import pytest

from hmsproxy.clients.spark import lookup, sql
from hmsproxy.features.indexes.builds import read_manifest
from hmsproxy.jobs.skew_layout import open_metastore
from tests.spark.test_index_rebuild_spark import DAYS, arrow_rows, full_scan, make_events, rebuild_job, rows_of, states
from tests.support.children import run_in_group

pytestmark = pytest.mark.spark

REPO_ROOT = Path(__file__).resolve().parents[2]
HMSPROXY = str(Path(sys.executable).with_name("hmsproxy"))


def env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(REPO_ROOT), SPARK_LOCAL_IP="127.0.0.1")


def run(argv: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    return run_in_group(argv, env(), cwd, timeout)  # Spark's JVM too, should it outlive its Python


@pytest.fixture(scope="module")
def db(spark):
    spark.sql("CREATE DATABASE IF NOT EXISTS index_cli")
    return "index_cli"


def test_hmsproxy_sql_builds_on_a_local_session_and_hmsproxy_lookup_reads_without_spark(spark, proxy, db, tmp_path):
    table = make_events(spark, db)
    sql(spark, f"CREATE INDEX user_idx ON TABLE {table} (user_id) AS 'COMPACT' WITH DEFERRED REBUILD")
    done = run([HMSPROXY, "sql", "--uri", proxy.uri, "-e", f"ALTER INDEX user_idx ON {table} REBUILD"], tmp_path)
    assert done.returncode == 0, done.stderr[-4000:]
    assert done.stdout.strip() == done.stdout.strip().splitlines()[0]  # one line: the result
    assert done.stdout.startswith(f"rebuild-index {table}.user_idx: 3 built, 0 fresh and skipped, 0 failed")
    assert not [line for line in done.stderr.splitlines() if "py4j" in line or " INFO " in line]  # Spark's own chatter is quiet
    progress = [line for line in done.stderr.splitlines() if line.startswith(f"rebuild-index {table}.user_idx [")]
    assert [line.split(": ok")[0] for line in progress] == [
        f"rebuild-index {table}.user_idx [{n}/3] ds={day}" for n, day in enumerate(DAYS, 1)
    ]
    assert set(states(spark, table).values()) == {"fresh"}

    found = run([HMSPROXY, "lookup", table, "--uri", proxy.uri, "--where", "user_id=4", "--format", "json"], tmp_path, timeout=120)
    assert found.returncode == 0, found.stderr
    got = sorted(tuple(r.values()) for r in json.loads(found.stdout))
    assert got == full_scan(spark, table, "user_id = 4")
    assert "index user_idx; partitions: 3 fresh; read 1 data file(s), 3 index file(s)" in found.stderr
    listed = run(
        [HMSPROXY, "lookup", table, "--uri", proxy.uri, "--where", "user_id IN (4, 5)", "--where", f"ds='{DAYS[1]}'"], tmp_path, 120
    )
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines()[0].split() == ["user_id", "|", "action", "|", "amount", "|", "ds"]
    assert listed.stdout.rstrip().endswith("(5 rows)")  # user 4 is on day 1 (4 % 3), user 5 on day 2
    bad = run([HMSPROXY, "lookup", table, "--uri", proxy.uri, "--where", "nope=1"], tmp_path, 120)
    assert bad.returncode == 2 and "has no column nope" in bad.stderr


KILLER = """
import os, signal, sys
from hmsproxy.jobs import metastore, rebuild_index
from hmsproxy.jobs.cli import main

def die(*_):
    os.kill(os.getpid(), signal.SIGKILL)  # no cleanup of any kind runs, as when a node dies

point = sys.argv[1]
if point == "after-writing":  # the new index files and their build written beside the old ones, nothing swapped
    rebuild_index.before_swap_check = die
elif point == "after-the-swap":  # the metastore has the new location; the old directory is still there
    swap = rebuild_index.BuildCatalog.alter_partition  # one piece swapped alone
    rebuild_index.BuildCatalog.alter_partition = lambda self, *a: (swap(self, *a), die())
    swap_all = metastore.MetastoreClient.alter_partitions_with_context  # a pass's batch (index_swaps.py)
    metastore.MetastoreClient.alter_partitions_with_context = lambda self, *a: (swap_all(self, *a), die())
sys.exit(main(sys.argv[2:]))
"""


def index_partition(proxy, table: str, index: str, day: str):
    db, name = table.split(".")
    with open_metastore(proxy.uri) as ms:
        found = ms.get_index(db, name, index)
        return ms.get_partition(db, found.indexTableName.rpartition(".")[2], [day])


@pytest.mark.parametrize("point", ["after-writing", "after-the-swap"])
def test_a_rebuild_killed_with_sigkill_leaves_the_old_index_answering_and_the_next_run_succeeds(spark, proxy, db, tmp_path, point):
    table = make_events(spark, db)
    sql(spark, f"CREATE INDEX user_idx ON TABLE {table} (user_id) AS 'COMPACT'")  # built right away
    before = index_partition(proxy, table, "user_idx", DAYS[0])
    old_build = read_manifest(before.sd.location)
    spark.sql(f"INSERT INTO {table} PARTITION (ds='{DAYS[0]}') VALUES (3, 'late', 1.5)")  # day 0 is stale now
    script = tmp_path / "killer.py"
    script.write_text(KILLER)
    argv = [sys.executable, str(script), point, "rebuild-index", f"{table}.user_idx", "--only-stale", "--uri", proxy.uri]
    killed = run(argv, tmp_path)
    assert killed.returncode == -9, f"stdout:\n{killed.stdout}\nstderr:\n{killed.stderr[-6000:]}"

    after = index_partition(proxy, table, "user_idx", DAYS[0])
    if point == "after-writing":  # untouched: same location, same build, still stale for the new file
        assert after.sd.location == before.sd.location and read_manifest(after.sd.location) == old_build
        assert states(spark, table)[f"ds={DAYS[0]}"] == "stale"
        leftovers = [p for p in Path(urlparse(before.sd.location).path).parent.iterdir() if ".hmsproxy-rebuild-index-" in p.name]
        assert leftovers  # the killed run's directory, which no metastore object names
    else:  # swapped: the new build answers, the old directory is left behind
        assert after.sd.location != before.sd.location and Path(urlparse(before.sd.location).path).exists()
        assert states(spark, table)[f"ds={DAYS[0]}"] == "fresh"
    for user in (3, 6, 4):
        expected = full_scan(spark, table, f"user_id = {user}")
        assert rows_of(lookup(spark, table, user_id=user)) == expected
        assert arrow_rows(proxy, table, user_id=user) == expected

    status, ctx = rebuild_job(spark, proxy, f"{table}.user_idx", "--only-stale")
    assert status == 0, ctx.stderr.getvalue()
    expected_line = "0 built, 3 fresh and skipped" if point == "after-the-swap" else "1 built, 2 fresh and skipped"
    assert expected_line in ctx.stdout.getvalue()
    assert set(states(spark, table).values()) == {"fresh"}
    assert rows_of(lookup(spark, table, user_id=3)) == full_scan(spark, table, "user_id = 3")
    spark.sql(f"DROP TABLE {table}")

"""Every data feature on S3 (s3proxy) and on HDFS (a minicluster), through the proxy, each answer
compared with Spark's own: streaming ingest of CSV and JSON into a partitioned table, CREATE INDEX +
rebuild-index + `hmsproxy lookup` + lookup() + staleness after an INSERT + --only-stale, skew-layout +
read(), compact. Spark runs in its own process (tests/support/storage_spark_job.py): its session needs
S3A's jars. One such process serves both stores (a Spark start each would be a good part of a
store's run); each store's answers are checked by a test of its own. Bad input through the CLIs (no
Spark) is at the end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.spark.test_index_entry_points_spark import env, run
from tests.support.storage_stack import bad_table, s3a_jars, thrift_client

pytestmark = pytest.mark.spark

HMSPROXY = str(Path(sys.executable).with_name("hmsproxy"))


STORES = ("s3", "hdfs")


def run_features(proxy, roots: list[str], tmp_path: Path) -> dict:
    """The job's results by root."""
    jars = ",".join(str(j) for j in s3a_jars())
    parts = os.environ.get("HMSPROXY_STORAGE_JOB_PARTS", "features,writers")  # a narrower run while debugging one part
    argv = [
        sys.executable,
        "-m",
        "tests.support.storage_spark_job",
        proxy.uri,
        ",".join(roots),
        str(tmp_path / "warehouse"),
        jars,
        parts,
        proxy.backend_uri,
    ]
    done = run(argv, tmp_path, timeout=900)
    out, err = done.stdout, done.stderr
    lines = [line for line in out.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and lines, err[-6000:]
    (tmp_path / "result.json").write_text(lines[-1][len("RESULT ") :])  # all of it, for a failure's reader
    return json.loads(lines[-1][len("RESULT ") :])


@pytest.fixture(scope="module")
def results_by_store(storage_conf, storage_proxy, tmp_path_factory) -> dict:
    """Both stores' answers, from one run of the job (one Spark start)."""
    roots = {store: storage_conf.root(store, "warehouse") for store in STORES}
    by_root = run_features(storage_proxy, list(roots.values()), tmp_path_factory.mktemp("storage-features"))
    return {store: by_root[root] for store, root in roots.items()}


@pytest.mark.parametrize("store", STORES)
def test_every_data_feature_on_the_store_through_the_proxy(store, storage_conf, results_by_store):
    root = storage_conf.root(store, "warehouse")
    result = results_by_store[store]
    assert "error" not in result, result.get("error")
    scheme = "s3a://" if store == "s3" else "hdfs://"

    parts = os.environ.get("HMSPROXY_STORAGE_JOB_PARTS", "features,writers")
    if "features" in parts:
        features(result, root, scheme)
    if "writers" in parts:
        writers(result, scheme)


def features(result: dict, root: str, scheme: str) -> None:
    streamed = result["streaming"]
    assert streamed["exits"] == [0, 0], streamed["errors"]
    assert streamed["spark"] == streamed["written"]  # Spark reads exactly the rows streamed, CSV and JSON
    assert streamed["location"].startswith(scheme + root.split("://")[1])
    assert len(streamed["files"]) == 3 and all("_stream-" in name for name in streamed["files"])  # 40 rows, 15 a txn

    index = result["indexes"]
    assert index["rebuild"][0] == 0, index["rebuild"][1]
    assert set(index["states"].values()) == {"fresh"} and len(index["states"]) == 2
    assert index["cli"][0] == 0, index["cli"][2]
    assert index["expected"] and index["cli"][1] == index["expected"] and index["lookup"] == index["expected"]
    assert "index user_idx; partitions: 2 fresh; read 1 data file(s)" in index["cli"][2]  # user 7's rows are in one file
    assert sorted(index["stale"].values()) == ["fresh", "stale"]  # the INSERT's partition, seen from the store's listing
    assert len(index["expected_after_insert"]) == len(index["expected"]) + 1
    assert index["cli_after_insert"] == index["expected_after_insert"] == index["lookup_after_insert"]
    assert index["only_stale"][0] == 0 and "1 built, 1 fresh and skipped" in index["only_stale"][1], index["only_stale"][1]
    assert set(index["states_after_rebuild"].values()) == {"fresh"}

    skew = result["skew"]
    assert skew["status"][0] == 0, skew["status"][1]
    assert skew["after"] == skew["before"] and len(skew["before"]) == 300
    assert skew["read_us"] == skew["expected_us"] and len(skew["read_us"]) == 100
    assert skew["read_files"] and all(name.startswith("skew-0-US-") for name in skew["read_files"])
    assert skew["read_other"] == skew["expected_other"] and skew["read_other"]

    compacted = result["compact"]
    assert compacted["status"][0] == 0, compacted["status"][1]
    assert compacted["after"] == compacted["before"]
    assert compacted["files"][0] > 1 and compacted["files"][1] == 1


def writers(result: dict, scheme: str) -> None:
    bucketed = result["bucketed"]
    assert bucketed["exit"][0] == 0, bucketed["exit"][1]
    assert bucketed["spark"] == bucketed["written"]
    assert bucketed["misplaced"] == []  # every row in the file of its bucket by Hive's function
    buckets = {name[:6] for name in bucketed["names"]}
    assert buckets == {"000000", "000001", "000002", "000003"}, bucketed["names"]
    assert len(set(bucketed["names"])) == 8  # two transactions, a file per bucket each

    live = result["live"]
    assert live["errors"] == [] and live["alive"] == [False, False], live["errors"]
    assert [c[0] for c in live["compacts"]] == [0, 0], live["compacts"]
    assert len(live["written"]) == 160  # 2 writers x 4 batches x 2 transactions x 10 rows
    assert live["spark"] == live["written"]  # nothing lost, nothing twice

    if scheme == "s3a://":
        dependent = result["dependent"]
        assert dependent["expected"] and dependent["read"] == dependent["expected"]  # the published day, from S3
        assert dependent["unpublished"] == []
    else:
        remote = result["remote"]
        assert remote["location"].startswith(scheme)  # its data on HDFS, read by Spark through the proxy
        assert len(remote["expected"]) == 3 and remote["read"] == remote["expected"]


def partitions(proxy, db: str, name: str) -> list:
    with thrift_client(proxy) as ms:
        return ms.get_partition_names(db, name, -1)


@pytest.mark.parametrize(
    "location, words",
    [
        # A scheme Hadoop serves (the metastore takes the location) and hmsproxy does not.
        ("ftp://127.0.0.1:1/t", ["no file system for scheme 'ftp'"]),
        ("s3a://no-such-bucket/t", ["bucket no-such-bucket does not exist"]),
        ("hdfs://127.0.0.1:1/t", ["no NameNode answers", "fs.defaultFS"]),
    ],
)
def test_stream_and_lookup_on_a_store_that_cannot_be_reached_fail_in_one_line(storage_conf, storage_proxy, tmp_path, location, words):
    name = f"bad_{abs(hash(location)) % 10**8}"
    bad_table(storage_proxy, "storage_bad", name, location, tmp_path / name)
    bad_table(storage_proxy, "storage_bad", f"{name}_flat", location, tmp_path / f"{name}_flat", partitioned=False)
    for argv, stdin in (
        (["stream", f"storage_bad.{name}", "--uri", storage_proxy.uri, "--partition", "ds=1"], "1\n2\n"),
        (["lookup", f"storage_bad.{name}_flat", "--uri", storage_proxy.uri, "--where", "id=1"], ""),
    ):
        started = time.monotonic()
        done = subprocess.run([HMSPROXY, *argv], input=stdin, capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env())
        took = time.monotonic() - started
        assert done.returncode == 1, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and location in lines[0] and all(w in lines[0] for w in words), done.stderr
        assert took < 10, took
    assert partitions(storage_proxy, "storage_bad", name) == []  # the metastore unchanged: no partition made

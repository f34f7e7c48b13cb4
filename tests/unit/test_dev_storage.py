"""`dev up --storage`'s parts that need no server: the settings it writes for clients, what it says
to export, and the one-line refusal when the store's jars were never fetched."""

from __future__ import annotations

from pathlib import Path

import pytest

from hmsproxy.dev import maven, storage_jars
from hmsproxy.dev.dev_storage import DevStorage, start_storage
from hmsproxy.files import hadoop_conf, locations


class FakeS3Server:
    endpoint, port = "http://127.0.0.1:41000", 41000


def s3_storage(state: Path) -> DevStorage:
    keys = {"fs.s3a.endpoint": FakeS3Server.endpoint, "fs.s3a.access.key": "k", "fs.s3a.secret.key": "s&<secret>"}
    return DevStorage("s3", "s3a://warehouse", FakeS3Server(), keys, [Path("/jars/hadoop-aws.jar"), Path("/jars/bundle.jar")], state)


def test_the_client_settings_put_unqualified_paths_and_the_keys_on_the_store(tmp_path):
    store = s3_storage(tmp_path)
    store.write_client_conf()
    site = hadoop_conf.read_site(tmp_path / "hadoop-conf" / "core-site.xml")
    assert site == {"fs.defaultFS": "s3a://warehouse", **store.store_conf}  # escaped in XML, read back as written
    where = locations.place("/user/me/t", site["fs.defaultFS"])
    assert (where.kind, where.authority, where.path) == ("s3", "warehouse", "warehouse/user/me/t")
    defaults = (tmp_path / "spark-conf" / "spark-defaults.conf").read_text().splitlines()
    # On the class path where they lie, not spark.jars (copied into every session's local directory).
    assert defaults[:2] == [f"spark.{side}.extraClassPath /jars/hadoop-aws.jar:/jars/bundle.jar" for side in ("driver", "executor")]
    assert not [line for line in defaults if line.startswith("spark.jars")]
    assert "spark.hadoop.fs.s3a.secret.key s&<secret>" in defaults
    assert store.exports() == f"export HADOOP_CONF_DIR={tmp_path / 'hadoop-conf'} SPARK_CONF_DIR={tmp_path / 'spark-conf'}"
    assert store.metastore_conf("hms1")["hive.metastore.warehouse.dir"] == "s3a://warehouse/hms1/warehouse"


def test_hdfs_needs_no_spark_settings(tmp_path):
    store = DevStorage("hdfs", "hdfs://127.0.0.1:8020", object(), {}, [], tmp_path)
    store.write_client_conf()
    assert hadoop_conf.read_site(tmp_path / "hadoop-conf" / "core-site.xml") == {"fs.defaultFS": "hdfs://127.0.0.1:8020"}
    assert not (tmp_path / "spark-conf").exists()
    assert store.environment() == {"HADOOP_CONF_DIR": str(tmp_path / "hadoop-conf")}


@pytest.mark.parametrize("store", ["s3", "hdfs"])
def test_jars_never_fetched_are_one_line_naming_dev_fetch(store, tmp_path, monkeypatch):
    monkeypatch.setenv(maven.CACHE_ENV, str(tmp_path / "empty-cache"))
    with pytest.raises(maven.FetchError) as caught:
        start_storage(store, tmp_path / "state", None, print)
    assert "\n" not in str(caught.value) and "hmsproxy dev fetch storage" in str(caught.value)
    assert not (tmp_path / "state").exists()  # refused before anything was made


def test_an_unknown_store_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(storage_jars, "require_fetched", lambda store, hive_versions: None)
    with pytest.raises(ValueError, match="--storage nfs: unknown store"):
        start_storage("nfs", tmp_path, None, print)


def test_each_store_says_where_the_warehouses_are(tmp_path):
    class FakeHdfsServer:
        root = tmp_path / "hdfs"

    assert "s3proxy at http://127.0.0.1:41000, bucket warehouse" in s3_storage(tmp_path).describe()
    hdfs = DevStorage("hdfs", "hdfs://127.0.0.1:8020", FakeHdfsServer(), {}, [], tmp_path)
    assert hdfs.describe() == f"an HDFS minicluster, NameNode hdfs://127.0.0.1:8020 (data in {tmp_path / 'hdfs'})"


def test_a_metastores_s3a_is_taken_at_the_hadoop_its_own_jars_bring(monkeypatch):
    # hadoop-aws must match hadoop-common exactly: 2.3 runs on pyspark's Hadoop, 3.1 and 4.0 on their pom's.
    monkeypatch.setattr(storage_jars, "pyspark_hadoop_version", lambda: "3.4.1")
    assert storage_jars.metastore_hadoop_version("2.3") == "3.4.1"
    assert storage_jars.metastore_hadoop_version("3.1") == "3.1.0"
    assert storage_jars.metastore_hadoop_version("4.0") == "3.3.6"
    assert maven._pom("hadoop-aws-3.1.0").is_file()  # the pom metastore_s3a_jars("3.1") fetches


def test_a_dev_stack_on_s3_with_a_hive_31_backend_also_needs_its_s3a_fetched(tmp_path, monkeypatch):
    monkeypatch.setenv(maven.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setattr(storage_jars, "pyspark_hadoop_version", lambda: "3.4.1")
    for name in (f"s3proxy-{storage_jars.S3PROXY_VERSION}", "hadoop-aws-3.4.1"):  # Spark's S3A and s3proxy are there
        (maven.artifact_home(name)).mkdir(parents=True)
        (maven.artifact_home(name) / maven.STAMP_NAME).write_text(maven._pom_digest(name) + "\n")
    storage_jars.require_fetched("s3", ["2.3"])
    with pytest.raises(maven.FetchError) as caught:
        storage_jars.require_fetched("s3", ["2.3", "3.1"])
    assert "(hadoop-aws-3.1.0)" in str(caught.value) and "hmsproxy dev fetch storage" in str(caught.value)

"""The storage door's pure parts: which file system a Hadoop-style location maps to, and the
settings S3 and HDFS clients are made with (site files, per-bucket keys, checksums, NameNodes).
Reaching real stores is tests/integration/test_storage_*.py's job."""

from __future__ import annotations

import socket

import pytest
from pyarrow.fs import FileSelector

from hmsproxy.files import filesystems, hadoop_conf
from hmsproxy.files.hdfs_settings import client_config, namenode_addresses
from hmsproxy.files.locations import StorageError, place
from hmsproxy.files.s3_settings import s3_settings


@pytest.mark.parametrize(
    "location, kind, authority, path",
    [
        ("s3a://lake/shop/events", "s3", "lake", "lake/shop/events"),
        ("s3://lake/shop/events/", "s3", "lake", "lake/shop/events"),
        ("s3n://lake", "s3", "lake", "lake"),
        ("hdfs://nn:8020/warehouse/t", "hdfs", "nn:8020", "/warehouse/t"),
        ("hdfs://ns1/warehouse/t", "hdfs", "ns1", "/warehouse/t"),
        ("file:/tmp/w/t", "local", "", "/tmp/w/t"),
        ("file:///tmp/w/t", "local", "", "/tmp/w/t"),
        ("/tmp/w/t", "local", "", "/tmp/w/t"),
        ("gs://bucket/t", "arrow", "gs://bucket", "/t"),
        ("abfss://c@acct.dfs.core.windows.net/t", "arrow", "abfss://c@acct.dfs.core.windows.net", "/t"),
    ],
)
def test_each_hadoop_form_maps_to_its_file_system(location, kind, authority, path):
    where = place(location)
    assert (where.kind, where.authority, where.path) == (kind, authority, path)


def test_a_path_without_scheme_is_resolved_against_fs_default_fs():
    assert place("/warehouse/t", "hdfs://nn:9000").kind == "hdfs"
    assert place("/warehouse/t", "hdfs://nn:9000").authority == "nn:9000"
    assert place("/warehouse/t", "s3a://lake/").path == "lake/warehouse/t"
    assert place("/warehouse/t", "file:///").kind == "local"


@pytest.mark.parametrize(
    "location, words",
    [
        ("foo://x/y", ["foo://x/y", "scheme 'foo'", "s3a://"]),
        ("s3a:///key", ["s3a:///key", "bucket"]),
        ("hdfs:///x", ["hdfs:///x", "fs.defaultFS"]),
        ("", ["LOCATION"]),
    ],
)
def test_a_location_no_file_system_serves_is_one_line_naming_it(location, words):
    with pytest.raises(StorageError) as caught:
        place(location)
    text = str(caught.value)
    assert "\n" not in text
    for word in words:
        assert word in text


@pytest.fixture(autouse=True)
def no_spark_keys():
    """Start and end without a Spark session's keys: a job or lookup() earlier in the same process
    (the whole suite runs in one) registers its session's Hadoop configuration module-wide."""
    hadoop_conf.forget_spark()
    yield
    hadoop_conf.forget_spark()


def test_site_files_then_spark_keys(tmp_path, monkeypatch):
    (tmp_path / "core-site.xml").write_text(
        "<configuration>"
        "<property><name>fs.defaultFS</name><value>hdfs://nn:8020</value></property>"
        "<property><name>fs.s3a.endpoint</name><value>http://127.0.0.1:9000</value></property>"
        "</configuration>"
    )
    (tmp_path / "hdfs-site.xml").write_text(
        "<configuration><property><name>dfs.nameservices</name><value>ns1</value></property></configuration>"
    )
    assert hadoop_conf.load({"HADOOP_CONF_DIR": str(tmp_path)}) == {
        "fs.defaultFS": "hdfs://nn:8020",
        "fs.s3a.endpoint": "http://127.0.0.1:9000",
        "dfs.nameservices": "ns1",
    }
    assert hadoop_conf.load({"HADOOP_HOME": str(tmp_path.parent)}) == {}  # no etc/hadoop there
    monkeypatch.setattr(hadoop_conf, "_from_spark", {"fs.s3a.endpoint": "http://spark:1"})
    assert hadoop_conf.load({"HADOOP_CONF_DIR": str(tmp_path)})["fs.s3a.endpoint"] == "http://spark:1"


def test_a_broken_site_file_names_itself(tmp_path):
    (tmp_path / "core-site.xml").write_text("<configuration><property>")
    with pytest.raises(ValueError, match="core-site.xml"):
        hadoop_conf.load({"HADOOP_CONF_DIR": str(tmp_path)})


def test_s3a_keys_become_pyarrow_options_per_bucket_first():
    conf = {
        "fs.s3a.endpoint": "http://127.0.0.1:9000",
        "fs.s3a.path.style.access": "true",
        "fs.s3a.access.key": "AK",
        "fs.s3a.secret.key": "SK",
        "fs.s3a.bucket.other.access.key": "AK2",
        "fs.s3a.bucket.other.secret.key": "SK2",
        "fs.s3a.bucket.other.endpoint": "store.example:443",
        "fs.s3a.bucket.other.path.style.access": "false",
    }
    lake = s3_settings("lake", conf, {})
    assert lake.options == {
        "scheme": "http",
        "endpoint_override": "127.0.0.1:9000",
        "force_virtual_addressing": False,
        "region": "us-east-1",
        "access_key": "AK",
        "secret_key": "SK",
        "connect_timeout": 5.0,
    }
    other = s3_settings("other", conf, {})
    assert other.options["access_key"] == "AK2" and other.options["endpoint_override"] == "store.example:443"
    assert other.options["scheme"] == "https" and other.options["force_virtual_addressing"] is True
    assert other.keys_from == "fs.s3a.bucket.other.access.key"


def test_without_keys_the_aws_chain_is_left_to_pyarrow():
    settings = s3_settings("lake", {"fs.s3a.endpoint.region": "eu-west-1", "fs.s3a.connection.establish.timeout": "2s"}, {})
    assert settings.options == {"region": "eu-west-1", "connect_timeout": 2.0}
    assert "AWS_ACCESS_KEY_ID" in settings.keys_from
    assert s3_settings("lake", {"fs.s3a.connection.establish.timeout": "1500"}, {}).options["connect_timeout"] == 1.5


@pytest.mark.parametrize(
    "endpoint, setting, environ, expected",
    [
        ("http://127.0.0.1:9000", None, {}, "WHEN_REQUIRED"),  # S3-compatible: off by default
        ("", None, {}, None),  # AWS: the SDK's default
        ("s3.eu-west-1.amazonaws.com", None, {}, None),
        ("http://127.0.0.1:9000", "true", {}, "WHEN_SUPPORTED"),  # the setting wins
        ("", "false", {}, "WHEN_REQUIRED"),
        ("http://127.0.0.1:9000", None, {"AWS_REQUEST_CHECKSUM_CALCULATION": "WHEN_SUPPORTED"}, None),  # the user's env
    ],
)
def test_request_checksums_are_off_for_non_aws_endpoints_unless_set(endpoint, setting, environ, expected):
    conf = {"fs.s3a.endpoint": endpoint} if endpoint else {}
    if setting is not None:
        conf["hmsproxy.s3.request.checksums"] = setting
    assert s3_settings("lake", conf, environ).checksum_calculation == expected


def test_namenodes_of_a_host_and_of_an_ha_nameservice():
    conf = {
        "dfs.nameservices": "ns1,ns2",
        "dfs.ha.namenodes.ns1": "nn1, nn2",
        "dfs.namenode.rpc-address.ns1.nn1": "a.example:8020",
        "dfs.namenode.rpc-address.ns1.nn2": "b.example:8021",
        "hive.metastore.uris": "thrift://x:9083",
    }
    assert namenode_addresses("ns1", conf) == [("a.example", 8020), ("b.example", 8021)]
    assert namenode_addresses("nn", conf) == [("nn", 8020)]
    assert namenode_addresses("127.0.0.1:9000", conf) == [("127.0.0.1", 9000)]
    assert "hive.metastore.uris" not in client_config(conf) and "dfs.nameservices" in client_config(conf)


def test_a_namenode_that_does_not_answer_is_one_line_at_once(monkeypatch):
    with socket.socket() as s:  # a port nothing listens on: bound, never listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        monkeypatch.setattr(hadoop_conf, "_from_spark", {})
        with pytest.raises(StorageError) as caught:
            filesystems.filesystem(f"hdfs://127.0.0.1:{port}/warehouse/t")
    text = str(caught.value)
    assert f"hdfs://127.0.0.1:{port}/warehouse/t" in text and "NameNode" in text and "\n" not in text


def test_s3_attempts_per_request_come_from_s3a_and_stay_few():
    assert s3_settings("lake", {}, {}).attempts == 3
    assert s3_settings("lake", {"fs.s3a.attempts.maximum": "7"}, {}).attempts == 7
    assert s3_settings("lake", {"fs.s3a.bucket.lake.attempts.maximum": "0"}, {}).attempts == 1


def test_an_s3_endpoint_that_accepts_and_never_answers_is_one_line_within_seconds(tmp_path, monkeypatch):
    """The bucket check is one attempt: with the SDK's three, a silent endpoint took ~10 s (measured)."""
    import time

    with socket.socket() as silent:  # listening, never answering
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        (tmp_path / "core-site.xml").write_text(
            f"<configuration><property><name>fs.s3a.endpoint</name><value>http://127.0.0.1:{port}</value></property></configuration>"
        )
        monkeypatch.setenv("HADOOP_CONF_DIR", str(tmp_path))
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AK")  # keys from the environment: no instance-role look-up
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "SK")
        monkeypatch.setattr(hadoop_conf, "_from_spark", {})
        filesystems.forget()
        started = time.monotonic()
        with pytest.raises(StorageError) as caught:
            filesystems.filesystem("s3a://lake/t")
        took = time.monotonic() - started
    filesystems.forget()
    text = str(caught.value)
    assert "s3a://lake/t" in text and "did not answer" in text and "fs.s3a.endpoint" in text and "\n" not in text
    assert took < 6, took


def test_local_locations_need_no_settings(tmp_path):
    (tmp_path / "a.txt").write_text("x")
    fs, inner = filesystems.filesystem(f"file:{tmp_path}")
    assert inner == str(tmp_path)
    assert [i.base_name for i in fs.get_file_info(FileSelector(inner))] == ["a.txt"]


def test_a_spark_sessions_hadoop_keys_overlay_the_site_files_and_renew_the_file_systems(tmp_path, monkeypatch):
    """What a driver registers (its `spark.hadoop.*` file system keys) wins over core-site.xml; a change
    drops the file systems made with the old settings. (A stand-in session: only its conf is read.)"""

    class Conf:
        getAll = {
            "spark.hadoop.fs.s3a.endpoint": "http://spark:1",
            "spark.hadoop.hive.metastore.uris": "thrift://x:1",
            "spark.app.name": "a",
        }

    class Session:
        conf = Conf()

    (tmp_path / "core-site.xml").write_text(
        "<configuration><property><name>fs.s3a.endpoint</name><value>http://site:1</value></property></configuration>"
    )
    monkeypatch.setattr(hadoop_conf, "_from_spark", {})
    forgotten = []
    monkeypatch.setattr(filesystems, "forget", lambda: forgotten.append(True))
    hadoop_conf.use_spark(Session())
    assert hadoop_conf.load({"HADOOP_CONF_DIR": str(tmp_path)}) == {"fs.s3a.endpoint": "http://spark:1"}
    hadoop_conf.use_spark(Session())  # the same keys again: the kept file systems stay
    assert forgotten == [True]
    hadoop_conf.forget_spark()
    assert hadoop_conf.load({"HADOOP_CONF_DIR": str(tmp_path)}) == {"fs.s3a.endpoint": "http://site:1"}


def test_a_kerberos_refusal_says_kinit_and_a_network_one_does_not(monkeypatch):
    where = place("hdfs://nn:8020/t", None)
    monkeypatch.setenv("KRB5CCNAME", "FILE:/tmp/cc")
    gss = 'GSSAPIError(GssMajorCodes { raw: "0x00070000", routine_error: "GSS_S_NO_CRED" }, 1, "No Kerberos credentials available (default cache: FILE:/tmp/cc)")'
    text = filesystems._refusal(where, gss)
    assert (
        text.startswith("hdfs://nn:8020/t: HDFS at nn:8020 needs a Kerberos ticket") and "in FILE:/tmp/cc (No Kerberos credentials" in text
    )
    assert "run kinit" in text and "GssMajorCodes" not in text
    text = filesystems._refusal(where, "Connection reset by peer")
    assert "refused the client (Connection reset by peer)" in text and "kinit" not in text and "fs.defaultFS" in text


def test_the_exit_hook_drops_only_the_hdfs_clients(monkeypatch):
    monkeypatch.setattr(filesystems, "NATIVE_RELEASE_PAUSE_S", 0)
    monkeypatch.setattr(filesystems, "_made", {("hdfs", "nn:8020"): object(), ("s3", "lake"): "kept"})
    assert filesystems.native_clients_made()
    filesystems.release_native_clients()
    assert filesystems._made == {("s3", "lake"): "kept"} and not filesystems.native_clients_made()


class _DirectoryMadeBetween:
    """An fsspec file system whose `path` becomes a directory between isdir and exists, as when a
    second writer makes it (or is gone after isdir, `vanish`)."""

    def __init__(self, vanish: bool = False):
        self.made, self.vanish = False, vanish

    def isdir(self, path):
        if self.vanish:
            return True
        made, self.made = self.made, True
        return made

    def exists(self, path):
        return True

    def find(self, path, maxdepth=None, withdirs=True, detail=True):
        if self.vanish:
            raise FileNotFoundError(path)
        return {f"{path}/7": {"name": f"{path}/7", "type": "directory", "size": 0}}


def test_a_listing_raced_by_another_writer_is_asked_again():
    from pyarrow import fs

    handler = filesystems.listing_handler()
    made = fs.PyFileSystem(handler(_DirectoryMadeBetween()))
    assert [i.base_name for i in made.get_file_info(fs.FileSelector("/t/_hmsproxy_stream", allow_not_found=True))] == ["7"]
    with pytest.raises(NotADirectoryError):  # pyarrow's own handler: the race this closes
        fs.PyFileSystem(fs.FSSpecHandler(_DirectoryMadeBetween())).get_file_info(fs.FileSelector("/t/s", allow_not_found=True))
    gone = fs.PyFileSystem(handler(_DirectoryMadeBetween(vanish=True)))
    assert gone.get_file_info(fs.FileSelector("/t/s", allow_not_found=True)) == []
    with pytest.raises(FileNotFoundError):
        gone.get_file_info(fs.FileSelector("/t/s"))


def test_clients_made_at_once_for_two_buckets_each_get_the_checksum_setting(monkeypatch):
    """The door sets AWS_REQUEST_CHECKSUM_CALCULATION only while a client is made. A second thread
    that read the environment in that moment took it for the user's own choice, made its client
    after the variable was gone, and every upload to s3proxy got a 400 (the README s3 tour's flake)."""
    import threading
    import time

    from pyarrow import fs

    from hmsproxy.files.s3_settings import CHECKSUM_ENV

    seen: list[str | None] = []
    made = threading.Event()

    class Recorder:
        def __init__(self, **_):
            seen.append(filesystems.os.environ.get(CHECKSUM_ENV))
            made.set()
            time.sleep(0.2)  # a slow client start keeps the variable set while the other thread looks

    monkeypatch.delenv(CHECKSUM_ENV, raising=False)
    monkeypatch.setattr(fs, "S3FileSystem", Recorder)
    monkeypatch.setattr(filesystems, "_check_bucket", lambda *_: None)
    monkeypatch.setattr(filesystems, "_made", {})
    monkeypatch.setattr(hadoop_conf, "_from_spark", {"fs.s3a.endpoint": "http://127.0.0.1:1"})

    first = threading.Thread(target=filesystems.filesystem, args=("s3a://one/t",))
    first.start()
    assert made.wait(5)
    filesystems.filesystem("s3a://two/t")
    first.join(5)
    assert seen == ["WHEN_REQUIRED"] * 4  # a checked client and a kept one per bucket
    assert CHECKSUM_ENV not in filesystems.os.environ


def test_threads_asking_for_one_bucket_at_once_share_one_client(monkeypatch):
    import threading

    from pyarrow import fs

    made: list[object] = []
    monkeypatch.setattr(fs, "S3FileSystem", lambda **_: made.append(object()) or made[-1])
    monkeypatch.setattr(filesystems, "_check_bucket", lambda *_: __import__("time").sleep(0.1))
    monkeypatch.setattr(filesystems, "_made", {})
    monkeypatch.setattr(hadoop_conf, "_from_spark", {"fs.s3a.endpoint": "http://127.0.0.1:1"})
    answers: list[object] = []
    threads = [threading.Thread(target=lambda: answers.append(filesystems.filesystem("s3a://lake/t")[0])) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert len(made) == 2 and answers == [made[1]] * 6  # one checked, one kept, for all six

"""A Hive 3.1 metastore on S3 (issue #37): its own S3A on the classpath, fetched with Maven at the
Hadoop its jars bring (hadoop-aws 3.1.0 beside hadoop-common 3.1.0, with the AWS SDK v1 bundle;
hmsproxy.dev.storage_jars), behind a proxy. A database and a Parquet table at s3a:// are created
through the proxy by Thrift; the metastore itself makes their directory markers on s3proxy (proof
it reached S3 through S3A: nothing else writes there), then `hmsproxy stream` puts rows in and
`hmsproxy lookup` reads them back. One metastore for the module.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from pyarrow import fs

from hmsproxy.dev.s3proxy import ACCESS_KEY, SECRET_KEY
from hmsproxy.protocol import idl
from hmsproxy.testing.builders import parquet_table
from tests.support.federation import primary_only_config
from tests.support.served import served
from tests.support.storage_stack import s3a_jars
from tests.support.storage_stack import thrift_client as metastore

hive = idl.hive
HMSPROXY = str(Path(sys.executable).with_name("hmsproxy"))
DB = "hive31_on_s3"


@pytest.fixture(scope="module")
def proxy(storage_conf, metastore_factory):
    jars = [str(j) for j in s3a_jars("3.1")]
    (ms,) = metastore_factory(1, name="hive31_s3_hms", hive_versions=["3.1"], extra_classpath=jars, hive_conf=storage_conf.s3a)
    try:
        with served(primary_only_config(ms.uri)) as server:
            yield server
    finally:
        ms.stop()


def s3(storage_conf) -> fs.S3FileSystem:
    """s3proxy seen by pyarrow directly, not through hmsproxy or S3A."""
    endpoint = storage_conf.s3a["fs.s3a.endpoint"].removeprefix("http://")
    return fs.S3FileSystem(access_key=ACCESS_KEY, secret_key=SECRET_KEY, endpoint_override=endpoint, scheme="http", region="us-east-1")


def cli(argv: list[str], stdin: str = "") -> subprocess.CompletedProcess:
    # HADOOP_CONF_DIR (storage_conf) gives the CLI s3proxy's keys.
    return subprocess.run([HMSPROXY, *argv], input=stdin, capture_output=True, text=True, timeout=120, env=dict(os.environ))


def test_a_hive_31_metastore_makes_s3_directories_and_streams_and_lookups_work_on_them(proxy, storage_conf):
    root = storage_conf.root("s3", f"{DB}-{uuid.uuid4().hex[:8]}")
    name = "events"
    location = f"{root}/{name}"
    with metastore(proxy) as ms:
        ms.create_database(hive.Database(name=DB, description="", locationUri=root, parameters={}))
        ms.create_table(parquet_table(DB, name, location, columns=(("id", "int"), ("msg", "string"))))
        assert ms.get_table(DB, name).sd.location == location
    # Before any row: S3 has no directories, so a path pyarrow calls one, with nothing under it,
    # is the "name/" marker object the metastore's S3A mkdirs wrote.
    store = s3(storage_conf)
    for made in (root, location):
        path = made.removeprefix("s3a://")
        assert store.get_file_info(path).type == fs.FileType.Directory, made
    assert store.get_file_info(fs.FileSelector(location.removeprefix("s3a://"), recursive=True)) == []

    rows = [(i, f"row {i}") for i in range(1, 201)]
    done = cli(["stream", f"{DB}.{name}", "--uri", proxy.uri], "".join(f"{i},{msg}\n" for i, msg in rows))
    assert done.returncode == 0, done.stderr[-3000:]
    written = store.get_file_info(fs.FileSelector(location.removeprefix("s3a://"), recursive=True))
    assert any(info.is_file and info.size > 0 for info in written), written

    done = cli(["lookup", f"{DB}.{name}", "--uri", proxy.uri, "--where", "id IN (7, 150, 999)", "--format", "json"])
    assert done.returncode == 0, done.stderr[-3000:]
    found = sorted((row["id"], row["msg"]) for row in json.loads(done.stdout))
    assert found == [(7, "row 7"), (150, "row 150")]

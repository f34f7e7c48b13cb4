"""Real storage for the whole session: s3proxy and an HDFS minicluster (tests/support/s3.py,
hdfs.py), the Hadoop settings that reach them, and a metastore with S3A behind a proxy.

- `storage_conf`: a HADOOP_CONF_DIR whose core-site.xml has s3proxy's S3A keys, set in this
  process's environment (hmsproxy's storage door and the CLIs it starts read it) for the session.
- `storage_proxy`: a Hive 2.3 metastore with hadoop-aws on its classpath and the S3A keys in its
  hive-site.xml (it makes database and table directories itself), and a proxy in front of it.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from hmsproxy.dev import maven, storage_jars
from hmsproxy.dev.dev_storage import site_xml
from hmsproxy.files import filesystems
from hmsproxy.files.hadoop_conf import SITE_FILES
from tests.support.federation import primary_only_config, stored_in
from tests.support.required import unavailable
from tests.support.served import served

BUCKET = "lake"


@dataclass
class StorageConf:
    conf_dir: Path
    s3a: dict[str, str]
    bucket: str
    hdfs_uri: str

    def root(self, store: str, name: str) -> str:
        """A fresh place for `name` on `store` ("s3" or "hdfs")."""
        return f"s3a://{self.bucket}/{name}" if store == "s3" else f"{self.hdfs_uri}/{name}"


@pytest.fixture(scope="session")
def storage_conf(s3_server, hdfs_server, tmp_path_factory):
    conf_dir = tmp_path_factory.mktemp("hadoop-conf")
    (conf_dir / SITE_FILES[0]).write_text(site_xml(s3_server.s3a_conf()))
    before = os.environ.get("HADOOP_CONF_DIR")
    os.environ["HADOOP_CONF_DIR"] = str(conf_dir)
    filesystems.forget()
    yield StorageConf(conf_dir, s3_server.s3a_conf(), s3_server.make_bucket(BUCKET), hdfs_server.uri)
    if before is None:
        os.environ.pop("HADOOP_CONF_DIR", None)
    else:
        os.environ["HADOOP_CONF_DIR"] = before
    filesystems.forget()


@contextlib.contextmanager
def thrift_client(proxy):
    """A plain Thrift client of the proxy (its whole IDL: the metastore's calls and hmsproxy's)."""
    import thriftpy2.rpc

    from hmsproxy.protocol import idl

    client = thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", proxy.port, timeout=60_000)
    try:
        yield client
    finally:
        client.close()


def s3a_jars(hive_version: str | None = None) -> list[Path]:
    """S3A at pyspark's Hadoop, or at the Hadoop of a `hive_version` metastore's classpath."""
    try:
        return storage_jars.metastore_s3a_jars(hive_version) if hive_version else storage_jars.s3a_jars()
    except maven.FetchError as exc:
        unavailable(f"cannot fetch hadoop-aws with Maven: {exc}")


@pytest.fixture(scope="session")
def storage_proxy(storage_conf, metastore_factory, tmp_path_factory):
    (metastore,) = metastore_factory(1, name="storage_hms", extra_classpath=[str(j) for j in s3a_jars()], hive_conf=storage_conf.s3a)
    config = stored_in(primary_only_config(metastore.uri), tmp_path_factory.mktemp("storage-store"))
    with served(config) as server:
        server.backend_uri = metastore.uri  # for a remote table connected to it directly
        yield server


def bad_table(proxy, db: str, name: str, location: str, made_at: Path, partitioned: bool = True) -> None:
    """A Parquet table (partitioned by ds) at `location`, made with plain Thrift: created at `made_at` (the
    metastore makes a new table's directory) and then pointed at `location` (it opens nothing then)."""
    from hmsproxy.protocol import idl

    hive = idl.hive
    with thrift_client(proxy) as ms:
        if db not in ms.get_all_databases():
            ms.create_database(hive.Database(name=db, description="", locationUri=None, parameters={}))
        serde = hive.SerDeInfo(serializationLib="org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe", parameters={})
        sd = hive.StorageDescriptor(
            cols=[hive.FieldSchema("id", "int", None)],
            location=made_at.as_uri(),
            inputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
            outputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
            serdeInfo=serde,
            parameters={},
        )
        table = hive.Table(
            tableName=name,
            dbName=db,
            owner="test",
            sd=sd,
            partitionKeys=[hive.FieldSchema("ds", "string", None)] if partitioned else [],
            parameters={},
            tableType="EXTERNAL_TABLE",
        )
        ms.create_table(table)
        table = ms.get_table(db, name)
        table.sd.location = location
        ms.alter_table(db, name, table)

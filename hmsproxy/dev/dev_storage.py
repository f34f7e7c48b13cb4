"""The store `hmsproxy dev up --storage s3|hdfs` puts its warehouses on: s3proxy or an HDFS
minicluster, started beside the metastores and stopped with them.

It writes two directories into the state directory, for every client of the stack:
- `hadoop-conf/core-site.xml`: `fs.defaultFS` (the store) and, for S3, S3A's endpoint and keys.
  hmsproxy's own clients (`hmsproxy lookup`, `stream`, the jobs' drivers) and Spark read it through
  `HADOOP_CONF_DIR`; a path without a scheme (Spark's relative warehouse too) lands on the store.
- `spark-conf/spark-defaults.conf` (S3 only): hadoop-aws and the AWS SDK on the driver's and the
  executors' class path, the S3A keys as `spark.hadoop.*`, read by any pyspark or spark-submit through
  `SPARK_CONF_DIR` (`storage_jars.spark_class_path`: not `spark.jars`, which Spark copies into
  every session's local directory; the stack's executors run on this machine).
`exports()` is what a user runs in a shell to be such a client. The store's port is kept
(`kept_ports`) like the metastores', so the URIs stay the same from one start to the next.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hmsproxy.dev import storage_jars

STORES = ("local", "s3", "hdfs")
#: The bucket the S3 stack keeps its warehouses in.
BUCKET = "warehouse"
HADOOP_CONF = "hadoop-conf"
SPARK_CONF = "spark-conf"


@dataclass
class DevStorage:
    kind: str  # "s3" or "hdfs"
    root: str  # s3a://warehouse, hdfs://127.0.0.1:PORT
    server: Any  # hmsproxy.dev.s3proxy.S3Server or hmsproxy.dev.minicluster.HdfsServer
    store_conf: dict[str, str]  # the keys to reach the store (S3A's; none for HDFS)
    jars: list[Path]  # what Spark adds to reach it (S3A's at pyspark's Hadoop; none for HDFS)
    state_dir: Path

    @property
    def port(self) -> int:
        return self.server.port

    @property
    def hadoop_conf_dir(self) -> Path:
        return self.state_dir / HADOOP_CONF

    @property
    def spark_conf_dir(self) -> Path:
        return self.state_dir / SPARK_CONF

    def warehouse(self, metastore: str) -> str:
        """Where metastore `metastore` keeps its databases and managed tables."""
        return f"{self.root}/{metastore}/warehouse"

    def metastore_jars(self, hive_version: str) -> list[Path]:
        """What a metastore of `hive_version` adds: S3A at its own Hadoop (hadoop-aws must match the
        hadoop-common beside it), none for HDFS."""
        return storage_jars.metastore_s3a_jars(hive_version) if self.jars else []

    def metastore_conf(self, metastore: str) -> dict[str, str]:
        return {**self.store_conf, "hive.metastore.warehouse.dir": self.warehouse(metastore)}

    def write_client_conf(self) -> None:
        """The two configuration directories of the module's notes, written whole each start."""
        from hmsproxy.files.hadoop_conf import SITE_FILES

        self.hadoop_conf_dir.mkdir(parents=True, exist_ok=True)
        _write(self.hadoop_conf_dir / SITE_FILES[0], site_xml({"fs.defaultFS": self.root, **self.store_conf}))
        if self.jars:
            self.spark_conf_dir.mkdir(parents=True, exist_ok=True)
            settings = {**storage_jars.spark_class_path(self.jars), **{f"spark.hadoop.{k}": v for k, v in self.store_conf.items()}}
            lines = [f"{k} {v}" for k, v in settings.items()]
            _write(self.spark_conf_dir / "spark-defaults.conf", "\n".join(lines) + "\n")

    def environment(self) -> dict[str, str]:
        env = {"HADOOP_CONF_DIR": str(self.hadoop_conf_dir)}
        if self.jars:
            env["SPARK_CONF_DIR"] = str(self.spark_conf_dir)
        return env

    def exports(self) -> str:
        return "export " + " ".join(f"{k}={v}" for k, v in self.environment().items())

    def describe(self) -> str:
        if self.kind == "s3":
            return f"s3proxy at {self.server.endpoint}, bucket {BUCKET} (in memory: its objects go when dev up stops)"
        return f"an HDFS minicluster, NameNode {self.root} (data in {self.server.root})"

    def stop(self) -> None:
        self.server.stop()


def site_xml(properties: dict[str, str]) -> str:
    from xml.sax.saxutils import escape

    body = "".join(f"  <property><name>{escape(k)}</name><value>{escape(v)}</value></property>\n" for k, v in properties.items())
    return f"<?xml version='1.0'?>\n<configuration>\n{body}</configuration>\n"


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def start_storage(
    kind: str, state_dir: Path, port: int | None, say: Callable[[str], None], hive_versions: Sequence[str] = ("2.3",)
) -> DevStorage:
    """Start the store `kind` ("s3", "hdfs") on `port` (None: a free one) with its data under
    `state_dir`. FetchError, one line, if its jars (those of metastores of `hive_versions` too) were
    never fetched; RuntimeError if it does not start."""
    storage_jars.require_fetched(kind, hive_versions)
    root = state_dir / kind
    root.mkdir(parents=True, exist_ok=True)
    if kind == "s3":
        from hmsproxy.dev.ports import free_port
        from hmsproxy.dev.s3proxy import S3Server

        say(f"starting s3proxy {storage_jars.S3PROXY_VERSION} ...")
        server = S3Server(root, port or free_port(), storage_jars.s3proxy_jar()).start()
        try:
            server.make_bucket(BUCKET)
        except BaseException:
            server.stop()
            raise
        return DevStorage("s3", f"s3a://{BUCKET}", server, server.s3a_conf(), storage_jars.s3a_jars(), state_dir)
    if kind == "hdfs":
        from hmsproxy.dev.minicluster import HdfsServer

        say("starting an HDFS minicluster ...")
        server = HdfsServer(root, storage_jars.minicluster_classpath(), port).start()
        return DevStorage("hdfs", server.uri, server, {}, [], state_dir)
    raise ValueError(f"--storage {kind}: unknown store (known: {', '.join(STORES)})")

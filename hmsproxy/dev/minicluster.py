"""A real HDFS: a NameNode and a DataNode in one JVM (Hadoop's MiniDFSCluster, run by its own CLI
`MiniDFSClusterManager` from hadoop-client-minicluster at pyspark's Hadoop version, fetched with
Maven: hmsproxy.dev.storage_jars), on a loopback port. Its data stays in `root`: `stop()` then
`start()`, or a new HdfsServer on the same root, finds the files again (the dev stack's HDFS, and
the tests'). `conf` and `jvm_options` add Hadoop keys and JVM flags (a Kerberized one in the tests);
`datanodes` > 1 gives a write pipeline of that many replicas (the storage benchmark).
"""

from __future__ import annotations

import json
from pathlib import Path

from hmsproxy.dev.jvm import java_executable
from hmsproxy.dev.ports import free_port
from hmsproxy.dev.server_jvm import ServerFailed, ServerJvm

START_TIMEOUT_S = 120


class HdfsServer:
    def __init__(
        self,
        root: Path,
        classpath: str,
        port: int | None = None,
        *,
        conf: dict[str, str] | None = None,
        jvm_options: tuple[str, ...] = (),
        datanodes: int = 1,
    ):
        self.root, self.classpath = root, classpath
        self.port = port or free_port()
        self.conf, self.jvm_options, self.datanodes = dict(conf or {}), tuple(jvm_options), datanodes
        self.details = root / "details.json"
        self.child: ServerJvm | None = None

    @property
    def uri(self) -> str:
        return f"hdfs://127.0.0.1:{self.port}"

    @property
    def _data(self) -> Path:
        return self.root / "data"

    @property
    def _formatted_mark(self) -> Path:
        """Written once a formatted NameNode first answered: later starts keep its data."""
        return self.root / "formatted"

    def start(self) -> HdfsServer:
        self.details.unlink(missing_ok=True)
        formatted = self._formatted_mark.is_file()
        cmd = [
            java_executable(),
            "-Xmx512m",
            f"-Dtest.build.data={self._data}",
            "-Djava.net.preferIPv4Stack=true",
            *self.jvm_options,
            "-cp",
            self.classpath,
            "org.apache.hadoop.test.MiniDFSClusterManager",
            "-nnport",
            str(self.port),
            "-datanodes",
            str(self.datanodes),
            "-writeDetails",
            str(self.details),
            "-D",
            "dfs.permissions.enabled=false",
        ]
        for key, value in self.conf.items():
            cmd += ["-D", f"{key}={value}"]
        if not formatted:
            cmd.append("-format")
        self.child = ServerJvm("HDFS minicluster", cmd, self.root / "minicluster.log", self.root)
        self.child.start(lambda: self.details.is_file() and "namenode_port" in self.details.read_text(), START_TIMEOUT_S)
        if json.loads(self.details.read_text())["namenode_port"] != self.port:
            self.stop()
            raise ServerFailed(f"HDFS minicluster: the NameNode did not take port {self.port}", self.root / "minicluster.log")
        self._formatted_mark.touch()
        return self

    def stop(self) -> None:
        if self.child is not None:
            self.child.stop()
            self.child = None

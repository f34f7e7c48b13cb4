"""A real HDFS for the tests: a NameNode and a DataNode in one JVM (Hadoop's MiniDFSCluster, run by
its own CLI `MiniDFSClusterManager` from hadoop-client-minicluster at pyspark's Hadoop version,
fetched once with Maven: hmsproxy.dev.storage_jars), on free loopback ports. `hdfs_server` is
shared by the whole session; `stop()`/`start()` keep its data (a NameNode that is down, then back).
`conf` and `jvm_options` add Hadoop keys and JVM flags (tests/support/kerberized_hdfs.py uses them);
`datanodes` > 1 gives a write pipeline of that many replicas (tests/bench/bench_storage.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hmsproxy.dev import storage_jars
from hmsproxy.dev.jvm import java_executable
from hmsproxy.dev.ports import free_port
from tests.support.jvm_child import JvmChild, start_or_unavailable

START_TIMEOUT_S = 120


class HdfsServer:
    def __init__(
        self, root: Path, classpath: str, conf: dict[str, str] | None = None, jvm_options: tuple[str, ...] = (), datanodes: int = 1
    ):
        self.root, self.classpath = root, classpath
        self.conf, self.jvm_options, self.datanodes = dict(conf or {}), tuple(jvm_options), datanodes
        self.port = free_port()
        self.details = root / "details.json"
        self.child: JvmChild | None = None
        self._formatted = False

    @property
    def uri(self) -> str:
        return f"hdfs://127.0.0.1:{self.port}"

    def start(self) -> HdfsServer:
        self.details.unlink(missing_ok=True)
        cmd = [
            java_executable(),
            "-Xmx512m",
            f"-Dtest.build.data={self.root / 'data'}",
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
        if not self._formatted:
            cmd.append("-format")
        self.child = JvmChild("HDFS minicluster", cmd, self.root / "minicluster.log", self.root)
        self.child.start(lambda: self.details.is_file() and "namenode_port" in self.details.read_text(), START_TIMEOUT_S)
        self._formatted = True
        assert json.loads(self.details.read_text())["namenode_port"] == self.port
        return self

    def stop(self) -> None:
        if self.child is not None:
            self.child.stop()
            self.child = None


def start_hdfs(root: Path) -> HdfsServer:
    """The minicluster, fetched and started; `unavailable` (skip, or fail in CI) when it can't be."""
    return start_or_unavailable("the HDFS minicluster", storage_jars.minicluster_classpath, lambda cp: HdfsServer(root, cp).start())


@pytest.fixture(scope="session")
def hdfs_server(tmp_path_factory):
    server = start_hdfs(tmp_path_factory.mktemp("hdfs"))
    yield server
    server.stop()

"""A real HDFS for the tests: the dev stack's minicluster (hmsproxy.dev.minicluster: a NameNode and
a DataNode in one JVM) on free loopback ports, fetched once with Maven (hmsproxy.dev.storage_jars).
`hdfs_server` is shared by the whole session; `stop()`/`start()` keep its data (a NameNode that is
down, then back). HdfsServer's `conf`, `jvm_options` and `datanodes` serve
tests/support/kerberized_hdfs.py and the storage benchmark.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hmsproxy.dev import storage_jars
from hmsproxy.dev.minicluster import HdfsServer
from tests.support.jvm_child import start_or_unavailable

__all__ = ["HdfsServer", "hdfs_server", "start_hdfs"]


def start_hdfs(root: Path) -> HdfsServer:
    """The minicluster, fetched and started; `unavailable` (skip, or fail in CI) when it can't be."""
    return start_or_unavailable("the HDFS minicluster", storage_jars.minicluster_classpath, lambda cp: HdfsServer(root, cp).start())


@pytest.fixture(scope="session")
def hdfs_server(tmp_path_factory):
    server = start_hdfs(tmp_path_factory.mktemp("hdfs"))
    yield server
    server.stop()

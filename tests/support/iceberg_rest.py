"""Apache Iceberg's REST catalog server for the tests (hmsproxy.dev.iceberg_rest), a SQLite catalog
in the session's temp dir on a free port:

- `iceberg_rest`: its warehouse local, in the session's temp dir;
- `iceberg_rest_s3`: its warehouse on the session's s3proxy (tests/support/storage_stack.py), written
  by the server through S3A with the session's core-site.xml.

Each is shared by the session's tests and stopped at its end. Tests may stop() and start() one (same
port, same tables) but must leave it running. Start times are logged (`pytest -s`) and kept in
`started_in_s`.
"""

from __future__ import annotations

import time

import pytest

from hmsproxy.dev import storage_jars
from hmsproxy.dev.iceberg_rest import HADOOP_VERSION, IcebergRestServer, classpath
from hmsproxy.dev.ports import free_port
from tests.support.jvm_child import start_or_unavailable


def with_namespace(catalog, namespace: str):
    """`catalog` (a pyiceberg RestCatalog) once `namespace` exists in it (made by the first test that asks)."""
    from pyiceberg.exceptions import NamespaceAlreadyExistsError

    try:
        catalog.create_namespace(namespace)
    except NamespaceAlreadyExistsError:
        pass
    return catalog


#: Where `iceberg_rest_s3` keeps its tables, in the storage stack's bucket.
S3_WAREHOUSE = "iceberg-rest-warehouse"


def _started(what: str, fetch, start):
    t0 = time.monotonic()
    server = start_or_unavailable(what, fetch, start)
    server.started_in_s = time.monotonic() - t0
    print(f"[iceberg-rest] {server.uri} ({server.warehouse}) started in {server.started_in_s:.1f}s")
    return server


@pytest.fixture(scope="session")
def iceberg_rest(tmp_path_factory):
    root = tmp_path_factory.mktemp("iceberg-rest")
    # Every interface: the server can't be told to listen on loopback only.
    server = _started("Iceberg REST catalog server", classpath, lambda cp: IcebergRestServer(root, free_port("0.0.0.0"), cp).start())
    yield server
    server.stop()


def _with_s3a() -> tuple[str, tuple[str, ...]]:
    """The server's classpath and S3A's jars at the server's Hadoop (FetchError if they can't be fetched)."""
    return classpath(), tuple(str(jar) for jar in storage_jars.s3a_jars(hadoop_version=HADOOP_VERSION))


@pytest.fixture(scope="session")
def iceberg_rest_s3(storage_conf, tmp_path_factory):
    root = tmp_path_factory.mktemp("iceberg-rest-s3")
    warehouse = storage_conf.root("s3", S3_WAREHOUSE)
    server = _started(
        "Iceberg REST catalog server on S3",
        _with_s3a,
        lambda jars: IcebergRestServer(root, free_port("0.0.0.0"), jars[0], warehouse, storage_conf.conf_dir, jars[1]).start(),
    )
    yield server
    server.stop()

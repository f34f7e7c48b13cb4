"""Apache Iceberg's REST catalog server for the tests (hmsproxy.dev.iceberg_rest): a SQLite catalog
and a local warehouse in the session's temp dir, on a free port; `iceberg_rest` is shared by the
session's tests and stopped at its end. Tests may stop() and start() it (same port, same tables)
but must leave it running. Its start time is logged (`pytest -s`) and kept in `started_in_s`.
"""

from __future__ import annotations

import time

import pytest

from hmsproxy.dev.iceberg_rest import IcebergRestServer, classpath
from hmsproxy.dev.ports import free_port
from tests.support.jvm_child import start_or_unavailable


@pytest.fixture(scope="session")
def iceberg_rest(tmp_path_factory):
    root = tmp_path_factory.mktemp("iceberg-rest")
    t0 = time.monotonic()
    # Every interface: the server can't be told to listen on loopback only.
    server = start_or_unavailable(
        "Iceberg REST catalog server", classpath, lambda cp: IcebergRestServer(root, free_port("0.0.0.0"), cp).start()
    )
    server.started_in_s = time.monotonic() - t0
    print(f"[iceberg-rest] {server.uri} started in {server.started_in_s:.1f}s")
    yield server
    server.stop()

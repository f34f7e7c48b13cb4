"""A real S3 API server for the tests: the dev stack's s3proxy (hmsproxy.dev.s3proxy: in memory,
one key pair, S3A's settings in `s3a_conf()`) on a free loopback port, fetched once with Maven
(hmsproxy.dev.storage_jars). `s3_server` is shared by the whole session. Python reaches it through
hmsproxy's own door, given the same keys in a core-site.xml (tests/support/storage_stack.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hmsproxy.dev import storage_jars
from hmsproxy.dev.ports import free_port
from hmsproxy.dev.s3proxy import ACCESS_KEY, SECRET_KEY, S3Server
from tests.support.jvm_child import start_or_unavailable

__all__ = ["ACCESS_KEY", "SECRET_KEY", "S3Server", "s3_server", "start_s3"]


def start_s3(root: Path) -> S3Server:
    """The server, fetched and started; `unavailable` (skip, or fail in CI) when it can't be."""
    return start_or_unavailable("s3proxy", storage_jars.s3proxy_jar, lambda jar: S3Server(root, free_port(), jar).start())


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory):
    server = start_s3(tmp_path_factory.mktemp("s3proxy"))
    yield server
    server.stop()

"""A real S3 API server for the tests: s3proxy 3.0.0 keeping objects in memory (its `transient`
provider: see S3Server for why not on disk), on a free loopback port, with one key pair; fetched once with Maven
(hmsproxy.dev.storage_jars). `s3_server` is shared by the whole session.

`s3a_conf()` is what Hadoop, Spark (with `spark.hadoop.` in front) and the metastore need to reach
it: S3A's endpoint and keys, path-style addressing, and no bulk delete (S3A's carries a checksum
header s3proxy answers 501 to). Python reaches it through hmsproxy's own door, given the same keys
in a core-site.xml (`conf_dir`).
"""

from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path

import pytest

from hmsproxy.dev import storage_jars
from hmsproxy.dev.jvm import java_executable
from hmsproxy.dev.ports import free_port
from tests.support.jvm_child import JvmChild, start_or_unavailable

ACCESS_KEY, SECRET_KEY = "hmsproxy-test", "hmsproxy-test-secret"
START_TIMEOUT_S = 60


class S3Server:
    def __init__(self, root: Path, port: int, jar: Path):
        self.root, self.port = root, port
        properties = root / "s3proxy.properties"
        properties.write_text(
            f"s3proxy.endpoint=http://127.0.0.1:{port}\n"
            "s3proxy.authorization=aws-v2-or-v4\n"
            f"s3proxy.identity={ACCESS_KEY}\ns3proxy.credential={SECRET_KEY}\n"
            # In memory, keyed by name as S3 is. Both on-disk providers map keys to directories:
            # `filesystem` answers 404 for an empty directory's marker (S3A's mkdirs: the metastore's
            # CREATE TABLE fails), `filesystem-nio2` answers a directory's name as a file (S3A then
            # refuses to make directories under it).
            "jclouds.provider=transient\n"
        )
        cmd = [java_executable(), "-Xmx512m", "-jar", str(jar), "--properties", str(properties)]
        self.child = JvmChild("s3proxy", cmd, root / "s3proxy.log", root)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> S3Server:
        self.child.start(self._answers, START_TIMEOUT_S)
        return self

    def _answers(self) -> bool:
        try:
            urllib.request.urlopen(self.endpoint, timeout=2)
        except urllib.error.HTTPError:
            return True  # it answered (403 for an anonymous request)
        except (TimeoutError, urllib.error.URLError, ConnectionError):
            return False
        return True

    def stop(self) -> None:
        self.child.stop()

    def make_bucket(self, name: str) -> str:
        """A bucket, made with S3's own call; returns its name."""
        from pyarrow import fs

        store = fs.S3FileSystem(
            access_key=ACCESS_KEY, secret_key=SECRET_KEY, endpoint_override=f"127.0.0.1:{self.port}", scheme="http",
            region="us-east-1", allow_bucket_creation=True,
        )  # fmt: skip
        store.create_dir(name)
        return name

    def s3a_conf(self) -> dict[str, str]:
        return {
            "fs.s3a.endpoint": self.endpoint,
            "fs.s3a.access.key": ACCESS_KEY,
            "fs.s3a.secret.key": SECRET_KEY,
            "fs.s3a.path.style.access": "true",
            "fs.s3a.connection.ssl.enabled": "false",
            "fs.s3a.endpoint.region": "us-east-1",
            "fs.s3a.multiobjectdelete.enable": "false",
            "fs.s3a.impl": "org.apache.hadoop.fs.s3a.S3AFileSystem",
        }


def start_s3(root: Path) -> S3Server:
    """The server, fetched and started; `unavailable` (skip, or fail in CI) when it can't be."""
    return start_or_unavailable("s3proxy", storage_jars.s3proxy_jar, lambda jar: S3Server(root, free_port(), jar).start())


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory):
    server = start_s3(tmp_path_factory.mktemp("s3proxy"))
    yield server
    server.stop()

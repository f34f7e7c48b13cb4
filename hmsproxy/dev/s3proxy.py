"""s3proxy 3.0.0, a real S3 API server, on a loopback port with one key pair (the dev stack's S3,
and the tests').

It keeps objects in memory (jclouds' `transient` provider): both on-disk providers map keys to
directories, and `filesystem` answers 404 for an empty directory's marker (S3A's mkdirs: a
metastore's CREATE TABLE fails) while `filesystem-nio2` answers a directory's name as a file (S3A
then refuses to make directories under it). So its objects are gone when it stops.

`s3a_conf()` is what Hadoop, Spark (with `spark.hadoop.` in front) and a metastore need to reach
it: S3A's endpoint and keys, path-style addressing, and no bulk delete (S3A's carries a checksum
header s3proxy answers 501 to). hmsproxy's own clients read the same keys from a core-site.xml.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path

from hmsproxy.dev.jvm import java_executable
from hmsproxy.dev.server_jvm import ServerJvm

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
            "jclouds.provider=transient\n"  # in memory: see the module's notes
        )
        cmd = [java_executable(), "-Xmx512m", "-jar", str(jar), "--properties", str(properties)]
        self.child = ServerJvm("s3proxy", cmd, root / "s3proxy.log", root)

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
        """A bucket, made with S3's own call (an existing one is kept); returns its name."""
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

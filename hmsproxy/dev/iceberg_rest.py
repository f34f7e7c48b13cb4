"""Apache Iceberg's own REST catalog server (org.apache.iceberg.rest.RESTCatalogServer, from
iceberg-open-api's test fixtures: what Iceberg's REST fixture image runs), for the tests.

Its jars come once with Maven (poms/iceberg-rest-1.10.0.xml) into the cache. It is configured by
environment variables only (CATALOG_<KEY>, `__` for `-` and `_` for `.`): a JDBC catalog in a SQLite
file under `root`, so a restart on the same port serves the same tables, and a warehouse under
`root` or at a Hadoop location given (`s3a://bucket/…`, `hdfs://…`): its FileIO is then Iceberg's
default HadoopFileIO, which reaches S3 through S3A (`extra_classpath`: hadoop-aws and its AWS SDK
bundle at the server's Hadoop, `HADOOP_VERSION`) with the settings of the core-site.xml in `hadoop_conf_dir`
(Hadoop's `new Configuration()` reads it from the classpath). It has no setting for the address it
listens on: it listens on every interface, at a port picked free on all of them.
"""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from pathlib import Path

from hmsproxy.dev import maven
from hmsproxy.dev.jvm import java_executable
from hmsproxy.dev.server_jvm import ServerJvm

VERSION = "1.10.0"
#: The Hadoop its pom brings (hadoop-client-api/-runtime): S3A's jars must be of this version.
HADOOP_VERSION = "3.4.1"
MAIN_CLASS = "org.apache.iceberg.rest.RESTCatalogServer"
START_TIMEOUT_S = 90


def classpath(say=None) -> str:
    """The server's jars, fetched with Maven on first use (FetchError if they can't be)."""
    home = maven.fetch_pom(f"iceberg-rest-{VERSION}", ("dependency:copy-dependencies@lib",), label=f"Iceberg REST {VERSION}", say=say)
    return str(home / "lib" / "*")


class IcebergRestServer:
    def __init__(
        self,
        root: Path,
        port: int,
        classpath: str,
        warehouse: str | None = None,
        hadoop_conf_dir: Path | None = None,
        extra_classpath: tuple[str, ...] = (),
    ):
        self.root, self.port = root, port
        if warehouse is None:
            (root / "warehouse").mkdir(parents=True, exist_ok=True)
            warehouse = (root / "warehouse").as_uri()
        self.warehouse = warehouse
        self.env = {
            "CATALOG_REST_PORT": str(port),
            "CATALOG_WAREHOUSE": self.warehouse,
            "CATALOG_URI": f"jdbc:sqlite:file:{root / 'catalog.db'}",
            "CATALOG_JDBC_USER": "hmsproxy",
            "CATALOG_JDBC_PASSWORD": "hmsproxy",
        }
        # The conf directory first: its core-site.xml is the one Hadoop finds. Then S3A's jars:
        # iceberg-core's test jar carries a stand-in S3ABlockOutputStream that must not win.
        entries = [str(hadoop_conf_dir)] if hadoop_conf_dir else []
        entries += [*extra_classpath, classpath]
        self._cmd = [java_executable(), "-Xmx384m", "-XX:TieredStopAtLevel=1", "-cp", os.pathsep.join(entries), MAIN_CLASS]
        self.child: ServerJvm | None = None

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> IcebergRestServer:
        self.child = ServerJvm("iceberg-rest", self._cmd, self.root / "iceberg-rest.log", self.root, env=self.env)
        self.child.start(self._answers, START_TIMEOUT_S)
        return self

    def stop(self) -> None:
        if self.child is not None:
            self.child.stop()

    def _answers(self) -> bool:
        try:
            urllib.request.urlopen(f"{self.uri}/v1/config", timeout=2).close()
        except urllib.error.HTTPError:
            return True
        except (TimeoutError, urllib.error.URLError, ConnectionError):
            return False
        return True

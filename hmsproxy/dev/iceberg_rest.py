"""Apache Iceberg's own REST catalog server (org.apache.iceberg.rest.RESTCatalogServer, from
iceberg-open-api's test fixtures: what Iceberg's REST fixture image runs), for the tests.

Its jars come once with Maven (poms/iceberg-rest-1.10.0.xml) into the cache. It is configured by
environment variables only: a JDBC catalog in a SQLite file and a local warehouse, both under
`root`, so a restart on the same port serves the same tables. It has no setting for the address it
listens on: it listens on every interface, at a port picked free on all of them.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path

from hmsproxy.dev import maven
from hmsproxy.dev.jvm import java_executable
from hmsproxy.dev.server_jvm import ServerJvm

VERSION = "1.10.0"
MAIN_CLASS = "org.apache.iceberg.rest.RESTCatalogServer"
START_TIMEOUT_S = 90


def classpath(say=None) -> str:
    """The server's jars, fetched with Maven on first use (FetchError if they can't be)."""
    home = maven.fetch_pom(f"iceberg-rest-{VERSION}", ("dependency:copy-dependencies@lib",), label=f"Iceberg REST {VERSION}", say=say)
    return str(home / "lib" / "*")


class IcebergRestServer:
    def __init__(self, root: Path, port: int, classpath: str):
        self.root, self.port = root, port
        (root / "warehouse").mkdir(parents=True, exist_ok=True)
        self.warehouse = (root / "warehouse").as_uri()
        self.env = {
            "CATALOG_REST_PORT": str(port),
            "CATALOG_WAREHOUSE": self.warehouse,
            "CATALOG_URI": f"jdbc:sqlite:file:{root / 'catalog.db'}",
            "CATALOG_JDBC_USER": "hmsproxy",
            "CATALOG_JDBC_PASSWORD": "hmsproxy",
        }
        self._cmd = [java_executable(), "-Xmx384m", "-XX:TieredStopAtLevel=1", "-cp", classpath, MAIN_CLASS]
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

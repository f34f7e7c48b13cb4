"""A Spark Connect server from pyspark's own wheel, its Hive catalog pointed at a given metastore.

The 4.0 wheel carries the server (jars/spark-connect_*.jar) but not `sbin/start-connect-server.sh`,
which is spark-submit of SparkConnectServer on `spark-internal`; this module runs that same
spark-submit, with local[2] executors, gRPC on loopback and a free port. Ready is the first answered
query from a client process (a bounded poll); `stop()` ends the server's whole process group.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from hmsproxy.dev.ports import free_ports
from tests.support.children import run_in_group, terminate_group
from tests.support.spark_cluster import spark_home

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
READY_TIMEOUT_S = 180.0


@dataclass
class ConnectServer:
    url: str
    port: int
    log: Path
    process: subprocess.Popen

    def stop(self) -> None:
        terminate_group(self.process)


def connect_available() -> str | None:
    """Why a Connect client can't run here (its Python packages are missing), or None."""
    try:
        import pyspark.sql.connect.session  # noqa: F401  (it checks grpc, pandas, pyarrow on import)
    except Exception as e:  # ImportError or PySparkImportError: the connect extra is not installed
        return f"Spark Connect's client needs pyspark[connect] (pip install 'hmsproxy[connect]'): {e}"
    return None


def start_connect_server(root: Path, metastore_uri: str, warehouse: Path | str, extra_conf: dict[str, str] | None = None) -> ConnectServer:
    """`warehouse`: a local directory or a URI (s3a://…); `extra_conf` adds to or overrides the server's conf."""
    root.mkdir(parents=True, exist_ok=True)
    [port] = free_ports(1)
    scratch = Path(tempfile.mkdtemp(prefix="connect-", dir=root))
    java_opts = f"-Dderby.system.home={scratch} -Djava.net.preferIPv4Stack=true"
    conf = {
        "spark.connect.grpc.binding.address": "127.0.0.1",
        "spark.connect.grpc.binding.port": str(port),
        "spark.sql.catalogImplementation": "hive",
        "spark.hadoop.hive.metastore.uris": metastore_uri,
        "spark.sql.warehouse.dir": warehouse if isinstance(warehouse, str) else warehouse.resolve().as_uri(),
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": "2",
        "spark.sql.session.timeZone": "UTC",
        "spark.driver.memory": "1g",
        "spark.driver.extraJavaOptions": java_opts,
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.local.dir": str(scratch),
        **(extra_conf or {}),
    }
    home = spark_home()
    argv = [str(home / "bin" / "spark-submit"), "--master", "local[2]", "--class", SERVER_CLASS, "--name", "hmsproxy-tests-connect"]
    for key, value in conf.items():
        argv += ["--conf", f"{key}={value}"]
    argv.append("spark-internal")
    env = {**os.environ, "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
    env.pop("SPARK_REMOTE", None)
    log = root / "connect-server.log"
    with open(log, "ab") as out:
        process = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    server = ConnectServer(f"sc://127.0.0.1:{port}", port, log, process)
    try:
        _wait_until_ready(server)
    except BaseException:
        server.stop()
        raise
    return server


def _wait_until_ready(server: ConnectServer) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"the Spark Connect server exited with {server.process.returncode}; see {server.log}")
        try:
            with socket.create_connection(("127.0.0.1", server.port), timeout=2):
                break
        except OSError:
            time.sleep(0.5)
    else:
        raise RuntimeError(f"the Spark Connect server did not listen within {READY_TIMEOUT_S:.0f} s; see {server.log}")
    # The first query from a client in its own process (a Connect session made here would switch this
    # process's column functions to Connect's): the server's session and Hive client are up.
    client = [sys.executable, "-m", "tests.support.connect_client", server.url, '[["sql", "SELECT 1"]]']
    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[2]), env.get("PYTHONPATH")]))
    done = run_in_group(client, env, server.log.parent, timeout=max(30.0, deadline - time.monotonic()))
    if done.returncode != 0:
        raise RuntimeError(f"the Spark Connect server did not answer a first query: {done.stderr[-2000:]}; see {server.log}")

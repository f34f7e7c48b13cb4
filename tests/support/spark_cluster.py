"""A Spark standalone cluster from pyspark's own wheel: one master and N workers, each its own JVM.

The wheel carries `bin/spark-class` but no `sbin/start-master.sh`, so the master and the workers are
started as `spark-class org.apache.spark.deploy.master.Master` / `...worker.Worker`, on loopback and
free ports. The cluster is ready when the master's JSON status lists every worker ALIVE (a bounded
poll). Executors run in the workers' child JVMs, so a job run on this cluster crosses processes the
way it does on a real one.

`worker_python` sets the Python the workers' executors would start for Python code (PYSPARK_PYTHON):
tests give it an interpreter without hmsproxy to show the jobs run no Python on executors.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from hmsproxy.dev.ports import free_ports
from tests.support.children import terminate_group

MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
#: How long a cold master and its workers get to come up on a busy 2-core machine.
READY_TIMEOUT_S = 120.0


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


@dataclass
class SparkCluster:
    master_url: str
    web_url: str
    work_dir: Path
    processes: list[subprocess.Popen] = field(default_factory=list)

    def status(self) -> dict:
        """The master's JSON status (workers, running and completed applications)."""
        with urllib.request.urlopen(f"{self.web_url}/json/", timeout=10) as answer:
            return json.load(answer)

    def alive_workers(self) -> list[dict]:
        return [w for w in self.status().get("workers", []) if w.get("state") == "ALIVE"]

    def completed_apps(self) -> list[dict]:
        return self.status().get("completedapps", [])

    def executor_logs(self) -> list[Path]:
        """Every executor's stderr under the workers' work directories (app-*/N/stderr)."""
        return sorted(self.work_dir.glob("worker-*/app-*/*/stderr"))

    def stop(self) -> None:
        for process in reversed(self.processes):
            terminate_group(process)
        self.processes.clear()


def start_cluster(root: Path, *, workers: int = 2, cores: int = 1, memory: str = "1g", worker_python: str | None = None) -> SparkCluster:
    """Start a master and `workers` workers under `root` (logs and work directories); stop it with `stop()`."""
    root.mkdir(parents=True, exist_ok=True)
    master_port, web_port, *worker_ports = free_ports(2 + 2 * workers)
    cluster = SparkCluster(f"spark://127.0.0.1:{master_port}", f"http://127.0.0.1:{web_port}", root)
    try:
        cluster.processes.append(
            _spark_class(root / "master.log", MASTER_CLASS, "--host", "127.0.0.1", "--port", master_port, "--webui-port", web_port)
        )
        for n in range(workers):
            port, ui = worker_ports[2 * n], worker_ports[2 * n + 1]
            work = root / f"worker-{n}"
            work.mkdir(exist_ok=True)
            args = ["--host", "127.0.0.1", "--port", port, "--webui-port", ui, "--cores", cores, "--memory", memory, "--work-dir", work]
            env = {"PYSPARK_PYTHON": worker_python} if worker_python else {}
            cluster.processes.append(_spark_class(root / f"worker-{n}.log", WORKER_CLASS, *args, cluster.master_url, env=env))
        _wait_until_ready(cluster, workers)
    except BaseException:
        cluster.stop()
        raise
    return cluster


def _spark_class(log: Path, main_class: str, *args, env: dict[str, str] | None = None) -> subprocess.Popen:
    home = spark_home()
    environment = {
        **os.environ,
        "SPARK_HOME": str(home),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_LOG_DIR": str(log.parent),
        # The daemons themselves are small; their executors get the worker's --memory.
        "SPARK_DAEMON_MEMORY": "256m",
        "PYSPARK_PYTHON": sys.executable,
        **(env or {}),
    }
    with open(log, "ab") as out:
        # A session of its own: spark-class execs java, and a stop ends the whole group.
        return subprocess.Popen(
            [str(home / "bin" / "spark-class"), main_class, *map(str, args)],
            env=environment,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )


def _wait_until_ready(cluster: SparkCluster, workers: int) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    seen = 0
    while time.monotonic() < deadline:
        for process in cluster.processes:
            if process.poll() is not None:
                raise RuntimeError(f"a Spark daemon exited with {process.returncode}; see the logs in {cluster.work_dir}")
        try:
            seen = len(cluster.alive_workers())
        except (urllib.error.URLError, OSError, ValueError):
            seen = 0
        if seen >= workers:
            return
        time.sleep(0.5)
    raise RuntimeError(f"the Spark cluster had {seen} of {workers} workers alive after {READY_TIMEOUT_S:.0f} s; logs in {cluster.work_dir}")

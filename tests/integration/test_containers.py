"""The deployment artefacts run for real.

* test_compose_stack_smoke: with a Docker engine (and the compose plugin), build the image
  with the Docker SDK, bring docker-compose.yml up, run its `spark` service
  (deploy/compose/smoke.py through thrift://hmsproxy:9083), check the output and the
  proxy's /metrics, and remove everything. Skipped, with the reason, where no engine
  answers (as on the development VMs, which have the docker CLI but no daemon).
* test_smoke_script_through_local_proxy: the same smoke script, with no containers, against
  the suite's real local metastores behind the session's proxy, so the script the
  compose stack runs is tested on every run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import urllib.request
import uuid
from pathlib import Path

import pytest

from hmsproxy.dev.ports import free_port

REPO = Path(__file__).resolve().parents[2]
COMPOSE = REPO / "docker-compose.yml"
SMOKE = REPO / "deploy" / "compose" / "smoke.py"


def _docker_client():
    """A Docker SDK client whose engine answers, or skip the test with the reason."""
    try:
        import docker
    except ImportError as e:  # pragma: no cover - docker is in the test extra
        pytest.skip(f"docker SDK not installed: {e}")
    try:
        client = docker.from_env(timeout=15)
        client.ping()
    except Exception as e:  # DockerException, connection errors, ...
        pytest.skip(f"no Docker engine: {e}")
    return client


def _compose_command() -> list[str]:
    """`docker compose` (v2 plugin) or `docker-compose`, or skip the test with the reason."""
    reasons = []
    docker = shutil.which("docker")
    if docker:
        probe = subprocess.run([docker, "compose", "version"], capture_output=True, text=True, timeout=30)
        if probe.returncode == 0:
            return [docker, "compose"]
        reasons.append((probe.stderr or probe.stdout).strip().splitlines()[0])
    legacy = shutil.which("docker-compose")
    if legacy:
        return [legacy]
    pytest.skip(f"no docker compose: {'; '.join(reasons) or 'neither docker compose nor docker-compose found'}")


@pytest.fixture
def docker_client():
    client = _docker_client()
    yield client
    client.close()


def test_compose_stack_smoke(docker_client):
    compose = _compose_command()
    tag = f"hmsproxy:smoke-{uuid.uuid4().hex[:8]}"
    project = f"hmsproxy-smoke-{uuid.uuid4().hex[:8]}"
    thrift_port, ops_port = free_port(), free_port()
    env = {
        **os.environ,
        "HMSPROXY_IMAGE": tag,
        "HMSPROXY_THRIFT_PORT": str(thrift_port),
        "HMSPROXY_OPS_PORT": str(ops_port),
    }
    base = [*compose, "-p", project, "-f", str(COMPOSE)]

    def run(*args: str, timeout: float) -> subprocess.CompletedProcess:
        return subprocess.run([*base, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)

    docker_client.images.build(path=str(REPO), dockerfile="Dockerfile", tag=tag, rm=True, forcerm=True)
    try:
        up = run("up", "-d", "--no-build", "--wait", "--wait-timeout", "600", timeout=900)
        if up.returncode != 0:
            logs = run("logs", "--no-color", timeout=120)
            pytest.fail(f"docker compose up failed:\n{up.stderr}\n{logs.stdout[-20000:]}")

        smoke = run("run", "--rm", "spark", timeout=900)
        output = smoke.stdout + smoke.stderr
        assert smoke.returncode == 0, output[-20000:]
        assert "SMOKE OK: 3 rows through thrift://hmsproxy:9083" in output
        for row in ("1\talpha", "2\tbeta", "3\tgamma"):
            assert row in output
        assert "federated_default" in output

        # The operations port is published and reports the calls Spark made.
        with urllib.request.urlopen(f"http://127.0.0.1:{ops_port}/readyz", timeout=10) as resp:
            assert resp.status == 200
        with urllib.request.urlopen(f"http://127.0.0.1:{ops_port}/metrics", timeout=10) as resp:
            metrics = resp.read().decode()
        assert "hmsproxy_requests_total" in metrics and 'backend="primary"' in metrics
    finally:
        run("--profile", "smoke", "down", "-v", "--remove-orphans", "--timeout", "30", timeout=300)
        try:
            docker_client.images.remove(tag, force=True)
        except Exception:  # already gone, or still referenced: nothing more to clean here
            pass


@pytest.mark.spark
def test_smoke_script_through_local_proxy(proxy, proxy_client, tmp_path):
    """deploy/compose/smoke.py against the real local metastores behind the session proxy."""
    database = f"smoke_{uuid.uuid4().hex[:8]}"
    fed_default = f"{proxy.handler.config.federated[0].database_prefix}default"
    cmd = [
        sys.executable,
        str(SMOKE),
        "--uri",
        f"thrift://127.0.0.1:{proxy.port}",
        "--warehouse",
        (tmp_path / "warehouse").as_uri(),
        "--database",
        database,
        "--expect-database",
        fed_default,
    ]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=tmp_path)
        output = done.stdout + done.stderr
        assert done.returncode == 0, output[-20000:]
        assert f"SMOKE OK: 3 rows through thrift://127.0.0.1:{proxy.port}" in done.stdout
        assert f"rows of {database}.items:" in done.stdout
        for row in ("1\talpha", "2\tbeta", "3\tgamma"):
            assert row in done.stdout
        # What Spark created went through the proxy to the primary metastore.
        table = proxy_client.get_table(database, "items")
        assert table.tableName == "items"
        assert table.parameters.get("spark.sql.sources.provider") == "parquet"
    finally:
        try:
            proxy_client.drop_database(database, True, True)
        except Exception:
            pass

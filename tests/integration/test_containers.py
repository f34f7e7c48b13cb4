"""The deployment artefacts run for real: the Dockerfile's images and the compose dev stack.

`make test` starts a Docker engine where none answers (deploy/local/engine.sh: Debian's dockerd,
vfs storage, no iptables) and makes the local images this machine needs because no registry is
reachable (deploy/local/images.sh: a debootstrap bookworm base, PostgreSQL 15 from Debian). The
tests use them when they are there, else the Dockerfile's and the compose file's defaults.

Both images are built (on the local base when there is one; skipped when the image of that tag
was built from the same files), then one compose stack serves the module:

* test_images_build_and_run_the_cli: `hmsproxy --version`, `check-config`, `id -u` (the
  non-root uid) and the C walker's import in the full image (hmsproxy[spark] + Java) and the proxy-only one (EXTRAS empty:
  neither), run in the stack's containers; their sizes.
* test_proxy_image_healthcheck_is_healthy: the proxy service runs the image's own HEALTHCHECK,
  which `docker compose up --wait` saw turn healthy.
* test_compose_stack_smoke: on the compose file's own user-defined bridge network, a table made
  on hms-federated, the `spark` service through thrift://hmsproxy:9083, then from the host the
  federated table read through the proxy, /readyz and /metrics; the proxy's resident memory.
  `docker compose down -v` ends the module and must leave no container or volume.
* test_smoke_script_through_local_proxy: the same smoke script with no containers, against the
  suite's real local metastores behind the session's proxy.

Without an engine (or the compose v2 plugin) the container tests skip with the reason, and fail
with CI=true, where `make test` provides both.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import pytest
import thriftpy2.rpc

from hmsproxy import __version__
from hmsproxy.dev.ports import free_port
from hmsproxy.jobs.spark_extension import JAR_DIR, jar_name, spark_line
from hmsproxy.protocol import idl
from tests.support.required import unavailable

REPO = Path(__file__).resolve().parents[2]
COMPOSE = REPO / "docker-compose.yml"
SMOKE = REPO / "deploy" / "compose" / "smoke.py"

#: Made by deploy/local/images.sh; used when present (no registry here to pull the defaults from).
LOCAL_BASE = os.environ.get("HMSPROXY_BASE_IMAGE", "hmsproxy-base:bookworm")
LOCAL_POSTGRES = os.environ.get("HMSPROXY_POSTGRES_IMAGE", "hmsproxy-postgres:15")
#: Fixed tags, so the next run's build finds its layers in the engine's cache.
FULL_TAG = "hmsproxy:test"
PROXY_TAG = "hmsproxy:test-proxy"
PACKAGE_TAG = "hmsproxy:test-package"
UID = "10001"


@pytest.fixture(scope="module")
def engine():
    try:
        import docker
    except ImportError as e:  # pragma: no cover - docker is in the test extra
        unavailable(f"docker SDK not installed: {e}")
    try:
        client = docker.from_env(timeout=600)
        client.ping()
    except Exception as e:  # DockerException, connection errors, ...
        unavailable(f"no Docker engine: {e}")
    yield client
    client.close()


@pytest.fixture(scope="module")
def compose_cmd() -> list[str]:
    """`docker compose` (v2: `up --wait`); Debian's docker-compose 1.29 cannot wait for health."""
    try:
        probe = subprocess.run(["docker", "compose", "version"], capture_output=True, text=True, timeout=30)
    except FileNotFoundError:
        unavailable("no docker CLI")
    if probe.returncode != 0:
        unavailable(f"no docker compose v2 plugin: {(probe.stderr or probe.stdout).strip()}")
    return ["docker", "compose"]


def _local(client, image: str) -> str | None:
    try:
        client.images.get(image)
    except Exception:
        return None
    return image


#: What the Dockerfile copies from the context (.dockerignore leaves out caches and built objects).
BUILD_INPUTS = ("Dockerfile", "pyproject.toml", "setup.py", "README.md", "config/hmsproxy.example.yml")


def _inputs_digest(buildargs: dict[str, str]) -> str:
    digest = hashlib.sha256(repr(sorted(buildargs.items())).encode())
    files = [REPO / name for name in BUILD_INPUTS] + sorted(
        f for f in (REPO / "hmsproxy").rglob("*") if f.is_file() and "__pycache__" not in f.parts and f.suffix not in (".pyc", ".so")
    )
    for f in files:
        digest.update(str(f.relative_to(REPO)).encode() + b"\0" + f.read_bytes())
    return digest.hexdigest()[:16]


def _build(client, tag: str, **buildargs: str):
    """Build `tag` from the Dockerfile (on the local base when there is one), unless the image of
    that tag was built from the same files; drop the image it replaces."""
    base = _local(client, LOCAL_BASE)
    if base:
        buildargs["BASE_IMAGE"] = base
    # The inputs' digest is a second tag of the image, not a label: build labels are one more
    # build step, which with the vfs driver copies the whole image twice.
    marker = f"{tag}-inputs-{_inputs_digest(buildargs)}"
    current = _local(client, tag) and client.images.get(tag)
    if current and _local(client, marker) and client.images.get(marker).id == current.id:
        return current  # built from these very files
    # Untagged, a superseded image has one tag left, and _tagged_build can remove it.
    for old in [t for image in client.images.list(name=tag.split(":")[0]) for t in image.tags if t.startswith(f"{tag}-inputs-")]:
        client.images.remove(old)
    # The package stage first, under a tag of its own: superseded, it is removed like the image,
    # with the layers no later build shares (the vfs driver keeps every layer as a full copy). It
    # is the same for both images: the second build finds it cached.
    _tagged_build(client, PACKAGE_TAG, target="package", buildargs=buildargs)
    image = _tagged_build(client, tag, buildargs=buildargs)
    repository, _, name = marker.partition(":")
    image.tag(repository, name)
    return client.images.get(tag)


def _tagged_build(client, tag: str, **kwargs):
    old = _local(client, tag) and client.images.get(tag).id
    try:
        # Host networking: apt and pip reach the mirrors the way this machine does (dockerd runs
        # without iptables, so a bridge has no route out).
        image, _ = client.images.build(path=str(REPO), tag=tag, network_mode="host", rm=True, forcerm=True, **kwargs)
    except Exception as e:  # BuildError carries the log
        log = "".join(chunk.get("stream", "") for chunk in getattr(e, "build_log", []) or [])
        pytest.fail(f"docker build {tag} failed: {e}\n{log[-10000:]}")
    if old and old != image.id:
        try:
            client.images.remove(old)
        except Exception:  # still used by a container: the engine keeps it
            pass
    return image


@pytest.fixture(scope="module")
def full_image(engine):
    return _build(engine, FULL_TAG)


@pytest.fixture(scope="module")
def proxy_image(engine):
    return _build(engine, PROXY_TAG, EXTRAS="")


class Stack:
    """A compose project of docker-compose.yml on free host ports."""

    def __init__(self, compose_cmd: list[str], env: dict[str, str]):
        self.project = f"hmsproxy-smoke-{uuid.uuid4().hex[:8]}"
        self.thrift_port, self.ops_port = int(env["HMSPROXY_THRIFT_PORT"]), int(env["HMSPROXY_OPS_PORT"])
        self.env = env
        self.base = [*compose_cmd, "-p", self.project, "-f", str(COMPOSE)]

    def run(self, *args: str, timeout: float) -> subprocess.CompletedProcess:
        return subprocess.run([*self.base, *args], cwd=REPO, env=self.env, capture_output=True, text=True, timeout=timeout)

    def container(self, engine, service: str):
        done = self.run("ps", "-q", service, timeout=60)
        assert done.returncode == 0 and done.stdout.strip(), done.stderr
        return engine.containers.get(done.stdout.split()[0])


@pytest.fixture(scope="module")
def stack(engine, compose_cmd, full_image, proxy_image):
    """`docker compose up --wait` of the dev stack (two metastores, PostgreSQL, the proxy on the
    proxy-only image); `docker compose down -v` after the module, leaving nothing behind."""
    env = {
        **os.environ,
        "HMSPROXY_IMAGE": FULL_TAG,
        "HMSPROXY_PROXY_IMAGE": PROXY_TAG,
        "HMSPROXY_THRIFT_PORT": str(free_port()),
        "HMSPROXY_OPS_PORT": str(free_port()),
    }
    if _local(engine, LOCAL_POSTGRES):
        env["POSTGRES_IMAGE"] = LOCAL_POSTGRES
    s = Stack(compose_cmd, env)
    try:
        started = time.monotonic()
        up = s.run("up", "-d", "--no-build", "--wait", "--wait-timeout", "600", timeout=900)
        if up.returncode != 0:
            logs = s.run("logs", "--no-color", timeout=120)
            pytest.fail(f"docker compose up failed:\n{up.stderr}\n{logs.stdout[-20000:]}")
        print(f"compose: up --wait healthy after {time.monotonic() - started:.0f}s")
        yield s
    finally:
        down = s.run("--profile", "smoke", "down", "-v", "--remove-orphans", "--timeout", "30", timeout=300)
        assert down.returncode == 0, down.stderr
    label = f"com.docker.compose.project={s.project}"
    assert not engine.containers.list(all=True, filters={"label": label}), "down -v removes every container"
    assert not engine.volumes.list(filters={"label": label}), "down -v removes every volume"


CLI_CHECK = (
    "hmsproxy --version && id -u && hmsproxy check-config --config /etc/hmsproxy/hmsproxy.example.yml >/dev/null && echo CONFIG OK"
    " && python -c 'import hmsproxy.protocol._thriftwalk' && echo C WALKER"
    " && (python -c 'import pyspark; print(pyspark.__version__)' 2>/dev/null || echo NO PYSPARK)"
    " && (command -v java >/dev/null && echo JAVA || echo NO JAVA)"
    " && (python -c 'from hmsproxy.jobs.spark_extension import index_extension_jar; print(index_extension_jar().name)' 2>/dev/null"
    " || echo NO SPARK EXTENSION)"
)


def test_images_build_and_run_the_cli(engine, stack, full_image, proxy_image):
    """The CLI in both images, in the stack's running containers (with vfs, a new container
    copies the image's whole file system: these cost nothing more)."""
    outputs = {}
    for service, image in (("hms-primary", full_image), ("hmsproxy", proxy_image)):
        container = stack.container(engine, service)
        assert container.image.id == image.id
        code, out = container.exec_run(["sh", "-c", CLI_CHECK])
        outputs[service] = out.decode()
        assert code == 0, outputs[service]
    full, proxy = outputs["hms-primary"], outputs["hmsproxy"]
    for out in (full, proxy):
        assert __version__ in out.splitlines()[0], out
        assert out.splitlines()[1] == UID, "the image runs as its non-root uid"
        assert "CONFIG OK" in out, out
        assert "C WALKER" in out.splitlines(), "the relay's C walker was built into the image"
    assert "JAVA" in full.splitlines() and "NO PYSPARK" not in full, full
    assert "NO PYSPARK" in proxy and "NO JAVA" in proxy, proxy
    # The Spark extension's jar for the image's Spark line ships in the image when this tree has it
    # (`make install` builds it where mvn is; the image copies hmsproxy/ as package data).
    image_spark = next(line for line in full.splitlines() if re.fullmatch(r"\d+\.\d+\.\d+\S*", line))  # pyspark's version
    built = JAR_DIR / jar_name(spark_line(image_spark))
    assert (built.name in full.splitlines()) == built.is_file(), (built, full)
    full_mb, proxy_mb = full_image.attrs["Size"] / 2**20, proxy_image.attrs["Size"] / 2**20
    print(f"image sizes: full {full_mb:.0f} MiB, proxy-only {proxy_mb:.0f} MiB")
    assert proxy_mb < full_mb - 300, "the proxy-only image carries neither pyspark nor Java"


def test_proxy_image_healthcheck_is_healthy(engine, stack, proxy_image):
    """The proxy service runs the image's own HEALTHCHECK (compose sets only its timings), and
    `up --wait` returned once Docker reported it healthy."""
    container = stack.container(engine, "hmsproxy")
    check = container.attrs["Config"]["Healthcheck"]
    assert check["Test"] == proxy_image.attrs["Config"]["Healthcheck"]["Test"]
    assert check["Interval"] < proxy_image.attrs["Config"]["Healthcheck"]["Interval"]
    health = container.attrs["State"]["Health"]
    assert health["Status"] == "healthy" and health["Log"][-1]["ExitCode"] == 0, health


# ------------------------------------------------------------------------------------
# the compose dev stack


def _thrift(port: int):
    return thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", port, timeout=60_000)


def _rss_kib(container) -> int:
    """Resident memory of the container's hmsproxy process (under docker-init), in KiB."""
    top = container.top(ps_args="-o pid,rss,args")
    rows = [dict(zip(top["Titles"], p)) for p in top["Processes"]]
    return max(int(r["RSS"]) for r in rows if "hmsproxy" in r["COMMAND"] and "serve" in r["COMMAND"])


def test_compose_stack_smoke(engine, stack):
    # A table made directly on the federated metastore (inside the stack) ...
    fed_table = f"t_{uuid.uuid4().hex[:8]}"
    made = stack.run("exec", "-T", "hms-federated", "python", "-c", CREATE_ON_FEDERATED, fed_table, timeout=120)
    assert made.returncode == 0, made.stdout + made.stderr

    smoke = stack.run("run", "--rm", "spark", timeout=900)
    output = smoke.stdout + smoke.stderr
    assert smoke.returncode == 0, output[-20000:]
    assert "SMOKE OK: 3 rows through thrift://hmsproxy:9083" in output
    for row in ("1\talpha", "2\tbeta", "3\tgamma"):
        assert row in output
    assert "federated_default" in output

    # ... is read from the host through the proxy's published port, under its prefix.
    client = _thrift(stack.thrift_port)
    try:
        table = client.get_table("federated_default", fed_table)
        assert table.tableName == fed_table and table.dbName == "federated_default"
        assert [c.name for c in table.sd.cols] == ["id", "name"]
        assert client.get_table("smoke", "items").parameters.get("spark.sql.sources.provider") == "parquet"
    finally:
        client.close()

    # The operations port is published and reports the calls Spark made.
    with urllib.request.urlopen(f"http://127.0.0.1:{stack.ops_port}/readyz", timeout=10) as resp:
        assert resp.status == 200
    with urllib.request.urlopen(f"http://127.0.0.1:{stack.ops_port}/metrics", timeout=10) as resp:
        metrics = resp.read().decode()
    assert "hmsproxy_requests_total" in metrics and 'backend="primary"' in metrics
    assert re.search(r'hmsproxy_requests_total\{[^}]*backend="federated"', metrics), "the federated read is counted"

    proxy = stack.container(engine, "hmsproxy")
    print(f"compose: hmsproxy resident memory after the smoke run {_rss_kib(proxy) / 1024:.0f} MiB")


#: Run with the image's Python inside hms-federated: a table on that metastore alone.
CREATE_ON_FEDERATED = """
import sys, thriftpy2.rpc
from hmsproxy.protocol import idl
t = idl.hive
c = thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", 9083, timeout=60000)
cols = [t.FieldSchema(name="id", type="int"), t.FieldSchema(name="name", type="string")]
serde = t.SerDeInfo(serializationLib="org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe", parameters={})
sd = t.StorageDescriptor(cols=cols, inputFormat="org.apache.hadoop.mapred.TextInputFormat",
    outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat", serdeInfo=serde, parameters={})
c.create_table(t.Table(tableName=sys.argv[1], dbName="default", sd=sd, partitionKeys=[], parameters={}, tableType="MANAGED_TABLE"))
c.close()
"""


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

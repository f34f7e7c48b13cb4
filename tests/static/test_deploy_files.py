"""Static checks of the deployment artefacts: Dockerfile, .dockerignore, docker-compose.yml,
deploy/compose/, deploy/kubernetes/ and deploy/grafana/.

No Docker engine or cluster is needed: every file is parsed and checked against the code
it runs -- commands against hmsproxy.cli.build_parser(), configuration files against
hmsproxy.config.load_config(), ports against those configurations, dashboard queries
against the metric names of hmsproxy/features/metrics.py.
"""

from __future__ import annotations

import http.server
import json
import re
import shlex
import shutil
import subprocess
import sys
import threading
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit

import pytest
import yaml

from hmsproxy import cli
from hmsproxy.app import load_config

REPO = Path(__file__).resolve().parents[2]
DOCKERFILE = REPO / "Dockerfile"
DOCKERIGNORE = REPO / ".dockerignore"
COMPOSE = REPO / "docker-compose.yml"
K8S = REPO / "deploy" / "kubernetes"
DASHBOARD = REPO / "deploy" / "grafana" / "hmsproxy-dashboard.json"
METRICS_MODULE = REPO / "hmsproxy" / "features" / "metrics.py"

#: Where the image expects hmsproxy's configuration (the default CMD's --config).
CONFIG_PATH = "/etc/hmsproxy/hmsproxy.yml"
#: The hmsproxy-image services of the compose stack, and the others.
HMSPROXY_SERVICES = {"hms-primary", "hms-federated", "hmsproxy", "spark"}
OTHER_SERVICES = {"postgres"}

#: The metrics the dashboard is built on, as Prometheus exposes them. Used as the known
#: names when hmsproxy/features/metrics.py does not exist; when it does, the names are
#: read from its source instead (see known_metric_names()).
DASHBOARD_METRICS = {
    "hmsproxy_requests_total",  # {method, backend, outcome}
    "hmsproxy_request_duration_seconds",  # histogram {method, backend}
    "hmsproxy_backend_up",  # {backend}
    "hmsproxy_client_connections",
    "hmsproxy_fanout_timeouts_total",  # {backend}
    "hmsproxy_store_errors_total",
}
#: Labels the dashboard may group by: the metrics' own, the histogram's, Prometheus' target labels.
KNOWN_LABELS = {"method", "backend", "outcome", "error", "le", "instance", "job", "pod", "namespace"}


# ------------------------------------------------------------------------------------
# helpers


def parse_cli(argv: list[str]):
    """argv parsed by hmsproxy's own parser; a test failure (not SystemExit) if it is not a command."""
    try:
        return cli.build_parser().parse_args(argv)
    except SystemExit as e:  # argparse has printed the reason to stderr
        pytest.fail(f"not a valid hmsproxy command: hmsproxy {shlex.join(argv)} (argparse exit {e.code})")


def interpolate(value: str) -> str:
    """docker compose's ${NAME:-default} / ${NAME-default} / ${NAME} with nothing set in the environment."""

    def repl(m: re.Match) -> str:
        return m.group("default") or ""

    return re.sub(r"\$\{(?P<name>\w+)(?::?-(?P<default>[^}]*))?\}", repl, value)


def dockerfile_instructions() -> list[tuple[str, str, int]]:
    """(INSTRUCTION, arguments, line number) with continuation lines joined and comments dropped."""
    result = []
    pending, start = "", 0
    for n, raw in enumerate(DOCKERFILE.read_text().splitlines(), 1):
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if pending and line.startswith("#"):
            continue  # comment lines inside a continued instruction
        if not pending:
            start = n
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        full = (pending + line).strip()
        pending = ""
        instr, _, args = full.partition(" ")
        result.append((instr.upper(), args.strip(), start))
    assert not pending, "Dockerfile ends inside a continued line"
    return result


def instructions(name: str) -> list[str]:
    return [args for instr, args, _ in dockerfile_instructions() if instr == name]


def final_stage() -> list[tuple[str, str, int]]:
    all_ = dockerfile_instructions()
    last_from = max(i for i, (instr, _, _) in enumerate(all_) if instr == "FROM")
    return all_[last_from:]


def json_form(instr: str, args: str) -> list[str]:
    try:
        value = json.loads(args)
    except json.JSONDecodeError:
        pytest.fail(f"{instr} must use the JSON (exec) form, got: {args}")
    assert isinstance(value, list) and all(isinstance(v, str) for v in value), f"{instr} {args}"
    return value


def split_flags(args: str) -> tuple[dict[str, str], str]:
    """Leading --flag=value options of COPY/HEALTHCHECK and the rest."""
    flags = {}
    while args.startswith("--"):
        word, _, args = args.partition(" ")
        key, _, value = word[2:].partition("=")
        flags[key] = value
        args = args.strip()
    return flags, args


def dockerignore_patterns() -> list[str]:
    lines = [line.strip() for line in DOCKERIGNORE.read_text().splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def dockerignored(path: str, patterns: list[str]) -> bool:
    """Whether .dockerignore excludes `path` (Go filepath.Match semantics, plus **, and
    a pattern excluding a directory excludes all below it; `!` re-includes)."""

    def matches(pattern: str, candidate: str) -> bool:
        regex = re.escape(pattern.strip("/")).replace(r"\*\*/", "(.*/)?").replace(r"\*\*", ".*")
        regex = regex.replace(r"\*", "[^/]*").replace(r"\?", "[^/]")
        return re.fullmatch(regex, candidate) is not None

    parts = PurePosixPath(path).parts
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    excluded = False
    for pattern in patterns:
        negate = pattern.startswith("!")
        pat = pattern[1:] if negate else pattern
        if any(matches(pat, p) for p in prefixes):
            excluded = not negate
    return excluded


def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def service(name: str) -> dict:
    return compose()["services"][name]


def volume_mounts(svc: dict) -> list[tuple[str, str, str]]:
    """(source, target, mode) of a service's short-syntax volumes."""
    result = []
    for entry in svc.get("volumes", []):
        assert isinstance(entry, str), f"use the short volume syntax: {entry!r}"
        parts = interpolate(entry).split(":")
        assert len(parts) in (2, 3), f"volume {entry!r} must be SOURCE:TARGET[:MODE]"
        result.append((parts[0], parts[1], parts[2] if len(parts) == 3 else "rw"))
    return result


def host_file_for(svc: dict, container_path: str) -> Path:
    """The repository file bind-mounted at `container_path` in `svc`."""
    for source, target, _ in volume_mounts(svc):
        if target == container_path and source.startswith((".", "/")):
            return (REPO / source).resolve()
    pytest.fail(f"nothing is bind-mounted at {container_path}")


def compose_config():
    hmsproxy_svc = service("hmsproxy")
    args = parse_cli(hmsproxy_svc["command"])
    return load_config(host_file_for(hmsproxy_svc, args.config))


def python_c_snippets(test: list[str]) -> list[str]:
    """The code of every `python -c CODE` in an exec-form command."""
    return [test[i + 1] for i, word in enumerate(test[:-1]) if word == "-c" and "python" in " ".join(test[:i])]


def k8s_documents() -> dict[str, list[dict]]:
    docs = {}
    for path in sorted(K8S.glob("*.yaml")):
        docs[path.name] = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
    return docs


def k8s_object(kind: str, name: str | None = None) -> dict:
    found = [
        d for docs in k8s_documents().values() for d in docs if d.get("kind") == kind and (name is None or d["metadata"]["name"] == name)
    ]
    assert len(found) == 1, f"expected one {kind} {name or ''} in deploy/kubernetes, found {len(found)}"
    return found[0]


def k8s_config(tmp_path: Path):
    cm = k8s_object("ConfigMap", "hmsproxy-config")
    path = tmp_path / "hmsproxy.yml"
    path.write_text(cm["data"]["hmsproxy.yml"])
    return load_config(path)


def proxy_container() -> dict:
    containers = k8s_object("Deployment", "hmsproxy")["spec"]["template"]["spec"]["containers"]
    return next(c for c in containers if c["name"] == "hmsproxy")


def image_tag(image: str) -> str | None:
    if "@sha256:" in image:
        return image.split("@", 1)[1]
    last = image.rsplit("/", 1)[-1]
    return last.split(":", 1)[1] if ":" in last else None


# ------------------------------------------------------------------------------------
# Dockerfile and .dockerignore


def test_dockerfile_base_is_a_build_arg_defaulting_to_pinned_python_slim():
    args = dict(a.partition("=")[::2] for a in instructions("ARG"))
    default = args.get("BASE_IMAGE")
    assert default, "ARG BASE_IMAGE=... names the default base before the first FROM"
    tag = image_tag(default)
    assert tag and tag != "latest", f"BASE_IMAGE={default}: pin a version tag (or digest), never latest"
    assert re.match(r"python:3\.11\.\d+-slim", default), f"BASE_IMAGE={default}: expected a pinned python:3.11.x-slim default"
    stages = set()
    for args_ in instructions("FROM"):
        flags, rest = split_flags(args_)
        words = rest.split()
        assert words[0] in stages or words[0] == "${BASE_IMAGE}", f"FROM {words[0]}: every stage starts from BASE_IMAGE"
        if len(words) == 3 and words[1].upper() == "AS":
            stages.add(words[2])
    assert not re.search(r":latest\b", DOCKERFILE.read_text()), "no `latest` tags anywhere"


def test_dockerfile_installs_java_17_runtime_and_the_package():
    runs = " ".join(instructions("RUN"))
    assert "openjdk-17-jre-headless" in runs, "the metastore (dev hms) and PySpark need Java 17"
    assert "--no-install-recommends" in runs and "rm -rf /var/lib/apt/lists/*" in runs
    assert re.search(r"pip wheel (\S+ )*\.(\s|$)", runs), "the package's wheel is built from the context with `pip wheel .`"
    # The Java runtime is in the final stage, where the commands run.
    final_runs = " ".join(args for instr, args, _ in final_stage() if instr == "RUN")
    assert "openjdk-17-jre-headless" in final_runs
    # The final stage installs the dependencies into the venv, then copies in the package: the
    # wheel installed into that venv's paths under the root /pkg, the image's last step.
    assert re.search(r"python3 -m venv /opt/hmsproxy/venv\b.*pip install (\S+ )*-r ", final_runs), "the dependencies"
    assert re.search(r"pip install (\S+ )*--root /pkg (\S+ )*/tmp/wheels/hmsproxy-\*\.whl", runs), "the wheel is installed"
    instr, args, _ = final_stage()[-1]
    assert (instr, split_flags(args)) == ("COPY", ({"from": "package"}, "/pkg/opt/hmsproxy/venv/ /opt/hmsproxy/venv/"))


def test_pyspark_is_the_spark_extra_which_the_full_image_and_make_install():
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert not [d for d in project["dependencies"] if d.startswith("pyspark")], "the proxy alone needs no pyspark"
    assert [d for d in project["optional-dependencies"]["spark"] if d.startswith("pyspark")]
    args = dict(a.partition("=")[::2] for a in instructions("ARG"))
    assert args["EXTRAS"] == "spark", "the image is the full one unless EXTRAS says otherwise"
    assert re.search(r"pip install .*\.\[[^]]*spark", (REPO / "Makefile").read_text()), "make's venv (dev, jobs, tests) has Spark"


def test_dockerfile_run_commands_are_valid_shell():
    sh = shutil.which("sh")
    if sh is None:
        pytest.skip("no sh to check the RUN commands' syntax")
    for args in instructions("RUN"):
        if args.startswith("["):
            json_form("RUN", args)
            continue
        done = subprocess.run([sh, "-n", "-c", args], capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, f"RUN {args}: {done.stderr}"
        assert "apt-get install" not in args or " -y " in args, "apt-get install needs -y (no tty in builds)"


def test_dockerfile_copy_sources_exist_and_are_not_dockerignored():
    patterns = dockerignore_patterns()
    copied = []
    for args in instructions("COPY") + instructions("ADD"):
        flags, rest = split_flags(args)
        if "from" in flags:
            continue  # from another stage
        words = json.loads(rest) if rest.startswith("[") else rest.split()
        sources = words[:-1]
        assert sources, f"COPY {args}: needs a source and a destination"
        for src in sources:
            path = REPO / src
            assert path.exists(), f"COPY source {src} does not exist in the repository"
            assert not dockerignored(src, patterns), f"COPY source {src} is excluded by .dockerignore"
            copied.append(src.rstrip("/"))
    # pyproject.toml names README.md as the readme: `pip install .` needs it in the context.
    assert {"pyproject.toml", "README.md", "hmsproxy"} <= set(copied)
    # The IDL files are package data: they must reach the build.
    assert not dockerignored("hmsproxy/protocol/thrift/hive_metastore.thrift", patterns)


def test_dockerignore_keeps_local_state_out():
    patterns = dockerignore_patterns()
    for path in (
        ".venv/bin/python",
        ".state/dev/metastore_db",
        ".pytest_cache/v",
        "hmsproxy/__pycache__/x.pyc",
        "tests/unit/test_config.py",
        ".git/HEAD",
        "hmsproxy.egg-info/PKG-INFO",
        ".venv-spark-4.3.0/bin/python",  # `make test`'s second venv: over 1 GB, tarred for every build
        "deploy/local/images.sh",
    ):
        assert dockerignored(path, patterns), f"{path} should be excluded from the build context"
    for path in ("pyproject.toml", "README.md", "hmsproxy/cli.py", "config/hmsproxy.example.yml"):
        assert not dockerignored(path, patterns), f"{path} is needed in the build context"


def test_the_build_context_docker_py_sends_is_only_what_the_dockerfile_copies(tmp_path):
    """docker-py's own reading of .dockerignore (what the container tests' builds send): the
    COPY sources and nothing else, whatever else a checkout holds."""
    from docker.utils.build import exclude_paths

    kept = ["pyproject.toml", "setup.py", "README.md", "config/hmsproxy.example.yml", "hmsproxy/cli.py", "hmsproxy/protocol/_gate.c"]
    left_out = [".venv-spark-4.3.0/lib/big.so", ".venv/bin/python", "hmsproxy/protocol/_thriftwalk.so", "hmsproxy/__pycache__/cli.pyc"]
    left_out += ["config/other.yml", "tests/unit/test_x.py", "notes.txt", ".state/dev/ports.json", ".git/HEAD"]
    for name in kept + left_out:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    shutil.copy(DOCKERFILE, tmp_path / "Dockerfile")
    shutil.copy(DOCKERIGNORE, tmp_path / ".dockerignore")
    sent = {p for p in exclude_paths(str(tmp_path), dockerignore_patterns(), dockerfile="Dockerfile") if (tmp_path / p).is_file()}
    assert sent == set(kept) | {"Dockerfile", ".dockerignore"}


def test_dockerignore_matcher():
    assert dockerignored("a/b/__pycache__/c.pyc", ["**/__pycache__"])
    assert dockerignored("x.pyc", ["**/*.pyc"]) and dockerignored("a/x.pyc", ["**/*.pyc"])
    assert not dockerignored("docs2/x", ["docs"])
    assert not dockerignored("tests/keep", ["tests", "!tests/keep"])


def test_dockerfile_runs_as_non_root_user():
    stage = final_stage()
    names = [instr for instr, _, _ in stage]
    assert "USER" in names and "ENTRYPOINT" in names
    # The last USER is the one the ENTRYPOINT runs as, wherever it stands.
    user_at = max(i for i, n in enumerate(names) if n == "USER")
    assert "RUN" not in names[user_at:], "nothing runs as root after USER"
    user = stage[user_at][1].split(":")[0]
    assert user not in ("root", "0"), "the image must not run as root"
    assert user.isdigit(), "use a numeric uid so Kubernetes' runAsNonRoot can verify it"
    # No later stage instruction switches back.
    assert all(args.split(":")[0] not in ("root", "0") for instr, args, _ in stage if instr == "USER")
    # The Deployment runs as the same uid.
    pod = k8s_object("Deployment", "hmsproxy")["spec"]["template"]["spec"]
    assert str(pod["securityContext"]["runAsUser"]) == user


def test_dockerfile_entrypoint_and_cmd_are_exec_form_hmsproxy_commands():
    (entrypoint,) = [json_form("ENTRYPOINT", a) for i, a, _ in final_stage() if i == "ENTRYPOINT"]
    (cmd,) = [json_form("CMD", a) for i, a, _ in final_stage() if i == "CMD"]
    assert entrypoint == ["hmsproxy"]
    args = parse_cli(cmd)
    assert args.func is cli.cmd_serve and args.config == CONFIG_PATH
    # The console script the ENTRYPOINT names exists.
    assert 'hmsproxy = "hmsproxy.cli:main"' in (REPO / "pyproject.toml").read_text()


def test_dockerfile_exposes_thrift_and_ops_ports():
    exposed = {int(p.split("/")[0]) for args in instructions("EXPOSE") for p in args.split()}
    assert exposed == {9083, 9100}
    compose_cfg = compose_config()
    assert {compose_cfg.server.port, compose_cfg.http.port} == exposed


class _Health(http.server.BaseHTTPRequestHandler):
    status = 200

    def do_GET(self):  # noqa: N802
        code = self.status if self.path == "/healthz" else 404
        self.send_response(code)
        self.end_headers()
        self.wfile.write(b"ok\n" if code == 200 else b"no\n")

    def log_message(self, *args):
        pass


@pytest.mark.parametrize("status, healthy", [(200, True), (503, False)])
def test_dockerfile_healthcheck_probes_healthz(status, healthy):
    (args,) = instructions("HEALTHCHECK")
    flags, rest = split_flags(args)
    assert {"interval", "timeout", "start-period", "retries"} <= set(flags)
    assert rest.startswith("CMD ")
    command = json_form("HEALTHCHECK CMD", rest[4:])
    assert command[:2] == ["python", "-c"], "no curl in the image: the check uses Python"
    (code,) = python_c_snippets(command)
    m = re.search(r"http://127\.0\.0\.1:(\d+)/healthz", code)
    assert m and int(m.group(1)) == 9100, "the healthcheck must hit /healthz on the ops port"

    # Run the check for real against a local HTTP server standing in for the ops port.
    handler = type("H", (_Health,), {"status": status})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        local = code.replace("127.0.0.1:9100", f"127.0.0.1:{server.server_address[1]}")
        done = subprocess.run([sys.executable, "-c", local], capture_output=True, timeout=30)
    finally:
        server.shutdown()
        server.server_close()
    assert (done.returncode == 0) is healthy, done.stderr.decode()


# ------------------------------------------------------------------------------------
# docker-compose.yml and deploy/compose/


def test_compose_has_the_dev_stack_services():
    data = compose()
    assert set(data["services"]) == HMSPROXY_SERVICES | OTHER_SERVICES
    for name in HMSPROXY_SERVICES:
        svc = data["services"][name]
        # The proxy runs the proxy-only image (no spark extra), the metastores and Spark the full one.
        proxy_only = name == "hmsproxy"
        assert interpolate(svc["image"]) == ("hmsproxy:proxy" if proxy_only else "hmsproxy:dev")
        assert svc["build"]["context"] == "." and (REPO / svc["build"]["dockerfile"]).resolve() == DOCKERFILE
        assert svc["build"].get("args", {}).get("EXTRAS", "spark") == ("" if proxy_only else "spark")


#: The Compose-spec keys this stack uses; anything else is most likely a typo (docker compose
#: would reject it, but no compose plugin is needed to run these tests).
COMPOSE_TOP_KEYS = {"name", "services", "volumes", "networks"}
COMPOSE_SERVICE_KEYS = {
    "image",
    "build",
    "init",
    "restart",
    "command",
    "entrypoint",
    "environment",
    "volumes",
    "ports",
    "depends_on",
    "healthcheck",
    "profiles",
}
COMPOSE_HEALTHCHECK_KEYS = {"test", "interval", "timeout", "retries", "start_period", "start_interval", "disable"}
COMPOSE_DURATION = re.compile(r"^(\d+(us|ms|s|m|h))+$")


def test_compose_uses_only_known_keys():
    data = compose()
    assert {k for k in data if not k.startswith("x-")} <= COMPOSE_TOP_KEYS
    for name, svc in data["services"].items():
        assert set(svc) <= COMPOSE_SERVICE_KEYS, f"{name}: unknown keys {set(svc) - COMPOSE_SERVICE_KEYS}"
        check = svc.get("healthcheck", {})
        assert set(check) <= COMPOSE_HEALTHCHECK_KEYS, f"{name}: unknown healthcheck keys"
        for key in ("interval", "timeout", "start_period"):
            if key in check:
                assert COMPOSE_DURATION.match(check[key]), f"{name}: healthcheck.{key} {check[key]!r}"
        assert isinstance(svc.get("command", []), list), f"{name}: use the exec (list) form for command"
        assert isinstance(svc.get("entrypoint", []), list), f"{name}: use the exec (list) form for entrypoint"
        for key, value in (svc.get("environment") or {}).items():
            assert isinstance(value, str), f"{name}: environment {key} must be a string"
        assert svc.get("restart", "no") in ("no", "always", "on-failure", "unless-stopped")
        for port in svc.get("ports", []):
            assert re.fullmatch(r"\d+:\d+", interpolate(port)), f"{name}: port {port!r} (quote HOST:CONTAINER)"


def test_compose_images_are_tagged_not_latest():
    for name, svc in compose()["services"].items():
        image = interpolate(svc["image"])
        tag = image_tag(image)
        assert tag and tag != "latest", f"{name}: image {image} needs an explicit tag"
    postgres = service("postgres")["image"]
    assert re.fullmatch(r"\$\{POSTGRES_IMAGE:-[^}]+\}", postgres), "the PostgreSQL image is a variable"
    assert image_tag(interpolate(postgres)).split("-")[0] == "15"


def test_compose_metastores_run_dev_hms_with_state_on_a_volume():
    primary_cfg = compose_config()
    by_host = {}
    for ms in primary_cfg.metastores:
        for uri in ms.uris:
            parts = urlsplit(uri)
            by_host[parts.hostname] = (ms, parts.port)
    for name in ("hms-primary", "hms-federated"):
        svc = service(name)
        assert "entrypoint" not in svc, "the image's ENTRYPOINT (hmsproxy) runs the command"
        args = parse_cli(svc["command"])
        assert args.func is cli.cmd_dev_hms
        targets = {target for _, target, _ in volume_mounts(svc)}
        assert args.state_dir in targets, f"{name}: --state-dir {args.state_dir} must be a volume"
        # The proxy's config names this service at the port it listens on.
        assert name in by_host, f"deploy/compose/hmsproxy.yml does not name {name}"
        assert by_host[name][1] == args.port
    assert by_host["hms-primary"][0].primary
    assert not by_host["hms-federated"][0].primary


def test_compose_proxy_serves_the_mounted_config():
    svc = service("hmsproxy")
    assert "entrypoint" not in svc
    args = parse_cli(svc["command"])
    assert args.func is cli.cmd_serve
    assert args.config == CONFIG_PATH
    source = host_file_for(svc, args.config)
    assert source == REPO / "deploy" / "compose" / "hmsproxy.yml"
    config = load_config(source)  # what `hmsproxy check-config --config ...` runs
    assert config.server.host == "0.0.0.0", "published ports need the proxy on all interfaces"
    assert config.http.host == "0.0.0.0" and config.http.port
    published = {int(interpolate(p).split(":")[-1]) for p in svc["ports"]}
    assert published == {config.server.port, config.http.port}


def test_compose_check_config_command_accepts_the_mounted_config():
    source = REPO / "deploy" / "compose" / "hmsproxy.yml"
    done = subprocess.run(
        [sys.executable, "-m", "hmsproxy.cli", "check-config", "--config", str(source)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "[primary] primary" in done.stdout and "thrift://hms-federated:9083" in done.stdout


def test_compose_store_is_the_postgres_service():
    config = compose_config()
    url = urlsplit(config.store.url)
    assert url.scheme.startswith("postgresql")
    assert url.password is None, "the password comes from PGPASSWORD, not the config file"
    pg = service("postgres")
    env = pg["environment"]
    assert url.hostname == "postgres" and (url.port or 5432) == 5432
    assert url.username == env["POSTGRES_USER"] and url.path.lstrip("/") == env["POSTGRES_DB"]
    assert service("hmsproxy")["environment"]["PGPASSWORD"] == env["POSTGRES_PASSWORD"]
    assert pg["healthcheck"]["test"][:2] == ["CMD", "pg_isready"]


def test_compose_volumes_exist():
    data = compose()
    declared = set(data.get("volumes") or {})
    used = set()
    for name, svc in data["services"].items():
        for source, target, mode in volume_mounts(svc):
            assert target.startswith("/"), f"{name}: volume target {target} must be absolute"
            assert mode in ("ro", "rw"), f"{name}: volume mode {mode}"
            if source.startswith((".", "/")):
                assert (REPO / source).exists(), f"{name}: bind-mount source {source} does not exist"
                assert mode == "ro", f"{name}: repository files are mounted read-only"
            else:
                assert source in declared, f"{name}: named volume {source} is not declared"
                used.add(source)
    assert declared == used, f"declared but unused volumes: {declared - used}"


def test_compose_healthchecks_and_dependencies():
    data = compose()
    services = data["services"]
    for name, svc in services.items():
        check = svc.get("healthcheck")
        assert check is not None, f"{name}: every service states its healthcheck (or disables it)"
        if check.get("disable"):
            assert name == "spark", "only the one-shot client runs without a healthcheck"
            continue
        if name == "hmsproxy":
            assert "test" not in check, "the proxy runs the image's HEALTHCHECK (compose sets its timings)"
            continue
        test = check["test"]
        assert isinstance(test, list) and test[0] in ("CMD", "CMD-SHELL"), f"{name}: healthcheck.test"
        assert {"interval", "timeout", "retries"} <= set(check), name
        for code in python_c_snippets(test):
            compile(code, f"{name} healthcheck", "exec")
        # Metastore checks talk to the port the command listens on.
        if svc.get("command", [None])[0] == "dev":
            port = parse_cli(svc["command"]).port
            assert f"'127.0.0.1', {port}" in " ".join(test), f"{name}: healthcheck must probe port {port}"
    # hmsproxy's check (the image's) hits /healthz on the configured ops port.
    (image_check,) = instructions("HEALTHCHECK")
    assert f"127.0.0.1:{compose_config().http.port}/healthz" in image_check
    for name, svc in services.items():
        for dep, cond in (svc.get("depends_on") or {}).items():
            assert dep in services, f"{name} depends on unknown service {dep}"
            assert cond == {"condition": "service_healthy"}, f"{name} -> {dep}: wait until it is healthy"
            assert not services[dep]["healthcheck"].get("disable"), f"{dep} needs a healthcheck"
    assert set(services["hmsproxy"]["depends_on"]) == {"hms-primary", "hms-federated", "postgres"}
    assert set(services["spark"]["depends_on"]) == {"hmsproxy"}


def _load_smoke_module():
    import importlib.util

    path = REPO / "deploy" / "compose" / "smoke.py"
    spec = importlib.util.spec_from_file_location("hmsproxy_compose_smoke", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # imports no pyspark at module level
    return module


def test_compose_spark_service_runs_the_smoke_script():
    svc = service("spark")
    entrypoint = svc["entrypoint"]
    assert entrypoint[0] == "python" and len(entrypoint) == 2
    script = host_file_for(svc, entrypoint[1])
    assert script == REPO / "deploy" / "compose" / "smoke.py" and script.is_file()
    compile(script.read_text(), str(script), "exec")
    smoke = _load_smoke_module()
    args = smoke.parse_args(svc["command"])  # the script's own parser accepts the command
    uri = urlsplit(args.uri)
    config = compose_config()
    assert uri.scheme == "thrift" and uri.hostname == "hmsproxy" and uri.port == config.server.port
    # The federated metastore's default database is visible under its prefix.
    fed = config.federated[0]
    assert args.expect_database == [f"{fed.database_prefix}default"]
    # Spark's warehouse is a volume shared, at the same path, with the primary metastore.
    warehouse = urlsplit(args.warehouse).path
    mounts = {target: source for source, target, _ in volume_mounts(svc)}
    primary_mounts = {target: source for source, target, _ in volume_mounts(service("hms-primary"))}
    assert warehouse in mounts and primary_mounts.get(warehouse) == mounts[warehouse]
    # ... which is the metastore's own warehouse directory (<state-dir>/warehouse).
    state_dir = parse_cli(service("hms-primary")["command"]).state_dir
    assert warehouse == f"{state_dir}/warehouse"
    assert svc.get("profiles") == ["smoke"], "the one-shot client stays out of a plain `up`"


def test_compose_file_is_valid_for_docker_compose():
    """`docker compose config` validates against the Compose schema without an engine."""
    docker = shutil.which("docker")
    if docker is None:
        pytest.skip("no docker CLI")
    probe = subprocess.run([docker, "compose", "version"], capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        reason = (probe.stderr or probe.stdout).strip().splitlines()[0]
        pytest.skip(f"no docker compose plugin: {reason}")
    done = subprocess.run(
        [docker, "compose", "-f", str(COMPOSE), "--profile", "smoke", "config", "--quiet"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr


# ------------------------------------------------------------------------------------
# deploy/kubernetes/


def test_k8s_manifests_parse_with_expected_kinds():
    docs = k8s_documents()
    kinds = set()
    for name, items in docs.items():
        assert items, f"{name} is empty"
        for doc in items:
            assert {"apiVersion", "kind"} <= set(doc), name
            if doc["kind"] != "Kustomization":
                assert doc["metadata"]["name"], name
            kinds.add((doc["apiVersion"], doc["kind"]))
    assert kinds == {
        ("kustomize.config.k8s.io/v1beta1", "Kustomization"),
        ("v1", "Namespace"),
        ("v1", "ConfigMap"),
        ("v1", "Secret"),
        ("apps/v1", "Deployment"),
        ("v1", "Service"),
        ("policy/v1", "PodDisruptionBudget"),
    }


K8S_CONTAINER_KEYS = {
    "name",
    "image",
    "imagePullPolicy",
    "command",
    "args",
    "workingDir",
    "ports",
    "env",
    "envFrom",
    "readinessProbe",
    "livenessProbe",
    "startupProbe",
    "resources",
    "securityContext",
    "volumeMounts",
    "lifecycle",
    "terminationMessagePolicy",
}
K8S_PROBE_KEYS = {
    "httpGet",
    "tcpSocket",
    "exec",
    "grpc",
    "initialDelaySeconds",
    "periodSeconds",
    "timeoutSeconds",
    "failureThreshold",
    "successThreshold",
    "terminationGracePeriodSeconds",
}


def test_k8s_container_fields_are_known():
    container = proxy_container()
    assert set(container) <= K8S_CONTAINER_KEYS, f"unknown container fields {set(container) - K8S_CONTAINER_KEYS}"
    for probe in ("readinessProbe", "livenessProbe"):
        assert set(container[probe]) <= K8S_PROBE_KEYS, f"unknown {probe} fields"
        assert all(isinstance(v, int) for k, v in container[probe].items() if k.endswith(("Seconds", "Threshold")))


#: Kubernetes versions whose OpenAPI schemas the manifests must satisfy (the kubectl on the
#: development machines is 1.32; 1.37 is the newest the kubernetes-validate package ships).
K8S_SCHEMA_VERSIONS = ("1.32", "1.37")


def _validate_k8s(doc: dict) -> None:
    import kubernetes_validate

    for version in K8S_SCHEMA_VERSIONS:
        try:
            kubernetes_validate.validate(doc, version, strict=True)  # strict: no unknown fields
        except kubernetes_validate.ValidationError as e:
            pytest.fail(f"{doc['kind']} {doc['metadata']['name']} is not valid Kubernetes {version}: {e.message} at {list(e.path)}")


def test_k8s_manifests_match_the_kubernetes_schemas():
    """Every object against the JSON schemas of the Kubernetes API (kubernetes-validate ships them)."""
    objects = [d for docs in k8s_documents().values() for d in docs if d["kind"] != "Kustomization"]
    assert len(objects) == 6
    for doc in objects:
        _validate_k8s(doc)
    # A mistake the schemas catch and the checks above would not: a misspelt field.
    broken = k8s_object("Deployment", "hmsproxy")
    broken["spec"]["template"]["spec"]["containers"][0]["livenessprobe"] = {}
    with pytest.raises(pytest.fail.Exception, match="livenessprobe"):
        _validate_k8s(broken)


def test_k8s_kustomize_output_matches_the_schemas():
    """What `kubectl apply -k deploy/kubernetes` would send: kustomize's rendering, validated."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("no kubectl to render the kustomization")
    done = subprocess.run([kubectl, "kustomize", str(K8S)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    rendered = [d for d in yaml.safe_load_all(done.stdout) if d]
    kustomization = k8s_object("Kustomization")
    assert {d["kind"] for d in rendered} == {"Namespace", "ConfigMap", "Deployment", "Service", "PodDisruptionBudget"}
    for doc in rendered:
        _validate_k8s(doc)
        if doc["kind"] != "Namespace":
            assert doc["metadata"]["namespace"] == kustomization["namespace"]
    (deployment,) = [d for d in rendered if d["kind"] == "Deployment"]
    (image,) = kustomization["images"]
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == f"{image.get('newName', image['name'])}:{image['newTag']}"


def test_k8s_everything_in_one_namespace():
    namespace = k8s_object("Namespace")["metadata"]["name"]
    assert k8s_object("Kustomization")["namespace"] == namespace
    assert k8s_object("Secret")["metadata"]["namespace"] == namespace


def test_k8s_kustomization_lists_existing_resources():
    kustomization = k8s_object("Kustomization")
    resources = kustomization["resources"]
    for resource in resources:
        assert (K8S / resource).is_file(), f"kustomization resource {resource} does not exist"
    listed = set(resources) | {"kustomization.yaml", "secret.example.yaml"}
    assert {p.name for p in K8S.glob("*.yaml")} == listed
    assert "secret.example.yaml" not in resources, "the example Secret must not be applied"
    (image,) = kustomization["images"]
    assert proxy_container()["image"].split(":")[0] == image["name"]
    assert image["newTag"] != "latest" and image_tag(proxy_container()["image"]) != "latest"


def test_k8s_configmap_config_passes_load_config(tmp_path):
    config = k8s_config(tmp_path)
    assert config.server.host == "0.0.0.0" and config.http.host == "0.0.0.0"
    assert config.http.port, "probes and Prometheus need the ops port"
    url = urlsplit(config.store.url)
    assert url.scheme.startswith("postgresql") and url.password is None, "the password comes from the Secret"


def test_k8s_deployment(tmp_path):
    config = k8s_config(tmp_path)
    deployment = k8s_object("Deployment", "hmsproxy")
    spec = deployment["spec"]
    pod = spec["template"]["spec"]
    assert spec["replicas"] == 3
    labels = spec["template"]["metadata"]["labels"]
    assert spec["selector"]["matchLabels"].items() <= labels.items()

    container = proxy_container()
    assert "command" not in container, "the image's ENTRYPOINT (hmsproxy) runs the args"
    args = parse_cli(container["args"])
    assert args.func is cli.cmd_serve and args.config == CONFIG_PATH

    # The config file is the ConfigMap's hmsproxy.yml.
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    directory, filename = CONFIG_PATH.rsplit("/", 1)
    assert mounts[directory].get("readOnly") is True
    volume = next(v for v in pod["volumes"] if v["name"] == mounts[directory]["name"])
    assert volume["configMap"]["name"] == "hmsproxy-config"
    assert {"key": "hmsproxy.yml", "path": filename} in volume["configMap"]["items"]

    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"thrift": config.server.port, "ops": config.http.port}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "ops"}
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "ops"}

    resources = container["resources"]
    assert {"cpu", "memory"} <= set(resources["requests"]) and "memory" in resources["limits"]

    pod_sc, sc = pod["securityContext"], container["securityContext"]
    assert pod_sc["runAsNonRoot"] is True and pod_sc["runAsUser"] != 0
    assert pod_sc["seccompProfile"] == {"type": "RuntimeDefault"}
    assert sc["allowPrivilegeEscalation"] is False and sc["capabilities"]["drop"] == ["ALL"]
    if sc.get("readOnlyRootFilesystem"):
        assert "/tmp" in mounts, "a read-only root needs a writable /tmp"
        # `serve` writes files relative to its working directory (.state/hmsproxy.pid).
        workdir = container.get("workingDir", "")
        writable = [m for m in mounts.values() if not m.get("readOnly")]
        assert any(workdir == m["mountPath"] or workdir.startswith(m["mountPath"] + "/") for m in writable), (
            "with a read-only root filesystem the working directory must be a writable volume"
        )

    # The store password comes from the (example) Secret, under the name libpq reads.
    env = {e["name"]: e for e in container["env"]}
    ref = env["PGPASSWORD"]["valueFrom"]["secretKeyRef"]
    secret = k8s_object("Secret", ref["name"])
    assert ref["key"] in secret["stringData"]

    annotations = spec["template"]["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert int(annotations["prometheus.io/port"]) == config.http.port
    assert annotations["prometheus.io/path"] == "/metrics"


def test_k8s_service(tmp_path):
    config = k8s_config(tmp_path)
    svc = k8s_object("Service", "hmsproxy")
    pod_labels = k8s_object("Deployment", "hmsproxy")["spec"]["template"]["metadata"]["labels"]
    assert svc["spec"]["selector"].items() <= pod_labels.items()
    container_ports = {p["name"]: p["containerPort"] for p in proxy_container()["ports"]}
    ports = {p["name"]: p for p in svc["spec"]["ports"]}
    assert set(ports) == {"thrift", "ops"}
    for name, port in ports.items():
        assert port["targetPort"] in container_ports, f"Service port {name} targets an unknown container port"
    assert ports["thrift"]["port"] == 9083 and container_ports[ports["thrift"]["targetPort"]] == config.server.port
    assert container_ports[ports["ops"]["targetPort"]] == config.http.port
    annotations = svc["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert int(annotations["prometheus.io/port"]) == ports["ops"]["port"]
    assert annotations["prometheus.io/path"] == "/metrics"


def test_k8s_disruption_budget_keeps_a_majority():
    pdb = k8s_object("PodDisruptionBudget", "hmsproxy")
    pod_labels = k8s_object("Deployment", "hmsproxy")["spec"]["template"]["metadata"]["labels"]
    assert pdb["spec"]["selector"]["matchLabels"].items() <= pod_labels.items()
    assert 0 < pdb["spec"]["minAvailable"] < k8s_object("Deployment", "hmsproxy")["spec"]["replicas"]


# ------------------------------------------------------------------------------------
# deploy/grafana/


PROMQL_FUNCTIONS = {
    "abs",
    "absent",
    "avg",
    "avg_over_time",
    "bottomk",
    "ceil",
    "changes",
    "clamp",
    "clamp_max",
    "clamp_min",
    "count",
    "count_over_time",
    "delta",
    "deriv",
    "exp",
    "floor",
    "group",
    "histogram_quantile",
    "idelta",
    "increase",
    "irate",
    "label_replace",
    "label_values",
    "ln",
    "max",
    "max_over_time",
    "min",
    "min_over_time",
    "quantile",
    "rate",
    "resets",
    "round",
    "scalar",
    "sort",
    "sort_desc",
    "stddev",
    "sum",
    "sum_over_time",
    "time",
    "topk",
    "vector",
}
PROMQL_KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless", "offset", "inf", "nan"}
METRIC_CONSTRUCTORS = {
    "Counter": "counter",
    "CounterMetricFamily": "counter",
    "Gauge": "gauge",
    "GaugeMetricFamily": "gauge",
    "InfoMetricFamily": "info",
    "Histogram": "histogram",
    "HistogramMetricFamily": "histogram",
    "Summary": "summary",
    "SummaryMetricFamily": "summary",
}


def exposed_names(name: str, kind: str) -> set[str]:
    """The series names Prometheus' client exposes for one metric family."""
    if kind == "counter":
        base = name[: -len("_total")] if name.endswith("_total") else name
        return {f"{base}_total", f"{base}_created"}
    if kind in ("histogram", "summary"):
        extra = ("_bucket",) if kind == "histogram" else ()
        return {name} | {f"{name}{s}" for s in ("_sum", "_count", "_created", *extra)}
    if kind == "info":
        return {f"{name}_info"} if not name.endswith("_info") else {name}
    return {name}


def known_metric_names() -> tuple[set[str], str]:
    """Series names the dashboard may use, and where they came from.

    From hmsproxy/features/metrics.py when it exists (every `Counter("hmsproxy_...")`,
    `GaugeMetricFamily("hmsproxy_...")`, ... in its source); else DASHBOARD_METRICS.
    """
    if not METRICS_MODULE.exists():
        names = set()
        for name in DASHBOARD_METRICS:
            if name == "hmsproxy_request_duration_seconds":
                names |= exposed_names(name, "histogram")
            else:
                names.add(name)
        return names, "the list in this test"
    source = METRICS_MODULE.read_text()
    pattern = r"\b(" + "|".join(METRIC_CONSTRUCTORS) + r")\(\s*[\"'](hmsproxy_\w+)[\"']"
    found = re.findall(pattern, source)
    assert found, (
        f"{METRICS_MODULE.relative_to(REPO)} exists but no hmsproxy_* metric constructors were found "
        "in it; update known_metric_names() in this test to read them"
    )
    names = set()
    for ctor, name in found:
        names |= exposed_names(name, METRIC_CONSTRUCTORS[ctor])
    return names, str(METRICS_MODULE.relative_to(REPO))


def dashboard_queries(dashboard: dict) -> list[tuple[str, str]]:
    """(where, PromQL) for every panel target and query variable."""
    queries = []

    def walk(panels):
        for panel in panels:
            for target in panel.get("targets", []):
                if target.get("expr"):
                    queries.append((f"panel {panel['title']!r}", target["expr"]))
            walk(panel.get("panels", []))

    walk(dashboard["panels"])
    for var in dashboard.get("templating", {}).get("list", []):
        if var.get("type") == "query":
            query = var["query"]["query"] if isinstance(var["query"], dict) else var["query"]
            queries.append((f"variable ${var['name']}", query))
    return queries


def promql_names(expr: str) -> tuple[set[str], set[str], set[str]]:
    """(metric names, functions, grouping labels) used by a PromQL expression.

    A small lexer, enough for dashboards: strings, label matchers, range selectors and
    Grafana variables are dropped; identifiers followed by `(` are functions; identifiers
    inside by/without/on/ignoring(...) are labels; other identifiers are metric names.
    """
    assert expr.count("(") == expr.count(")"), f"unbalanced parentheses: {expr}"
    assert expr.count("{") == expr.count("}"), f"unbalanced braces: {expr}"
    assert expr.count("[") == expr.count("]"), f"unbalanced brackets: {expr}"
    text = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'', '""', expr)
    labels = set()
    for m in re.finditer(r"\{([^}]*)\}", text):
        for matcher in filter(None, (s.strip() for s in m.group(1).split(","))):
            assert re.fullmatch(r'\w+\s*(=~|!~|!=|=)\s*""', matcher), f"bad label matcher {matcher!r} in {expr}"
            labels.add(re.match(r"\w+", matcher).group(0))
    text = re.sub(r"\{[^}]*\}", " ", text)
    text = re.sub(r"\[[^\]]*\]", " ", text)
    text = re.sub(r"\$\{[^}]*\}|\$\w+", " ", text)
    grouping = set()
    for m in re.finditer(r"\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)", text):
        grouping |= {g.strip() for g in m.group(2).split(",") if g.strip()}
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", text)
    functions = set(re.findall(r"\b([A-Za-z_]\w*)\s*\(", text))
    text = re.sub(r"\b[A-Za-z_]\w*\s*\(", " (", text)
    if "label_values" in functions:  # label_values(metric, label): the label is no metric
        text = re.sub(r",\s*\w+\s*\)", ")", text)
    words = set(re.findall(r"\b[A-Za-z_:][\w:]*\b", text))
    numbers = {w for w in words if re.fullmatch(r"e\d+", w)}  # 1e-9 leaves "e9"-like tails
    metrics = {w for w in words - numbers if w.lower() not in PROMQL_KEYWORDS}
    return metrics, functions, grouping | labels


def test_promql_lexer():
    metrics, functions, labels = promql_names(
        'histogram_quantile(0.99, sum by (le, backend) (rate(x_bucket{backend=~"$backend"}[$__rate_interval]))) / clamp_min(y, 1e-9)'
    )
    assert metrics == {"x_bucket", "y"}
    assert functions == {"histogram_quantile", "sum", "rate", "clamp_min"}
    assert labels == {"le", "backend"}
    assert promql_names("label_values(hmsproxy_requests_total, backend)")[0] == {"hmsproxy_requests_total"}


def test_dashboard_parses_with_panels():
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard["uid"] and dashboard["title"] and isinstance(dashboard["schemaVersion"], int)
    panels = [p for p in dashboard["panels"] if p["type"] != "row"]
    assert len(panels) >= 6
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids)), "panel ids must be unique"
    for panel in panels:
        assert panel["targets"], f"panel {panel['title']!r} has no query"
        assert {"h", "w", "x", "y"} <= set(panel["gridPos"]) and panel["gridPos"]["x"] + panel["gridPos"]["w"] <= 24
        for target in panel["targets"]:
            assert target["datasource"]["uid"] == "${datasource}", "queries use the dashboard's data source variable"
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource" and variables["datasource"]["query"] == "prometheus"


def test_dashboard_queries_use_only_known_metrics():
    known, origin = known_metric_names()
    dashboard = json.loads(DASHBOARD.read_text())
    queries = dashboard_queries(dashboard)
    assert queries
    used = set()
    for where, expr in queries:
        metrics, functions, labels = promql_names(expr)
        assert metrics, f"{where}: no metric in {expr}"
        unknown = metrics - known
        assert not unknown, f"{where}: {sorted(unknown)} not among the metrics of {origin}: {sorted(known)}"
        assert functions <= PROMQL_FUNCTIONS, f"{where}: unknown functions {functions - PROMQL_FUNCTIONS}"
        assert labels <= KNOWN_LABELS, f"{where}: unknown labels {labels - KNOWN_LABELS}"
        used |= metrics
    # Every metric the dashboard is meant to show has a panel.
    for metric in DASHBOARD_METRICS:
        assert any(u == metric or u.startswith(metric + "_") for u in used), f"no panel shows {metric}"
    # Latency quantiles come from the histogram's buckets.
    exprs = " ".join(e for _, e in queries)
    assert "histogram_quantile(0.5," in exprs and "histogram_quantile(0.99," in exprs
    assert "hmsproxy_request_duration_seconds_bucket" in exprs


def test_deploy_readme_mentions_every_artefact():
    readme = (REPO / "deploy" / "README.md").read_text()
    for name in (
        "docker compose up",
        "docker compose run --rm spark",
        "kubectl apply -k deploy/kubernetes",
        "hmsproxy-dashboard.json",
        "smoke.py",
        "secret",
        "Helm",
    ):
        assert name.lower() in readme.lower(), f"deploy/README.md should mention {name!r}"


def test_kubernetes_grace_period_and_readiness_probe_match_the_drain(tmp_path):
    """SIGTERM's drain (ops/drain.py) must end before the kubelet's SIGKILL, and the readiness probe
    must see /readyz fail within the drain's notice, before the listener closes."""
    server = k8s_config(tmp_path).server
    pod = k8s_object("Deployment", "hmsproxy")["spec"]["template"]["spec"]
    probe = proxy_container()["readinessProbe"]
    from hmsproxy.ops.drain import CLOSE_GRACE_S

    exit_bound_s = server.drain_notice_s + server.drain_timeout_s + CLOSE_GRACE_S + 0.5
    assert pod["terminationGracePeriodSeconds"] > exit_bound_s
    assert probe["periodSeconds"] * probe["failureThreshold"] < server.drain_notice_s


def test_haproxy_config_is_valid_and_checks_readyz():
    text = (REPO / "deploy" / "haproxy" / "haproxy.cfg").read_text()
    assert "mode tcp" in text and "option httpchk GET /readyz" in text
    assert "shutdown-sessions" not in text, "a replica marked down must keep its open calls: its drain ends them"
    binary = shutil.which("haproxy")
    if binary is None:
        pytest.skip("no haproxy binary to check the file with (Debian's haproxy package)")
    env = {"HMSPROXY_LB_BIND": "127.0.0.1:9083", "PATH": "/usr/bin:/bin"}
    for i in (1, 2, 3):
        env |= {f"HMSPROXY_{i}": f"127.0.0.1:{9083 + i}", f"HMSPROXY_{i}_OPS": str(9100 + i)}
    checked = subprocess.run(
        [binary, "-c", "-f", str(REPO / "deploy" / "haproxy" / "haproxy.cfg")], env=env, capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr

"""The command line as an operator uses it: Waggle Dance's files, check-config, and `dev up`."""

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import thriftpy2.rpc

from hmsproxy.dev.ports import free_port
from hmsproxy.protocol import idl
from tests.support.federation import ANSWER_DEADLINE_MS

HMSPROXY = [sys.executable, "-m", "hmsproxy.cli"]


def wait_for_line(proc, needle, timeout_s):
    """Read the process's output until a line contains `needle`; returns all lines read."""
    deadline = time.monotonic() + timeout_s
    lines = []
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            if proc.poll() is not None:
                break
            continue
        lines.append(line)
        if needle in line:
            return lines
    raise AssertionError(f"{needle!r} not printed within {timeout_s}s; output:\n{''.join(lines)}")


def start_dev_hms(*args: str) -> subprocess.Popen:
    """`hmsproxy dev hms ARGS` in its own process group, output on stdout (read it with wait_for_line)."""
    return subprocess.Popen(
        [*HMSPROXY, "dev", "hms", *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )


def own_pid_file(beside: Path) -> list[str]:
    """`--pid-file` beside a test's own file: the default, .state/hmsproxy.pid in the repository, names
    a developer's `make up` or the README tours' proxy while they run, and then serve refuses to start."""
    return ["--pid-file", str(beside.with_suffix(".pid"))]


def stop(proc, sig=signal.SIGTERM, timeout_s=60):
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode


@pytest.fixture
def waggle_dance_files(tmp_path, metastores, federated_dbs):
    port = free_port()
    server = tmp_path / "waggle-dance-server.yml"
    server.write_text(f"port: {port}\ndatabase-resolution: PREFIXED\nverbose: true\n")
    federation = tmp_path / "waggle-dance-federation.yml"
    federation.write_text(
        "primary-meta-store:\n"
        "  name: primary\n"
        f"  remote-meta-store-uris: {metastores[0].uri}\n"
        "  access-control-type: READ_AND_WRITE_AND_CREATE\n"
        f"  latency: {ANSWER_DEADLINE_MS}\n"  # Waggle Dance's key: a busy machine's slow answer still counts
        "federated-meta-stores:\n"
        "- name: waggle\n"
        f"  remote-meta-store-uris: {metastores[1].uri}\n"
        f"  latency: {ANSWER_DEADLINE_MS}\n"
        "  mapped-databases:\n"
        "  - sales\n"
    )
    return server, federation, port


def test_serve_accepts_waggle_dance_files_unchanged(waggle_dance_files):
    server, federation, port = waggle_dance_files
    files = ["--server-config", str(server), "--federation-config", str(federation)]
    proc = subprocess.Popen(
        [*HMSPROXY, "serve", *files, "--host", "127.0.0.1", *own_pid_file(server)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=server.parent,  # its default store goes there
    )
    try:
        wait_for_line(proc, "serving thrift://127.0.0.1:", 60)
        client = thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", port, timeout=30000)
        try:
            names = client.get_all_databases()
            assert "default" in names and "waggle_sales" in names
            assert "waggle_hr" not in names  # not in mapped-databases
            assert client.get_database("waggle_sales").name == "waggle_sales"
        finally:
            client.close()
    finally:
        assert stop(proc) == 0


def test_check_config_prints_the_federation(waggle_dance_files):
    server, federation, _ = waggle_dance_files
    out = subprocess.run(
        [*HMSPROXY, "check-config", "--server-config", str(server), "--federation-config", str(federation)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert "PREFIXED" in out.stdout and "waggle_" in out.stdout and "READ_AND_WRITE_AND_CREATE" in out.stdout


def test_check_config_names_file_key_and_reason(tmp_path):
    bad = tmp_path / "hmsproxy.yml"
    bad.write_text("primary-meta-store:\n  name: p\n  remote-meta-store-uris: thrift://h:1\n  acces-control-type: READ_ONLY\n")
    out = subprocess.run([*HMSPROXY, "check-config", "--config", str(bad)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1
    assert str(bad) in out.stderr and "acces-control-type" in out.stderr and "access-control-type" in out.stderr


def test_check_config_warns_as_documented_and_strict_refuses_unknown_keys(tmp_path):
    """docs/waggle-dance.md: a warning per unknown key (with the closest known one) and per ignored key
    whose value asks for something hmsproxy does not do; `--strict` makes unknown keys an error."""
    federation = tmp_path / "waggle-dance-federation.yml"
    federation.write_text(
        "primary-meta-store:\n"
        "  name: primary\n"
        "  remote-meta-store-uris: thrift://127.0.0.1:1\n"
        "  acess-control-type: READ_AND_WRITE_AND_CREATE\n"  # misspelt: read-only without it
        "  impersonation-enabled: false\n"  # Waggle Dance's default: nothing to warn about
        "  hive-metastore-filter-hook: com.example.Hook\n"  # asks for what hmsproxy can't do
    )
    lenient = subprocess.run(
        [*HMSPROXY, "check-config", "--federation-config", str(federation)], capture_output=True, text=True, timeout=60
    )
    assert lenient.returncode == 0, lenient.stderr
    warnings = [line.split(" hmsproxy.config: ", 1)[1] for line in lenient.stderr.splitlines() if "WARNING" in line]
    assert warnings == [
        f"{federation}: primary-meta-store.acess-control-type: unknown key, ignored (did you mean 'access-control-type'?); --strict refuses it",
        f"{federation}: primary-meta-store.hive-metastore-filter-hook: accepted but not acted on: "
        "hmsproxy cannot run Hive MetaStoreFilterHook classes; results are not filtered by it",
    ]
    assert "READ_ONLY" in lenient.stdout  # what the misspelling costs

    for command in ("check-config", "serve"):
        strict = subprocess.run(
            [*HMSPROXY, command, "--strict", "--federation-config", str(federation)], capture_output=True, text=True, timeout=60
        )
        assert strict.returncode != 0, command
        assert "Traceback" not in strict.stderr
        assert (
            f"{federation}: primary-meta-store.acess-control-type: unknown key (--strict) (did you mean 'access-control-type'?)"
            in strict.stderr.strip().splitlines()[-1]
        ), strict.stderr


def test_serve_refuses_invalid_config_at_start(tmp_path):
    bad = tmp_path / "hmsproxy.yml"
    bad.write_text("primary-meta-store:\n  name: p\n  remote-meta-store-uris: http://nope\n")
    out = subprocess.run([*HMSPROXY, "serve", "--config", str(bad)], capture_output=True, text=True, timeout=60)
    assert out.returncode != 0
    assert "remote-meta-store-uris" in out.stderr and "thrift://host:port" in out.stderr


def test_dev_up_starts_a_federation_and_ctrl_c_stops_everything(tmp_path):
    port = free_port()
    state = tmp_path / "state"
    proc = subprocess.Popen(
        [*HMSPROXY, "dev", "up", "--backends", "2", "--port", str(port), "--state-dir", str(state), *own_pid_file(state)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        lines = wait_for_line(proc, "Ctrl-C stops", 240)
        printed = "".join(lines)
        assert f"spark.hadoop.hive.metastore.uris=thrift://127.0.0.1:{port}" in printed
        client = thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", port, timeout=30000)
        try:
            names = client.get_all_databases()
            assert "default" in names and "fed1_default" in names
        finally:
            client.close()
    finally:
        assert stop(proc, signal.SIGINT, timeout_s=90) == 0
    # Every metastore JVM it started is gone with it.
    leftover = subprocess.run(["pgrep", "-f", str(tmp_path / "state")], capture_output=True, text=True).stdout.strip()
    assert leftover == ""


def test_dev_hms_runs_one_metastore_until_stopped(tmp_path):
    """The command the compose file's metastore services run."""
    port = free_port()
    state = tmp_path / "hms"
    proc = start_dev_hms("--port", str(port), "--state-dir", str(state))
    try:
        wait_for_line(proc, f"metastore ready at thrift://127.0.0.1:{port}", 180)
        client = thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", port, timeout=30000)
        try:
            assert "default" in client.get_all_databases()
        finally:
            client.close()
    finally:
        assert stop(proc, signal.SIGTERM, timeout_s=60) == 0
    leftover = subprocess.run(["pgrep", "-f", str(state)], capture_output=True, text=True).stdout.strip()
    assert leftover == ""

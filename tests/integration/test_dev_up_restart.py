"""`hmsproxy dev up` keeps its ports across restarts of one state directory (a remote made against
the dev stack still answers after Ctrl-C and a new start), checks its own ports before starting any
metastore JVM, writes the pid file `hmsproxy reload` reads, and says where its operations endpoint is."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
import thriftpy2.rpc

from hmsproxy.dev.kept_ports import PORTS_FILE
from hmsproxy.dev.ports import free_port
from hmsproxy.protocol import idl
from tests.integration.test_cli import HMSPROXY, stop
from tests.integration.test_readme_examples import wait_for_output

REPO_ROOT = Path(__file__).resolve().parents[2]
READY = "Ctrl-C stops"


def dev_up(state: Path, log: Path, *args: str) -> subprocess.Popen:
    with open(log, "w") as out:  # a file, not a pipe nobody drains
        return subprocess.Popen(
            [*HMSPROXY, "dev", "up", "--demo", "--state-dir", str(state), *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=REPO_ROOT,
            start_new_session=True,
        )


def hmsproxy(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*HMSPROXY, *args], capture_output=True, text=True, timeout=120, cwd=REPO_ROOT)


def remote_tables(port: int, database: str) -> list[str]:
    client = thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", port, timeout=30000)
    try:
        names = client.get_all_tables(database)
        assert client.get_table(database, "orders").sd.cols[0].name == "order_id"
        return names
    finally:
        client.close()


def test_a_restart_keeps_the_ports_and_a_remote_made_before_still_answers(tmp_path):
    state, pid_file, port = tmp_path / "state", tmp_path / "hmsproxy.pid", free_port()

    first = dev_up(state, tmp_path / "first.log", "--port", str(port), "--http-port", "0", "--pid-file", str(pid_file))
    try:
        out = wait_for_output(first, tmp_path / "first.log", READY, 240)
        kept = json.loads((state / PORTS_FILE).read_text())
        assert kept["proxy"] == port and {"hms0", "hms1", "http"} <= kept.keys()
        hms1 = f"thrift://127.0.0.1:{kept['hms1']}"
        assert f"fed1 {hms1}" in out  # the URIs, printed for remotes
        assert pid_file.read_text().strip() == str(first.pid)  # what `hmsproxy reload` signals
        reloaded = hmsproxy("reload", "--pid-file", str(pid_file))
        assert reloaded.returncode == 0, reloaded.stderr
        wait_for_output(first, tmp_path / "first.log", "configuration reloaded from hmsproxy dev up", 60)
        assert first.poll() is None  # SIGHUP applied the dev config again; it did not stop the stack

        # The operations endpoint runs, and the text says so (it said "off").
        endpoint = f"http://127.0.0.1:{kept['http']}"
        assert f"Operations endpoint: {endpoint} (/metrics, /healthz, /readyz)" in out
        with urllib.request.urlopen(f"{endpoint}/healthz", timeout=30) as answer:
            assert answer.status == 200
        status = hmsproxy("status", "--uri", f"thrift://127.0.0.1:{port}")
        assert status.returncode == 0, status.stderr
        assert f"Operations endpoint: {endpoint}" in status.stdout

        made = hmsproxy(
            "sql",
            "--uri",
            f"thrift://127.0.0.1:{port}",
            "-e",
            f"CREATE REMOTE DATABASE kept_sales CONNECTED TO sales WITH DBPROPERTIES ('hive.metastore.uris'='{hms1}')",
        )
        assert made.returncode == 0, made.stderr
        assert remote_tables(port, "kept_sales") == ["orders"]
    finally:
        assert stop(first, signal.SIGINT, timeout_s=90) == 0
    assert not pid_file.exists()

    # No --port this time: the proxy's kept port is used; the metastores get theirs back.
    second = dev_up(state, tmp_path / "second.log", "--http-port", "0", "--pid-file", str(pid_file))
    try:
        out = wait_for_output(second, tmp_path / "second.log", READY, 240)
        assert json.loads((state / PORTS_FILE).read_text()) == kept
        assert f"hmsproxy is serving thrift://127.0.0.1:{port}" in out
        assert f"fed1 {hms1}" in out
        assert "demo data fed1_sales.orders on hms1: already there" in out  # kept as it is
        assert remote_tables(port, "kept_sales") == ["orders"]
        shown = hmsproxy("sql", "--uri", f"thrift://127.0.0.1:{port}", "-e", "SHOW REMOTE DATABASES")
        assert shown.returncode == 0 and "kept_sales" in shown.stdout, shown.stderr
    finally:
        assert stop(second, signal.SIGINT, timeout_s=90) == 0
    leftover = subprocess.run(["pgrep", "-f", str(state)], capture_output=True, text=True).stdout.strip()
    assert leftover == ""


def test_a_busy_port_fails_before_any_metastore_starts(tmp_path):
    state, pid_file = tmp_path / "state", tmp_path / "hmsproxy.pid"
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        started = time.monotonic()
        out = hmsproxy("dev", "up", "--demo", "--state-dir", str(state), "--port", str(port), "--pid-file", str(pid_file))
        took = time.monotonic() - started
    assert out.returncode != 0
    assert f"port {port} of the proxy (--port) is in use by another process" in out.stderr
    assert "starting" not in out.stdout  # no "starting 2 local metastores"
    assert not list(state.glob("hms*/metastore.log")) and not pid_file.exists()
    print(f"dev up on a busy port failed after {took:.1f}s")  # reported (-s), not asserted: no JVM started


def test_make_up_serves_the_operations_endpoint_on_a_kept_port(tmp_path):
    """`make up`, as the README says to start: its proxy has /metrics, /healthz and /readyz on the
    port kept for it, and says where (it said "Operations endpoint: off")."""
    state, pid_file, port, log = tmp_path / "state", tmp_path / "hmsproxy.pid", free_port(), tmp_path / "make-up.log"
    args = f"--port {port} --state-dir {state} --pid-file {pid_file}"
    with open(log, "w") as out:
        up = subprocess.Popen(
            ["make", "--no-print-directory", "up", f"ARGS={args}"],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=REPO_ROOT,
            start_new_session=True,
        )
    served_by = None
    try:
        out = wait_for_output(up, log, READY, 240)
        served_by = int(pid_file.read_text())  # `hmsproxy dev up`, make's child
        kept = json.loads((state / PORTS_FILE).read_text())["http"]
        endpoint = f"http://127.0.0.1:{kept}"
        assert f"Operations endpoint: {endpoint} (/metrics, /healthz, /readyz)" in out, out
        for path in ("/healthz", "/readyz", "/metrics"):
            with urllib.request.urlopen(f"{endpoint}{path}", timeout=30) as answer:
                assert answer.status == 200, path
                body = answer.read().decode()
        assert "hmsproxy_requests_total" in body
    finally:
        # Ctrl-C reaches the whole group (make, dev up and its metastores), as in a terminal.
        os.killpg(up.pid, signal.SIGINT)
        try:
            up.wait(timeout=120)
        finally:
            if served_by is not None:
                deadline = time.monotonic() + 120
                while _alive(served_by) and time.monotonic() < deadline:
                    time.sleep(0.2)
                if _alive(served_by):
                    os.killpg(up.pid, signal.SIGKILL)
                    pytest.fail(f"dev up (pid {served_by}) still ran 120 s after Ctrl-C")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True

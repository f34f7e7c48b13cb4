"""Two real `hmsproxy serve`s in one directory: the second one fails to start in one line naming
what is taken, and leaves the first one's pid file alone (`hmsproxy reload` still reaches it)."""

from __future__ import annotations

import os
import signal
import subprocess

import pytest
import thriftpy2.rpc

from hmsproxy.dev.ports import free_port
from hmsproxy.protocol import idl
from tests.integration.test_cli import HMSPROXY, stop, wait_for_line


@pytest.fixture
def config(tmp_path, metastores):
    path = tmp_path / "hmsproxy.yml"
    path.write_text(
        f"primary-meta-store:\n  name: primary\n  remote-meta-store-uris: {metastores[0].uri}\n  access-control-type: READ_ONLY\n"
    )
    return path


def serve(config, cwd, port, *extra) -> subprocess.Popen:
    return subprocess.Popen(
        [*HMSPROXY, "serve", "--config", str(config), "--host", "127.0.0.1", "--port", str(port), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=cwd,
    )


def second_serve(config, cwd, port, *extra) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*HMSPROXY, "serve", "--config", str(config), "--host", "127.0.0.1", "--port", str(port), *extra],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )


def test_a_failed_start_leaves_the_running_servers_pid_file_alone(config, tmp_path):
    port = free_port()
    first = serve(config, tmp_path, port)
    pid_file = tmp_path / ".state" / "hmsproxy.pid"
    try:
        wait_for_line(first, f"serving thrift://127.0.0.1:{port}", 90)
        assert pid_file.read_text().strip() == str(first.pid)

        # The same directory: the pid file names a live server, so the second one does not start.
        same_dir = second_serve(config, tmp_path, free_port())
        assert same_dir.returncode != 0
        assert same_dir.stderr.strip().splitlines() == [
            f"hmsproxy: can't start: .state/hmsproxy.pid names a running server (pid {first.pid}); "
            "stop it, or give this one its own --pid-file (and --port)"
        ]

        # Its own pid file, the same port: one line naming the address, no traceback.
        other_pid_file = tmp_path / "other.pid"
        taken = second_serve(config, tmp_path, port, "--pid-file", str(other_pid_file))
        assert taken.returncode != 0
        lines = taken.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in taken.stderr, taken.stderr
        assert lines[0].startswith(f"hmsproxy: can't start: 127.0.0.1:{port} is not free"), lines
        assert not other_pid_file.exists()  # never written: it never listened

        # The first server's pid file is still its own, and reload reaches it.
        assert pid_file.read_text().strip() == str(first.pid)
        reload = subprocess.run([*HMSPROXY, "reload"], capture_output=True, text=True, cwd=tmp_path, timeout=60)
        assert reload.returncode == 0 and f"pid {first.pid}" in reload.stdout, reload.stderr
        wait_for_line(first, "configuration reloaded", 60)
    finally:
        assert stop(first) == 0
    assert not pid_file.exists()  # removed by the server that wrote it


def test_a_pid_file_left_by_a_dead_server_does_not_stop_a_start(config, tmp_path):
    pid_file = tmp_path / ".state" / "hmsproxy.pid"
    pid_file.parent.mkdir()
    gone = subprocess.Popen(["true"])  # a pid that has exited
    gone.wait()
    pid_file.write_text(f"{gone.pid}\n")
    port = free_port()
    proc = serve(config, tmp_path, port)
    try:
        wait_for_line(proc, f"serving thrift://127.0.0.1:{port}", 90)
        assert pid_file.read_text().strip() == str(proc.pid) != str(os.getpid())
        client = thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", port, timeout=30000)
        try:
            assert "default" in client.get_all_databases()  # it serves (and has its signal handlers by now)
        finally:
            client.close()
    finally:
        assert stop(proc) == 0


def test_a_sigterm_as_soon_as_it_says_serving_stops_it_cleanly(config, tmp_path):
    """The signal handlers come before the "serving" line: a supervisor that stops the server the
    moment it reads that line gets exit 0 and no pid file left (it was killed by -15 before)."""
    port = free_port()
    proc = serve(config, tmp_path, port)
    try:
        wait_for_line(proc, f"serving thrift://127.0.0.1:{port}", 90)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert not (tmp_path / ".state" / "hmsproxy.pid").exists()

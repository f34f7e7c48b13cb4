"""`hmsproxy dev up --storage s3|hdfs` when the store's server does not start: one line naming the
server's log, exit 1, the server stopped and no metastore started (the store comes first).

The server is a fake `java`, a shell script standing in for s3proxy's and the minicluster's JVM:
one that dies at once and one that never answers (the start's time limit cut to 1 s here).
"""

from __future__ import annotations

import signal
import time

import pytest

from hmsproxy import cli
from hmsproxy.dev import federation, minicluster, s3proxy, storage_jars
from hmsproxy.dev.ports import free_port
from hmsproxy.dev.server_jvm import ServerFailed
from hmsproxy.ops.pid_file import alive


@pytest.fixture
def fake_java(tmp_path, monkeypatch):
    """A `java` that writes its pid, says why it fails, then exits (FAKE_JAVA=exit) or hangs."""
    script = tmp_path / "java"
    pid_file = tmp_path / "java.pid"
    script.write_text(
        "#!/bin/sh\n"
        f"echo $$ > {pid_file}\n"
        'echo "fake java: Address already in use" >&2\n'
        'if [ "$FAKE_JAVA" = exit ]; then exit 3; fi\n'
        "exec sleep 60\n"
    )
    script.chmod(0o755)
    for module in (s3proxy, minicluster):
        monkeypatch.setattr(module, "java_executable", lambda: str(script))
    monkeypatch.setattr(s3proxy, "START_TIMEOUT_S", 1)
    monkeypatch.setattr(minicluster, "START_TIMEOUT_S", 1)
    monkeypatch.setattr(storage_jars, "require_fetched", lambda *_, **__: None)
    monkeypatch.setattr(storage_jars, "s3proxy_jar", lambda say=None: tmp_path / "s3proxy.jar")
    monkeypatch.setattr(storage_jars, "s3a_jars", lambda *_, **__: [])
    monkeypatch.setattr(storage_jars, "minicluster_classpath", lambda say=None: str(tmp_path / "no-such-classpath"))
    return pid_file


@pytest.fixture
def no_metastores(monkeypatch):
    started = []
    monkeypatch.setattr(federation, "start_metastores", lambda *a, **k: started.append(a) or [])
    return started


@pytest.fixture
def sighup_kept():
    """`dev up` ignores SIGHUP while it starts; this process's handler is put back after the test."""
    before = signal.getsignal(signal.SIGHUP)
    yield
    signal.signal(signal.SIGHUP, before)


@pytest.mark.parametrize(
    ("store", "behaviour", "log_name", "said"),
    [
        ("s3", "hang", "s3proxy.log", "s3proxy did not answer within 1s"),
        ("s3", "exit", "s3proxy.log", "s3proxy exited with code 3"),
        ("hdfs", "hang", "minicluster.log", "HDFS minicluster did not answer within 1s"),
        ("hdfs", "exit", "minicluster.log", "HDFS minicluster exited with code 3"),
    ],
)
def test_a_store_that_does_not_start_is_one_line_naming_its_log(
    store, behaviour, log_name, said, fake_java, no_metastores, sighup_kept, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("FAKE_JAVA", behaviour)
    state = tmp_path / "state"
    started = time.monotonic()
    with pytest.raises(SystemExit) as caught:
        # A free port: the default 9083 may be held by a `make up` or the README tour's test.
        cli.main(
            ["dev", "up", "--storage", store, "--state-dir", str(state), "--pid-file", str(tmp_path / "pid"), "--port", str(free_port())]
        )
    message = str(caught.value.code)  # a string: Python prints it to stderr and exits 1
    log = state / store / log_name
    assert message == f"hmsproxy: {said}; read its log: {log}"
    assert "fake java: Address already in use" in log.read_text()  # the log it names holds the reason
    assert not alive(int(fake_java.read_text())), "the store's server was left running"
    assert no_metastores == []  # the store starts first: no metastore to stop
    assert time.monotonic() - started < 20
    assert "Traceback" not in capsys.readouterr().err


def test_the_failure_keeps_the_logs_tail_for_test_reports(fake_java, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_JAVA", "exit")
    (tmp_path / "s3").mkdir()
    with pytest.raises(ServerFailed) as caught:
        s3proxy.S3Server(tmp_path / "s3", 1, tmp_path / "s3proxy.jar").start()
    assert "\n" not in str(caught.value)
    assert caught.value.tail == "fake java: Address already in use"

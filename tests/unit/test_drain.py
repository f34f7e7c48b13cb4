"""A SIGTERM drain's order (ops/drain.py): readiness fails first while everything is still served,
then the listener closes, idle connections are closed without a call lost, a call in flight is
answered, and the drain ends within its bound. A real ProxyServer and handler over a fake metastore;
one method is held in the handler to stand for a slow call in flight."""

from __future__ import annotations

import socket
import threading
import time

import pytest
import thriftpy2.rpc
from thriftpy2.transport import TTransportException

from hmsproxy.config import ConfigError
from hmsproxy.config.own_format import load_config
from hmsproxy.downstream.server import ProxyServer
from hmsproxy.ops.drain import drain
from hmsproxy.ops.readiness import readiness_of
from hmsproxy.protocol import idl
from hmsproxy.testing import FakeMetastore

HELD_METHOD = "get_database"


@pytest.fixture
def primary():
    return FakeMetastore("primary")


class HeldCalls:
    """Holds every `HELD_METHOD` call in the handler until released; counts the calls dispatched."""

    def __init__(self, handler):
        self.entered = threading.Event()
        self.release = threading.Event()
        self.dispatched: list[str] = []
        inner = handler.dispatch

        def dispatch(session, method, *rest):
            self.dispatched.append(method)
            if method == HELD_METHOD:
                self.entered.set()
                assert self.release.wait(10), "the test never released the held call"
            return inner(session, method, *rest)

        handler.dispatch = dispatch


@pytest.fixture
def served(handler):
    held = HeldCalls(handler)
    server = ProxyServer(handler, "127.0.0.1", 0).start()
    yield server, held
    held.release.set()
    server.stop()


def client_of(server):
    return thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", server.port, timeout=10000)


def draining_says_ready(handler) -> bool:
    """/readyz's first check, the one a drain fails."""
    first = readiness_of(handler).checks[0]
    result = first()
    assert result.name == "draining"
    return result.ok


def in_thread(fn, *args):
    out: dict = {}

    def run():
        try:
            out["value"] = fn(*args)
        except Exception as e:  # the test asserts on it
            out["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, out


def test_readiness_fails_first_then_the_listener_closes_and_the_call_in_flight_is_answered(served, handler):
    server, held = served
    idle, busy = client_of(server), client_of(server)
    try:
        databases = idle.get_all_databases()
        assert "default" in databases
        calling, answer = in_thread(busy.get_database, "default")
        assert held.entered.wait(5)
        assert draining_says_ready(handler)

        draining, drained = in_thread(drain, server, handler.draining, 0.6, 5.0)
        time.sleep(0.2)
        # 1. readiness fails while everything is still served: new connections and calls are answered
        assert not draining_says_ready(handler)
        late = client_of(server)
        assert late.get_all_databases() == databases
        late.close()
        assert idle.get_all_databases() == databases

        time.sleep(0.8)  # past the notice
        # 2. the listener is closed, the idle connection too, without running the call sent on it
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", server.port), timeout=2).close()
        before = list(held.dispatched)
        with pytest.raises((TTransportException, ConnectionError)):
            idle.get_all_databases()
        assert held.dispatched == before, "a call sent on a connection the drain let go was run"
        # 3. the call in flight is still waiting, and is answered when it ends; then the drain ends
        assert draining.is_alive() and calling.is_alive()
        started = time.monotonic()
        held.release.set()
        calling.join(5)
        assert "error" not in answer and answer["value"] is not None
        draining.join(5)
        assert not draining.is_alive() and drained == {"value": 0}
        assert time.monotonic() - started < 1.0
    finally:
        idle.close()
        busy.close()


def test_a_call_longer_than_the_drain_timeout_is_cut_at_the_bound(served, handler, caplog):
    server, held = served
    busy = client_of(server)
    try:
        calling, answer = in_thread(busy.get_database, "default")
        assert held.entered.wait(5)
        started = time.monotonic()
        left = drain(server, handler.draining, 0.0, 0.5)
        took = time.monotonic() - started
        assert left == 1 and server.open_connections == 1 and 0.5 <= took < 1.5
        assert f"the call {HELD_METHOD} of client 127.0.0.1:" in caplog.text  # it names itself, applied or not
        server.stop()  # what `serve` does next: the held call's connection is cut
        held.release.set()
        calling.join(5)
        assert isinstance(answer.get("error"), (TTransportException, ConnectionError))
    finally:
        busy.close()


def test_drain_bounds_are_read_from_the_server_section(tmp_path):
    path = tmp_path / "hmsproxy.yml"
    base = "primary-meta-store: {name: p, remote-meta-store-uris: 'thrift://127.0.0.1:9'}\n"
    path.write_text("server: {drain-notice-s: 0, drain-timeout-s: 7.5}\n" + base)
    server = load_config(path).server
    assert (server.drain_notice_s, server.drain_timeout_s) == (0.0, 7.5)
    assert load_config(_write(tmp_path, base)).server.drain_timeout_s == 20.0
    with pytest.raises(ConfigError, match=r"server\.drain-timeout-s.*greater than 0"):
        load_config(_write(tmp_path, "server: {drain-timeout-s: 0}\n" + base))
    with pytest.raises(ConfigError, match=r"server\.drain-notice-s.*0 or more"):
        load_config(_write(tmp_path, "server: {drain-notice-s: -1}\n" + base))


def _write(tmp_path, text):
    path = tmp_path / "other.yml"
    path.write_text(text)
    return path


def test_a_process_still_running_at_the_deadline_exits_1_while_closing_0_once_closed():
    import subprocess
    import sys

    script = "import time; from hmsproxy.ops.drain import ExitDeadline; t = ExitDeadline({after}); {then}; time.sleep(20)"
    started = time.monotonic()
    hung = subprocess.run([sys.executable, "-c", script.format(after=0.3, then="pass")], capture_output=True, text=True, timeout=30)
    assert hung.returncode == 1 and time.monotonic() - started < 10
    assert "exiting without finishing" in hung.stderr
    closed = subprocess.run([sys.executable, "-c", script.format(after=0.3, then="t.closed()")], capture_output=True, text=True, timeout=30)
    assert closed.returncode == 0 and "closed, but the process still runs" in closed.stderr
    cancelled = subprocess.run(
        [sys.executable, "-c", script.format(after=0.3, then="t.cancel(); time.sleep(0.6); raise SystemExit(3)")], timeout=30
    )
    assert cancelled.returncode == 3

"""One admission for both paths: a metastore tripped by the breaker, or with every concurrency slot
taken, refuses a repeated read that the C hit loop would serve and a call on the Python path alike,
because both ask the same Gate (protocol/_gate.c).

A real Hive metastore behind one handler served twice: over the buffered transport (plain sockets:
the hit loop in C) and over the framed transport (the Python path only: the hit loop reads the
buffered one). The breaker trips for real: the metastore is stopped with SIGSTOP while a call waits
on it, and the probe finds it silent.
"""

from __future__ import annotations

import time
from contextlib import contextmanager

import pytest
import thriftpy2.rpc
from thriftpy2.transport import TFramedTransportFactory

from hmsproxy.config.model import Config, DatabaseResolution, MetastoreConfig, ServerConfig
from hmsproxy.downstream.server import ProxyServer
from hmsproxy.pipeline import shortcuts
from hmsproxy.protocol import idl
from hmsproxy.upstream.slots import SlotRule
from tests.support.fastpath_spy import python_shortcuts_seen
from tests.support.served import served
from tests.support.stopped import Stopper, empty_table, in_flight

hive = idl.hive
#: The breaker's window, short so the trip comes within a couple of seconds of the stop.
PROBE_AFTER_S = 0.5
#: A bound on things that take a second or two when they work.
PATIENCE_S = 60.0


def poll(fn, timeout_s: float = PATIENCE_S, interval_s: float = 0.05) -> None:
    started = time.monotonic()
    while not fn():
        assert time.monotonic() - started < timeout_s, f"not reached within {timeout_s} s"
        time.sleep(interval_s)


@contextmanager
def client(port: int, framed: bool = False):
    extra = {"trans_factory": TFramedTransportFactory()} if framed else {}
    made = thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", port, timeout=30_000, **extra)
    try:
        yield made
    finally:
        made.close()


@contextmanager
def framed_server(handler):
    server = ProxyServer(handler, "127.0.0.1", 0, transport="framed").start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(autouse=True)
def long_lived(monkeypatch):
    monkeypatch.setattr(shortcuts, "TTL_S", 60.0)  # decisions outlive the trip: the gate, not time, refuses


@pytest.fixture
def python_shortcuts(monkeypatch):
    """The calls that took a shortcut through Python (FastPath.shortcut), by method."""
    return python_shortcuts_seen(monkeypatch)


def refused(get, expected: str) -> bool:
    with pytest.raises(hive.MetaException) as err:
        get()
    assert expected in err.value.message, err.value.message
    return True


def test_a_trip_and_a_full_slot_refuse_the_c_hit_loop_and_the_python_path_alike(private_metastore, python_shortcuts):
    ms = private_metastore
    empty_table(ms, "gated")
    primary = MetastoreConfig("primary", (ms.uri,), primary=True)
    config = Config(ServerConfig(probe_after_s=PROBE_AFTER_S, backend_timeout_s=30.0), DatabaseResolution.PREFIXED, primary)
    with served(config) as plain, framed_server(plain.handler) as framed, Stopper(ms.pid) as stopper:
        handler = plain.handler
        with client(plain.port) as c_path, client(framed.port, framed=True) as py_path, client(plain.port) as waiter:

            def c_read():
                return c_path.get_table("default", "gated")

            def py_read():
                return py_path.get_table("default", "gated")

            for _ in range(3):  # the full path, then relayed (decided), then shortcut hits
                assert c_read().tableName == "gated" and py_read().tableName == "gated"
            used, through_python = handler.shortcuts.used, len(python_shortcuts)
            c_read()
            assert handler.shortcuts.used == used + 1 and len(python_shortcuts) == through_python  # served in C
            py_read()
            assert len(python_shortcuts) == through_python + 1  # served by Python's shortcut

            # Every slot taken: both refuse (the hit loop leaves a capped metastore to Python's slots).
            handler.backends.slots.configure({"primary": SlotRule(cap=1, queue_s=0.0)})
            through_python = len(python_shortcuts)
            with handler.backends.slots.capped["primary"]:
                assert refused(c_read, "limit 'metastore primary: 1 concurrent calls' reached")
                assert refused(py_read, "limit 'metastore primary: 1 concurrent calls' reached")
            assert len(python_shortcuts) == through_python + 2  # the hit loop served neither: it was refused
            handler.backends.slots.configure({})
            used, through_python = handler.shortcuts.used, len(python_shortcuts)
            c_read()
            assert handler.shortcuts.used == used + 1 and len(python_shortcuts) == through_python  # in C again once uncapped

            # Tripped: a call waits on the stopped metastore until the probe finds it silent.
            stopper.stop()
            thread, outcome = in_flight(lambda: waiter.get_database("default"))
            poll(lambda: handler.backends.breaker.trip("primary") is not None)
            thread.join(PATIENCE_S)
            assert "error" in outcome and "not answering since" in str(outcome["error"]), outcome
            through_python = len(python_shortcuts)
            assert refused(c_read, "metastore 'primary'")
            assert refused(py_read, "metastore 'primary'")
            assert len(python_shortcuts) == through_python + 2  # the hit loop served neither: the gate refused it
            assert handler.backends.gate.calls == {}  # nothing left registered by either path

            stopper.resume()

            def answers() -> bool:
                try:
                    return c_read().tableName == "gated" and py_read().tableName == "gated"
                except hive.MetaException:
                    return False

            poll(answers)

"""wire.ThriftConnection against a server that takes calls and never answers: the kernel's timeout
(SO_RCVTIMEO on a blocking socket) ends the call, saying how long it waited; or another thread
cuts it (Connection.cut, what the breaker does when the metastore's probe fails)."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from hmsproxy.downstream.reply_sink import ReplySink
from hmsproxy.protocol import idl
from hmsproxy.upstream.wire import BackendUnavailable, ThriftConnection


@pytest.fixture
def silent_server():
    """Accepts connections and reads what comes; answers nothing until the test ends."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []
    done = threading.Event()

    def serve():
        listener.settimeout(0.1)
        while not done.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            accepted.append(conn)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"thrift://127.0.0.1:{listener.getsockname()[1]}"
    done.set()
    thread.join(timeout=5)
    listener.close()
    for conn in accepted:
        conn.close()


@pytest.mark.parametrize("how", ["call", "relay"])
def test_a_call_nobody_answers_ends_by_its_timeout(silent_server, how):
    conn = ThriftConnection("silent", (silent_server,), call_timeout_s=0.3)
    conn.open()
    assert conn._socket.gettimeout() is None  # blocking: the kernel keeps the time, no poll per call
    started = time.monotonic()
    with pytest.raises(BackendUnavailable) as caught:
        if how == "call":
            conn.call("getVersion", idl.HmsProxy.getVersion_args())
        else:
            conn.relay("getVersion", idl.HmsProxy.getVersion_args(), ReplySink(lambda data: None, "getVersion", 1))
    waited = time.monotonic() - started
    # The server never answers, so only the kernel's timer can end the call (its reason below), and
    # not before its 0.3 s: a busy machine only makes the wait longer. The upper bound only tells the
    # timer from a hang, at 100 times the timeout. (A kernel timer cannot run on a fake clock.)
    assert 0.25 <= waited < 30
    assert caught.value.reason == "no answer within 0.3 s" and not caught.value.gone_before_answer  # a hang is never sent again
    assert not conn.is_open  # its stream is unusable now


def _call(conn: ThriftConnection, how: str):
    if how == "call":
        return conn.call("getVersion", idl.HmsProxy.getVersion_args())
    return conn.relay("getVersion", idl.HmsProxy.getVersion_args(), ReplySink(lambda data: None, "getVersion", 1))


@pytest.mark.parametrize("how", ["call", "relay"])
def test_a_cut_from_another_thread_ends_the_waiting_call_with_the_cuts_error(silent_server, how):
    conn = ThriftConnection("silent", (silent_server,), call_timeout_s=600)
    conn.open()
    outcome: dict = {}

    def waiting():
        try:
            _call(conn, how)
        except BaseException as e:
            outcome["error"] = e

    thread = threading.Thread(target=waiting, daemon=True)
    thread.start()
    time.sleep(0.2)  # (it waits in recv by now; if not, the cut's socket shutdown fails its send the same way)
    conn.cut("thrift://silent:1", "not answering since 10:00")
    thread.join(30)  # far below the 600 s timeout: only the cut can end it
    assert not thread.is_alive()
    error = outcome["error"]
    assert isinstance(error, BackendUnavailable) and error.cut and not error.gone_before_answer  # never sent again
    assert error.reason == "not answering since 10:00" and error.uri == "thrift://silent:1"
    assert not conn.is_open
    with pytest.raises(BackendUnavailable, match="not answering since 10:00"):
        conn.open()  # a cut connection is never used again


def test_a_connection_cut_before_its_call_never_sends_it(silent_server):
    conn = ThriftConnection("silent", (silent_server,), call_timeout_s=600)
    conn.cut("thrift://silent:1", "tripped")
    with pytest.raises(BackendUnavailable, match="tripped") as caught:
        _call(conn, "call")
    assert caught.value.cut and not conn.is_open

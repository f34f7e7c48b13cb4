"""wire.ThriftConnection against a server that takes calls and never answers: the kernel's timeout
(SO_RCVTIMEO on a blocking socket) ends the call, reported as Python's socket timeout was."""

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
    # The server never answers, so only the kernel's timer can end the call ("timed out" below), and
    # not before its 0.3 s: a busy machine only makes the wait longer. The upper bound only tells the
    # timer from a hang, at 100 times the timeout. (A kernel timer cannot run on a fake clock.)
    assert 0.25 <= waited < 30
    assert caught.value.reason == "timed out" and not caught.value.gone_before_answer  # a hang is never sent again
    assert not conn.is_open  # its stream is unusable now

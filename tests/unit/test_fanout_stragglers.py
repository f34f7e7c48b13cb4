"""A fan-out leg left behind at its deadline (a straggler) never shares a connection with the
session's later calls (pipeline/fanout.py, upstream/session.py Leg).

The connections here behave as sockets do where it matters: a call waits while its metastore
hangs, and returns when another thread closes or shuts down its connection (closed: as the end
of file a real read then sees; cut: with the cut's error). Each connection records any moment
two threads are inside it at once.
"""

from __future__ import annotations

import threading
import time
from dataclasses import replace

from hmsproxy.app import build_handler
from hmsproxy.config.model import StoreConfig
from hmsproxy.testing import FakeMetastore, args, database, fake_connect, unwrap
from hmsproxy.upstream.session import Session
from hmsproxy.upstream.wire import BackendUnavailable
from tests.support.federation import leave_out_after, prefixed_config

#: A bound for waiting on another thread, reached only when what it waits for never happens.
PATIENCE_S = 30.0


class Sockets:
    """A connection factory over fake_connect: connections whose `hung` methods wait until `release`."""

    def __init__(self, connect):
        self.connect = connect
        self.hung: set[tuple[str, str]] = set()  # (metastore, method)
        self.released = threading.Event()
        self.conns: list[SocketLike] = []
        #: (connection number, method of the call inside, method of the call that came in).
        self.overlaps: list[tuple[int, str, str]] = []
        self.lock = threading.Lock()

    def __call__(self, metastore_name, uris, *, connect_timeout_s, call_timeout_s):
        conn = SocketLike(
            self, len(self.conns), self.connect(metastore_name, uris, connect_timeout_s=connect_timeout_s, call_timeout_s=call_timeout_s)
        )
        self.conns.append(conn)
        return conn

    def waiting(self, method: str) -> int:
        """How many calls of `method` are waiting in a hung metastore now."""
        return sum(1 for c in self.conns if c.inside == [method] and (c.metastore, method) in self.hung)


class SocketLike:
    def __init__(self, sockets: Sockets, number: int, inner):
        self.sockets, self.number, self.inner = sockets, number, inner
        self.metastore, self.uris = inner.metastore, inner.uris
        self.inside: list[str] = []  # the methods of the calls inside it now (two: two threads at once)
        self.woken = threading.Event()  # closed or cut under a waiting call

    @property
    def uri(self):
        return self.inner.uri

    @property
    def is_open(self):
        return self.inner.is_open

    def open(self):
        self.inner.open()

    def close(self):
        self.inner.close()
        self.woken.set()

    def cut(self, uri, reason):
        self.inner.cut(uri, reason)
        self.woken.set()

    def call(self, method, call_args):
        s = self.sockets
        with s.lock:
            if self.inside:
                s.overlaps.append((self.number, self.inside[0], method))
            self.inside.append(method)
        try:
            if (self.metastore, method) in s.hung:
                deadline = time.monotonic() + PATIENCE_S
                while not s.released.wait(0.01) and not self.woken.is_set():
                    assert time.monotonic() < deadline, "a hung call was never released"
                if self.woken.is_set() and getattr(self.inner, "cut_as", None) is None:
                    # Closed under the waiting read: a socket's read returns end of file.
                    raise BackendUnavailable(self.metastore, self.inner.uris[0], "TSocket read 0 bytes", gone_before_answer=True)
            return self.inner.call(method, call_args)
        finally:
            with s.lock:
                self.inside.remove(method)


def test_a_straggler_never_uses_a_connection_the_session_uses(tmp_path):
    waggle = FakeMetastore("waggle")
    waggle.create_database(database("sales"))
    sockets = Sockets(fake_connect({"primary": FakeMetastore("primary"), "waggle": waggle}))
    base = prefixed_config("thrift://primary:1", "thrift://waggle:1")
    config = leave_out_after(base, base.federated[0], deadline_ms=200)  # the primary keeps 60 s
    config = replace(config, store=StoreConfig(f"sqlite:///{tmp_path / 'hmsproxy.db'}"))
    handler = build_handler(config, connect=sockets)
    session = Session(handler.backends, "test")

    def call(method, **fields):
        return unwrap(handler.dispatch(session, method, args(method, **fields)))

    try:
        assert call("get_database", name="waggle_sales").name == "waggle_sales"  # the session keeps a connection to waggle
        sockets.hung.add(("waggle", "get_all_databases"))
        names = call("get_all_databases")  # waggle's leg is left behind at 200 ms
        assert "default" in names and "waggle_sales" not in names
        # Let the straggler settle: it ends, or it waits in waggle again (a second hung call).
        deadline = time.monotonic() + PATIENCE_S
        while any(c.inside for c in sockets.conns) and sockets.waiting("get_all_databases") < 1:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        time.sleep(0.1)  # (should it go on to another connection, give it the time to reach it)
        # The session's next call to waggle, while the straggler may still be waiting there.
        assert call("get_database", name="waggle_sales").name == "waggle_sales"
        assert sockets.overlaps == []  # never two threads on one connection
        # Left out for being slow, not reported down for the connection the fan-out gave up on
        # (which once logged "metastore 'waggle' is down: TSocket read 0 bytes").
        state = handler.backends.state("waggle")
        assert state.up is True and state.last_error == "no answer within 200 ms" and state.fanout_timeouts == 1
    finally:
        sockets.released.set()
        session.close()
        handler.close()


def test_a_leg_that_ends_in_time_gives_its_connection_back(tmp_path):
    sockets = Sockets(fake_connect({"primary": FakeMetastore("primary"), "waggle": FakeMetastore("waggle")}))
    config = replace(prefixed_config("thrift://primary:1", "thrift://waggle:1"), store=StoreConfig(f"sqlite:///{tmp_path / 'hmsproxy.db'}"))
    handler = build_handler(config, connect=sockets)
    session = Session(handler.backends, "test")
    try:
        for _ in range(3):
            assert "default" in unwrap(handler.dispatch(session, "get_all_databases", args("get_all_databases")))
        assert len(sockets.conns) == 2  # one per metastore, reused by every fan-out
    finally:
        session.close()
        handler.close()

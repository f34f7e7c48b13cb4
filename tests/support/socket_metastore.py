"""A FakeMetastore behind a real loopback socket, so the proxy's own ThriftConnection (and the hit
loop in C, which needs a socket: downstream/hits.py) talks to it as to a metastore.

One thread per connection reads whole messages and answers each with hmsproxy.testing's
serve_message. `hold()` makes every connection stop answering until `release()` (a hung
metastore that still accepts connections); `close_next()` makes the next call's connection close
instead of answering (a metastore that dropped an idle connection).
"""

from __future__ import annotations

import socket
import threading

from hmsproxy.ops.sockets import shut_down
from hmsproxy.protocol.framing import MessageReader
from hmsproxy.testing.connection import serve_message
from hmsproxy.testing.metastore import ClientState, FakeMetastore


class SocketMetastore:
    def __init__(self, fake: FakeMetastore):
        self.fake = fake
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._answering = threading.Event()
        self._answering.set()
        self._close_next = threading.Event()
        self._conns: list[socket.socket] = []
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._accept, daemon=True, name="socket-metastore")
        self._thread.start()

    @property
    def uri(self) -> str:
        return f"thrift://127.0.0.1:{self._listener.getsockname()[1]}"

    def hold(self) -> None:
        self._answering.clear()

    def release(self) -> None:
        self._answering.set()

    def close_next(self) -> None:
        self._close_next.set()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                self._conns.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True, name="socket-metastore-conn").start()

    def _serve(self, conn: socket.socket) -> None:
        messages, client = MessageReader(conn.recv), ClientState()
        try:
            while True:
                request = messages.next().data
                if self._close_next.is_set():
                    self._close_next.clear()
                    return
                while not self._answering.wait(0.05):  # held: a hung metastore (the socket stays open)
                    if conn.fileno() < 0:
                        return
                reply = serve_message(self.fake, client, request)
                if reply is not None:
                    conn.sendall(reply)
        except Exception:  # the proxy closed the connection (thriftpy2's EOF error), or close() did
            return
        finally:
            conn.close()

    def close(self) -> None:
        self._answering.set()
        shut_down(self._listener)  # wakes the thread blocked in accept()
        self._listener.close()
        with self._lock:
            conns, self._conns = self._conns, []
        for conn in conns:
            shut_down(conn)
            conn.close()
        self._thread.join(timeout=5)

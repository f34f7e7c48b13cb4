"""A TCP forwarder that can drop every connection it carries, as a firewall or load balancer drops
idle ones: the two ends learn of it only when they next read or write."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from hmsproxy.dev.ports import free_port


class DroppingForwarder:
    """127.0.0.1:port → target; `drop_all()` closes every connection carried so far;
    `lose_next_answer()` closes the connection the next answer comes back on, instead of passing it."""

    def __init__(self, target_host: str, target_port: int):
        self.target = (target_host, target_port)
        self.port = free_port()
        self.accepted = 0
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", self.port))
        self._listener.settimeout(0.2)
        self._stopping = threading.Event()
        self._lose_answer = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True, name="dropping-forwarder")
        self._thread.start()

    @property
    def uri(self) -> str:
        return f"thrift://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while not self._stopping.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            upstream = socket.create_connection(self.target, timeout=10)
            upstream.settimeout(None)
            with self._lock:
                self._pairs.append((client, upstream))
                self.accepted += 1
            threading.Thread(target=_pump, args=(client, upstream), daemon=True).start()
            threading.Thread(target=_pump, args=(upstream, client, self._lose_answer), daemon=True).start()

    def lose_next_answer(self) -> None:
        """The request reaches the target; its answer does not come back: the connection closes."""
        self._lose_answer.set()

    def drop_all(self) -> None:
        with self._lock:
            pairs, self._pairs = self._pairs, []
        for pair in pairs:
            for s in pair:
                _close(s)

    def stop(self) -> None:
        self._stopping.set()
        self._listener.close()
        self._thread.join(5)
        self.drop_all()


def _pump(src: socket.socket, dst: socket.socket, lose: threading.Event | None = None) -> None:
    try:
        while data := src.recv(65536):
            if lose is not None and lose.is_set():
                lose.clear()
                break
            dst.sendall(data)
    except OSError:
        pass
    _close(src)
    _close(dst)


def _close(s: socket.socket) -> None:
    try:
        s.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    s.close()


@contextmanager
def proxy_behind_forwarder(metastores) -> Iterator[tuple]:
    """(proxy server, forwarder): a real proxy whose primary is metastores[0] reached through a
    DroppingForwarder (it counts and can drop the connections the proxy makes)."""
    from hmsproxy.upstream.wire import parse_uri
    from tests.support.federation import prefixed_config
    from tests.support.served import served

    forwarder = DroppingForwarder(*parse_uri(metastores[0].uri))
    try:
        with served(prefixed_config(forwarder.uri, metastores[1].uri)) as server:
            yield server, forwarder
    finally:
        forwarder.stop()

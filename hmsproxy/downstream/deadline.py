"""One deadline for a client's whole handshake (TLS, then SASL): server.handshake-timeout-s.

A socket timeout bounds each wait, not their sum: a client that sends a byte of its SASL frames
just before each timeout would hold its thread for ever. `Deadline` gives every wait what is left
of one bound and raises `HandshakeTimeout` once it is spent.
"""

from __future__ import annotations

import socket
import time


class HandshakeTimeout(TimeoutError):
    """The client did not finish its handshake within the bound (an OSError: the connection is closed)."""


class Deadline:
    """`seconds` from now, for the waits of one client's handshake."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self._end = time.monotonic() + seconds

    def left(self) -> float:
        left = self._end - time.monotonic()
        if left <= 0:
            raise self.spent()
        return left

    def spent(self) -> HandshakeTimeout:
        return HandshakeTimeout(f"handshake not finished within {self.seconds:g} s")

    def bound(self, sock: socket.socket) -> DeadlineSocket:
        """`sock`'s recv/sendall within this deadline (for code that reads a socket, as SASL's accept)."""
        return DeadlineSocket(sock, self)


class DeadlineSocket:
    """recv and sendall of a socket, each waiting no longer than its deadline leaves."""

    def __init__(self, sock: socket.socket, deadline: Deadline):
        self._sock = sock
        self._deadline = deadline

    def recv(self, n: int) -> bytes:
        return self._within(self._sock.recv, n)

    def sendall(self, data: bytes) -> None:
        self._within(self._sock.sendall, data)

    def _within(self, operation, arg):
        self._sock.settimeout(self._deadline.left())
        try:
            return operation(arg)
        except TimeoutError as e:
            raise self._deadline.spent() from e

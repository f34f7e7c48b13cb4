"""Ending sockets other threads block on."""

from __future__ import annotations

import socket


def shut_down(sock: socket.socket) -> None:
    """Shut `sock` down both ways, so a thread blocked in its accept() or recv() returns; a socket
    already closed or never connected is left as it is."""
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass

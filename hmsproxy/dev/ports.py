"""Free TCP ports on the local machine, for dev metastores, proxies and tests."""

from __future__ import annotations

import socket


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free on ``host`` right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """``count`` distinct free ports (all sockets held until every port is picked)."""
    socks = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            socks.append(sock)
            sock.bind((host, 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for sock in socks:
            sock.close()


def port_is_free(port: int, host: str = "") -> bool:
    """Could a server listen on ``host:port`` now? (``""``: every interface, as Hive 2.3's metastore binds.)

    SO_REUSEADDR as the servers themselves set it (Python's create_server, Thrift's server socket):
    connections of a server stopped a moment ago, still in TIME_WAIT, don't make the port busy.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
            sock.listen(1)
        except OSError:
            return False
        return True

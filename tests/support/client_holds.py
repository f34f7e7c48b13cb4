"""What an in-process proxy holds for its clients: their threads and the sockets it tracks.

Tests that open many connections (idle ones, unfinished handshakes) compare it before and after.
"""

from __future__ import annotations

import threading
import time


def held(server) -> tuple[int, int]:
    """(client threads in this process, sockets `server` tracks): a thread per client is named client-HOST:PORT."""
    return sum(1 for t in threading.enumerate() if t.name.startswith("client-")), len(server._clients)


def settled(server, before: tuple[int, int], timeout_s: float = 30.0) -> tuple[int, int]:
    """held(server) once it is back to `before`, or as it is after `timeout_s` (threads end as their clients' closes arrive)."""
    deadline = time.monotonic() + timeout_s
    now = held(server)
    while now != before and time.monotonic() < deadline:
        time.sleep(0.1)
        now = held(server)
    return now

"""A quiet client holds no metastore connection: after `server.upstream-idle-s` without a call, its
session's metastore connections are closed.

Clients keep pools of connections that sit idle for hours (HiveServer2s, Trino coordinators, Spark
drivers); each would otherwise hold a connection, and a metastore thread, on every metastore it
ever called. The client's own thread does the closing, before it reads the next call, so nothing
else ever touches a connection a call is using. The next call opens a new one as after any
reconnect (Session._kept_or_new): the version probe, and `set_ugi` with the identity the client gave.
"""

from __future__ import annotations

import logging
import select

log = logging.getLogger(__name__)


class IdleUpstream:
    """For one client connection: `wait()` before reading its next call."""

    def __init__(self, session, client_sock, idle_s: float):
        self.session = session
        self._idle_ms = int(idle_s * 1000)
        self._poller = select.poll()
        self._poller.register(client_sock, select.POLLIN)
        # TLS and SASL sockets may hold bytes already read off the kernel's socket (framing.readable_now)
        self._pending = getattr(client_sock, "pending", None)

    def wait(self) -> None:
        """Return when the client's next bytes are there, or after the idle time with its metastore
        connections closed (then the read that follows blocks as ever). Nothing to wait for when none is
        open: one poll per call only while the client holds metastore connections."""
        if self._idle_ms <= 0 or not self.session.connections:
            return
        if (self._pending is not None and self._pending()) or self._poller.poll(self._idle_ms):
            return
        closed = self.session.close_connections()
        log.debug("client %s idle %d ms: closed its %d metastore connection(s)", self.session.client_address, self._idle_ms, closed)

"""Stopping on SIGTERM without failing a call: the order a load balancer and clients need.

1. /readyz answers 503 (`draining`) while everything is still served, for `server.drain-notice-s`:
   a load balancer's health checks (HAProxy, a Kubernetes readiness probe) stop sending new
   connections here before any is refused.
2. The listener closes. Idle client connections are closed at once, each busy one as soon as its
   call is answered (ProxyServer.drain): a client sees its connection closed between calls, so a
   client that reconnects and retries on a connection error (Hive's RetryingMetaStoreClient) loses
   nothing and no write runs twice.
3. After `server.drain-timeout-s` whatever is still open is cut; then the store, the metastore
   connections and the ops port close. A process still alive CLOSE_GRACE_S after that exits anyway
   (ExitDeadline; logged): `serve` exits within drain-notice-s + drain-timeout-s + CLOSE_GRACE_S + 0.5 s
   (the signal is seen within 0.5 s), whatever hangs.
"""

from __future__ import annotations

import logging
import os
import threading
import time

log = logging.getLogger(__name__)

#: Seconds closing may take after the drain before the process exits regardless.
CLOSE_GRACE_S = 5.0


class ExitDeadline:
    """Ends the process `seconds` after it is started, whatever is still running then: closing (status
    1: it did not finish) or, once `closed()` was called, the interpreter's own exit waiting on
    threads (status 0: everything was closed)."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self._closed = False
        self._timer = threading.Timer(seconds, self._give_up)
        self._timer.daemon = True
        self._timer.start()

    def closed(self) -> None:
        self._closed = True

    def cancel(self) -> None:
        self._timer.cancel()

    def _give_up(self) -> None:
        if self._closed:
            log.warning("closed, but the process still runs %g s after the signal: exiting now", self.seconds)
        else:
            log.error("still stopping %g s after the signal: exiting without finishing (status 1)", self.seconds)
        logging.shutdown()
        os._exit(0 if self._closed else 1)


def drain(server, draining: threading.Event, notice_s: float, timeout_s: float) -> int:
    """Run steps 1-3 above on `server` (a ProxyServer); returns how many client connections are still
    open (busy past the bound): the caller's ProxyServer.stop() then cuts them."""
    started = time.monotonic()
    draining.set()
    log.info("draining: /readyz fails now; the listener closes in %g s, then calls in flight get %g s", notice_s, timeout_s)
    time.sleep(notice_s)
    before = server.open_connections
    left = server.drain(timeout_s)
    took = time.monotonic() - started
    if left:
        log.warning("drained in %.1f s: %d of %d client connections still busy after %g s are cut", took, left, before, timeout_s)
    else:
        log.info("drained in %.1f s: %d client connection(s) closed between calls", took, before)
    return left

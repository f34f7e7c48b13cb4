"""Stopping on SIGTERM without failing a call: the order a load balancer and clients need.

1. /readyz answers 503 (`draining`) while everything is still served, for `server.drain-notice-s`:
   a load balancer's health checks (HAProxy, a Kubernetes readiness probe) stop sending new
   connections here before any is refused.
2. The listener closes. Idle client connections are closed at once, each busy one as soon as its
   call is answered (ProxyServer.drain): a client sees its connection closed between calls, so a
   client that reconnects and retries on a connection error (Hive's RetryingMetaStoreClient) loses
   nothing and no write runs twice.
3. After `server.drain-timeout-s` whatever is still open is cut; `serve` exits within
   drain-notice-s + drain-timeout-s + about 1 s (the ops port and the store closing).
"""

from __future__ import annotations

import logging
import threading
import time

log = logging.getLogger(__name__)


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

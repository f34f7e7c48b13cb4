"""Bindings of finished transactions go, once nobody can mean them any more.

A binding outlives its transaction's commit or abort on purpose: a client that commits twice, or
heartbeats an aborted transaction, must hear what its metastore says (TxnAbortedException with its
id), not what the primary says of the empty transaction it once was. A binding older than
`KEEP_S` whose transaction its metastore no longer lists as open is dropped; the sweep runs in the
background at most every `EVERY_S`, started by a call, so an idle proxy does nothing.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict
from collections.abc import Callable

from hmsproxy.features.transactions.bindings import Bindings
from hmsproxy.protocol import idl
from hmsproxy.upstream.wire import BackendUnavailable

log = logging.getLogger(__name__)

KEEP_S = 3600.0
EVERY_S = 600.0

#: open_txn_ids(metastore) -> the real ids of its transactions still open (raises when it can't tell).
OpenTxnIds = Callable[[str], set]


class Sweep:
    def __init__(self, bindings: Bindings, open_txn_ids: OpenTxnIds, submit: Callable, *, keep_s: float = KEEP_S, every_s: float = EVERY_S):
        self.bindings = bindings
        self.open_txn_ids = open_txn_ids
        self.submit = submit
        self.keep_s, self.every_s = keep_s, every_s
        self._next = time.monotonic() + every_s
        self._lock = threading.Lock()

    def maybe(self) -> None:
        """Start a sweep in the background if one is due (cheap: called on transaction calls)."""
        now = time.monotonic()
        if now < self._next:
            return
        with self._lock:
            if now < self._next:
                return
            self._next = now + self.every_s
        self.submit(self.run)

    def run(self) -> int:
        """Drop the bindings no transaction needs any more; returns how many went."""
        by_metastore: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for proxy, place in self.bindings.repo.bound_before(time.time() - self.keep_s):
            by_metastore[place.metastore].append((proxy, place.real))
        gone = []
        for metastore, pairs in by_metastore.items():
            try:
                still_open = self.open_txn_ids(metastore)
            except (BackendUnavailable, KeyError) as e:  # down, or no longer configured: ask next time
                log.info("transaction bindings on metastore '%s' kept: %s", metastore, e)
                continue
            gone += [proxy for proxy, real in pairs if real not in still_open]
        self.bindings.forget(gone)
        if gone:
            log.info("dropped %d bindings of finished transactions", len(gone))
        return len(gone)


def open_ids(answer: idl.hive.GetOpenTxnsInfoResponse) -> set[int]:
    return {t.id for t in answer.open_txns or [] if t.state == idl.hive.TxnState.OPEN}

"""Shortcut hits answered in C whose on_complete hooks have not run yet (downstream/hits.py).

The hit loop appends one record per hit it answered; the hooks run for a batch of them at once,
on whichever thread asks first: the client's (after HIT_BATCH hits, when the client is quiet, when
its loop returns) or a metrics scrape (platform.Platform.complete_answered), so a scrape counts
every call answered before it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from hmsproxy.pipeline.call import Call
from hmsproxy.protocol.relay import outcome


class AnsweredHits:
    def __init__(self, completed: Callable[[Call], None]):
        #: (spec, session, shortcut, seconds, message type, the body when not the success value):
        #: appended by HitLoop.serve (_hits.c) under the GIL, taken here.
        self.pending: list[tuple] = []
        self._completed = completed
        self._taking = threading.Lock()

    def complete(self) -> None:
        """Run the on_complete hooks of the hits answered so far."""
        if not self.pending:
            return
        with self._taking:  # the loop appends meanwhile: only what was taken goes
            taken = self.pending[:]
            del self.pending[: len(taken)]
        for spec, session, shortcut, seconds, mtype, body in taken:
            call = Call(session, spec, None, shortcut.router)
            call.client_db, call.table, call.backend = shortcut.client_db, shortcut.table, shortcut.plan.metastore.name
            if body is not None:
                call.outcome, call.error = outcome(spec.result_cls, mtype, body)
            call.elapsed_s = seconds
            self._completed(call)

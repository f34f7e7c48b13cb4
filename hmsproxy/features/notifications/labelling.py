"""Labels for the events merged before the store kept them (store version 1 of the component): each
fetched from its metastore once, so that counts and filters see the whole log.

Since version 2 an event is labelled when it is merged; only an older log has a backlog. It is
labelled before the first count or filtered request is answered, a page at a time, at most
MAX_PAGES per request. An event its metastore no longer has (its own retention) gets an empty type:
no filter or count includes it, as Hive counts only what its log still holds. The events of a
metastore that is down stay unlabelled until it answers: counts leave them out meanwhile, filtered
requests test them when fetched.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from typing import TYPE_CHECKING

from hmsproxy.features.notifications.model import BATCH, Label
from hmsproxy.features.notifications.serving import events_by_id
from hmsproxy.upstream.wire import BackendUnavailable

if TYPE_CHECKING:
    from hmsproxy.features.notifications.store import NotificationLog
    from hmsproxy.routing.router import Router
    from hmsproxy.upstream.session import Session

log = logging.getLogger(__name__)

#: Pages labelled for one request, at most (the rest on the next).
MAX_PAGES = 10


class Labeller:
    def __init__(self, log_: NotificationLog):
        self.log = log_
        #: Set once the backlog is found empty: new events are labelled as they are merged.
        self.done = False

    def catch_up(self, session: Session, router: Router) -> None:
        if self.done:
            return
        for _ in range(MAX_PAGES):
            page = self.log.unlabelled(BATCH)
            if not page:
                self.done = True
                return
            by_metastore: dict[str, list] = defaultdict(list)
            for m in page:
                by_metastore[m.metastore].append(m)
            labelled, waiting = [], False
            for name, merged in by_metastore.items():
                found = self._fetched(session, router, name, [m.backend_id for m in merged])
                if found is None:
                    waiting = True
                    continue
                labelled += [(m.proxy_id, found.get(m.backend_id) or Label(m.backend_id, "")) for m in merged]
            self.log.label(labelled)
            if waiting:  # the rest waits for that metastore; the same page would come back first
                return

    @staticmethod
    def _fetched(session: Session, router: Router, name: str, ids: list[int]) -> dict[int, Label] | None:
        """Labels of these events of metastore `name` by its ids; None while it can't answer."""
        naming = router.by_name.get(name)
        if naming is None:  # no longer in the config: its events are never served
            return {}
        try:
            return {e.eventId: Label.of(e) for e in events_by_id(session, naming, ids)}
        except BackendUnavailable as e:
            log.info("notifications: '%s' is unavailable, its older events stay unlabelled for now: %s", name, e)
            return None

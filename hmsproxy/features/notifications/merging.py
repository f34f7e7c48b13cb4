"""Pulling each metastore's new events into the merged log, before a notification call is answered.

For every metastore of the federation, in config order: its current event id, then its events after
its mark, in pages of at most BATCH, each page appended in one store transaction (store.py). Within a
metastore its order is kept; across metastores the log is in order of arrival. Events the federation
does not show are passed over (the mark moves past them, no proxy id is spent), so the ids a client
receives are dense, as Hive's client checks. A metastore that is down is skipped: the merged log moves
on without it, and its events are appended, none lost, once it answers again.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from thriftpy2.thrift import TApplicationException

from hmsproxy.features.notifications.model import BATCH, Label, Pulled
from hmsproxy.features.notifications.txn_events import DATABASELESS, TXN_EVENTS, decide
from hmsproxy.protocol import idl
from hmsproxy.upstream.wire import BackendUnavailable

if TYPE_CHECKING:
    from hmsproxy.features.notifications.store import NotificationLog
    from hmsproxy.routing.naming import MetastoreNaming
    from hmsproxy.routing.router import Router
    from hmsproxy.upstream.session import Session

log = logging.getLogger(__name__)
hive = idl.hive
P = idl.HmsProxy

#: Pages read from one metastore in one pull, at most (a pull that falls this far behind goes on next time).
MAX_PAGES = 100


class Merger:
    def __init__(self, log_: NotificationLog):
        self.log = log_
        #: One pull at a time in this process (other proxies are kept in step by the store).
        self._pulling = threading.Lock()

    def pull(self, session: Session, router: Router, transactions=None) -> None:
        """`transactions`: the transactions feature, whose bindings give members' transaction events
        the ids clients hold (txn_events.py); None passes those events over."""
        with self._pulling:
            for naming in router.namings:
                try:
                    self._pull_one(session, router, naming, transactions)
                except BackendUnavailable as e:
                    log.info("notifications: '%s' is unavailable, the merged log goes on without it: %s", naming.name, e)
                except TApplicationException as e:
                    log.warning("notifications: '%s' did not give its events: %s", naming.name, e)

    def _pull_one(self, session: Session, router: Router, naming: MetastoreNaming, transactions) -> None:
        metastore = naming.metastore
        current = session.call(metastore, "get_current_notificationEventId", P.get_current_notificationEventId_args(), read_only=True)
        current_id = current.success.eventId
        mark = self.log.mark(naming.name)
        if mark is None:  # the merged log begins now for this metastore; its history is not merged
            self.log.start(naming.name, current_id)
            return
        if current_id < mark:
            log.warning(
                "notifications: '%s' went back from event %d to %d (a new database?): nothing merged until it passes %d",
                naming.name, mark, current_id, mark,
            )  # fmt: skip
            return
        for _ in range(MAX_PAGES):
            if mark >= current_id:
                return
            request = hive.NotificationEventRequest(lastEvent=mark, maxEvents=BATCH)
            events = session.call(metastore, "get_next_notification", P.get_next_notification_args(rqst=request), read_only=True)
            events = events.success.events or []
            if not events:
                return
            txns = decide(transactions, naming.name, router.primary.name, events)
            shown = tuple(Label.of(e) for e in events if self._shown(router, naming, e, txns))
            page = Pulled(shown, events[-1].eventId, txns.client_ids if txns is not None else {})
            if not self.log.append(naming.name, mark, page):
                log.debug("notifications: another proxy merged '%s' first; reading its mark again", naming.name)
            mark = self.log.mark(naming.name)

    @staticmethod
    def _shown(router: Router, naming: MetastoreNaming, event, txns) -> bool:
        primary = naming is router.primary
        if event.eventType in TXN_EVENTS:
            if txns is None or event.eventId in txns.passed_over:
                return False
            if event.eventType in DATABASELESS:
                return True
        if not event.dbName:  # an event of no database: only the primary's mean anything to clients
            return primary
        if router.client_name(naming, event.dbName) is None:
            return False
        return not event.tableName or naming.table_visible(event.dbName, event.tableName)

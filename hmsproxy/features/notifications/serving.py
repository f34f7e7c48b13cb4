"""The notification calls answered from the merged log: each event fetched from its metastore by its
own id, with the proxy's id, the federation's names and (members' transaction events) the
transaction ids clients hold, as merged; a request's filters (filters.py) applied to
the log's labels in the store, so a filtered page is read as one query, and tested again on each
event fetched (events merged before labels were kept may have none yet)."""

from __future__ import annotations

import copy
import logging
from collections import defaultdict
from typing import TYPE_CHECKING

from hmsproxy.features.notifications.messages import rewrite_message
from hmsproxy.features.notifications.model import BATCH, NO_FILTER, Label, LogFilter, Merged
from hmsproxy.features.notifications.txn_events import DATABASELESS
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


def next_events(
    log_: NotificationLog, session: Session, router: Router, last: int, max_events: int | None, where: LogFilter = NO_FILTER
) -> list:
    """The events after proxy id `last` that `where` accepts (at most `max_events`; all without a
    positive one, as Hive), read from the store and the metastores a page at a time."""
    wanted = max_events if max_events and max_events > 0 else None
    out: list = []
    while wanted is None or len(out) < wanted:
        size = BATCH if wanted is None else min(BATCH, wanted - len(out))
        page = log_.after(last, size) if where.empty else log_.after_filtered(last, size, where)
        if not page:
            break
        events, whole = _fetched(log_, session, router, page, where)
        out += events
        if not whole:
            break
        last = page[-1].proxy_id
    return out


def _fetched(log_: NotificationLog, session: Session, router: Router, page: list[Merged], where: LogFilter) -> tuple[list, bool]:
    """`page`'s events as clients see them, in proxy-id order, and whether the page was served whole.

    An event whose metastore can't answer now ends the answer before it (False): the consumer gets
    fewer events, no hole, and the rest when it asks again after the metastore is back. An event the
    metastore answered without (its own retention deleted it) is left out: the consumer sees the hole,
    as it would behind Hive itself."""
    by_metastore: dict[str, list[int]] = defaultdict(list)
    for m in page:
        by_metastore[m.metastore].append(m.backend_id)
    found: dict[tuple[str, int], object] = {}
    down: set[str] = set()
    for name, ids in by_metastore.items():
        naming = router.by_name.get(name)
        if naming is None:  # a metastore no longer in the config: its events are gone from the log
            continue
        try:
            for event in events_by_id(session, naming, ids):
                found[(name, event.eventId)] = event
        except BackendUnavailable as e:
            log.info("notifications: events of '%s' unavailable now, the answer stops before them: %s", name, e)
            down.add(name)
    out = []
    txns = log_.client_txn_ids([m.proxy_id for m in page if m.metastore != router.primary.name])
    for m in page:
        if m.metastore in down:
            return out, False
        event = found.get((m.metastore, m.backend_id))
        if event is not None and where.accepts(m.metastore, Label.of(event)):
            out.append(_as_client_sees(router, router.by_name[m.metastore], event, m.proxy_id, txns.get(m.proxy_id)))
    return out, True


def events_by_id(session: Session, naming: MetastoreNaming, ids: list[int]):
    """The events of `naming`'s metastore with these ids (ascending), read in pages from the first."""
    wanted, last, end = set(ids), ids[0] - 1, ids[-1]
    while last < end:
        request = hive.NotificationEventRequest(lastEvent=last, maxEvents=min(BATCH, end - last))
        answer = session.call(naming.metastore, "get_next_notification", P.get_next_notification_args(rqst=request), read_only=True)
        events = answer.success.events or []
        if not events:
            return
        for event in events:
            if event.eventId in wanted:
                yield event
        last = events[-1].eventId


def _as_client_sees(router: Router, naming: MetastoreNaming, event, proxy_id: int, txns: dict[int, int] | None = None):
    def rename(backend_db: str) -> str:
        return router.client_name(naming, backend_db) or naming.to_client(backend_db)

    shown = copy.copy(event)
    shown.eventId = proxy_id
    if event.dbName and event.eventType not in DATABASELESS:
        shown.dbName = rename(event.dbName)
    # A metastore whose names clients see as they are (a PREFIXED primary) has nothing to rename, and
    # only members' transaction events carry ids to translate (txns).
    if not naming.identity or txns:
        shown.message = rewrite_message(event.message, event.messageFormat, rename, txns)
    return shown

"""A client's notification filters (Hive 4's NotificationEventRequest fields 3-6, and
NotificationEventsCountRequest of Hive 3.0+) in the merged log's terms: the database named as the
federation shows it becomes (its metastore, that metastore's own name for it); names compare in
lower case, as the metastore stores them.

A request that can match nothing (a database the federation does not show, a catalog other than the
federation's one) gives None: no event, a count of 0, as Hive answers for a database without events.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hmsproxy.features.notifications.model import LogFilter
from hmsproxy.routing.default_catalog import DEFAULT_CATALOG
from hmsproxy.routing.router import UnknownDatabase

if TYPE_CHECKING:
    from hmsproxy.routing.router import Router


def of_events_request(router: Router, rqst) -> LogFilter | None:
    """NotificationEventRequest's filters; LogFilter() when it has none (Hive 2.3 and 3.1 requests)."""
    return _filter(router, rqst.catName, rqst.dbName, rqst.tableNames, skip_types=rqst.eventTypeSkipList)


def of_count_request(router: Router, rqst) -> LogFilter | None:
    """NotificationEventsCountRequest's filters (its database is required; toEventId is Hive 4's)."""
    return _filter(router, rqst.catName, rqst.dbName or "", rqst.tableNames, to_id=rqst.toEventId)


def _filter(router: Router, catalog, db, tables, *, skip_types=None, to_id=None) -> LogFilter | None:
    if catalog and catalog.lower() != DEFAULT_CATALOG:
        return None
    where = None
    if db is not None:
        try:
            route = router.route(db.lower())
        except UnknownDatabase:
            return None
        where = (route.naming.name, route.backend_db.lower())
    return LogFilter(
        db=where,
        tables=frozenset(t.lower() for t in tables) if tables else None,  # an empty list filters nothing, as in Hive
        skip_types=frozenset(skip_types or ()),
        to_id=to_id,
    )

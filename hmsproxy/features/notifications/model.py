"""The words the merged log's parts share."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

#: Events asked of a metastore per call, and rows appended per store transaction (Impala's batch size).
BATCH = 1000


@dataclass(frozen=True)
class Merged:
    """One event of the merged log: the proxy's id and where the event really is."""

    proxy_id: int
    metastore: str
    backend_id: int


@dataclass(frozen=True)
class Label:
    """What the filters and counts look at in a merged event, kept in the store beside its id: its
    metastore's id, its type, and its database and table as the metastore names them (lower case)."""

    backend_id: int
    event_type: str
    db: str | None = None
    table: str | None = None

    @classmethod
    def of(cls, event) -> Label:
        return cls(event.eventId, event.eventType or "", _lower(event.dbName), _lower(event.tableName))


def _lower(name: str | None) -> str | None:
    return name.lower() if name else None


@dataclass(frozen=True)
class Pulled:
    """A page read from one metastore after its mark: the events the federation shows, and the page's last
    id (the new mark: events hidden from clients move it too, so they are never read again)."""

    shown: tuple[Label, ...]
    last: int
    #: For shown transaction events of a member, by its event id: real txn id -> the client's (txn_events.py).
    txn_ids: Mapping[int, Mapping[int, int]] = field(default_factory=dict)


@dataclass(frozen=True)
class LogFilter:
    """A request's filters, in the metastores' terms (Hive 4's NotificationEventRequest and
    NotificationEventsCountRequest): events of one database (metastore, its own name for it), of
    these tables, not of these types, up to a proxy id."""

    db: tuple[str, str] | None = None
    tables: frozenset[str] | None = None
    skip_types: frozenset[str] = frozenset()
    to_id: int | None = None

    @property
    def empty(self) -> bool:
        return self == LogFilter()

    def accepts(self, metastore: str, label: Label) -> bool:
        """The same test as the store's query, for an event fetched from its metastore."""
        if label.event_type in self.skip_types:
            return False
        if self.db is not None and (metastore, label.db) != self.db:
            return False
        return self.tables is None or label.table in self.tables


#: A request without filters (Hive 2.3's and 3.1's).
NO_FILTER = LogFilter()

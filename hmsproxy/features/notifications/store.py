"""The merged notification log as the store keeps it: the `notifications` component.

Two tables: the log (proxy id -> metastore and its event id, both unique) and each metastore's
high-water mark (the last of its event ids merged or passed over). Every proxy on one store appends
to the same log, so they hand out the same id for the same event, and a restarted proxy goes on where
the log ends. An append is one transaction per batch that checks the mark it started from: a proxy
that lost a race (the mark moved, or an id it chose was taken) appends nothing and re-reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import BigInteger, Column, Connection, MetaData, String, Table, UniqueConstraint, func, select, text, update
from sqlalchemy.exc import IntegrityError

from hmsproxy.features.notifications.model import Merged, Pulled
from hmsproxy.store.schema import StoreSchema

if TYPE_CHECKING:
    from hmsproxy.store.db import Store

COMPONENT = "notifications"

metadata = MetaData()

log_table = Table(
    "hmsproxy_notif_log",
    metadata,
    Column("proxy_id", BigInteger, primary_key=True, autoincrement=False),
    Column("metastore", String(256), nullable=False),
    Column("backend_id", BigInteger, nullable=False),
    UniqueConstraint("metastore", "backend_id", name="hmsproxy_notif_log_event"),
)

marks = Table(
    "hmsproxy_notif_marks",
    metadata,
    Column("metastore", String(256), primary_key=True),
    Column("last_backend_id", BigInteger, nullable=False),
)


def _m001_log(conn: Connection) -> None:
    log_table.create(conn)
    marks.create(conn)


#: Append-only: never edit or reorder a released migration.
NOTIFICATIONS_SCHEMA = StoreSchema(COMPONENT, (_m001_log,))

#: On PostgreSQL appenders take turns (held until commit): each numbers its batch from max + 1, which
#: concurrent transactions would pick alike. SQLite's writers queue already (BEGIN IMMEDIATE).
_APPENDERS_TAKE_TURNS = text("SELECT pg_advisory_xact_lock(hashtext('hmsproxy.notifications.append'))")


class NotificationLog:
    def __init__(self, store: Store):
        if COMPONENT not in store.components:
            raise ValueError(f"{store!r} was opened without NOTIFICATIONS_SCHEMA")
        self._store = store

    def mark(self, metastore: str) -> int | None:
        """The last event id of `metastore` merged or passed over; None before its first pull."""
        with self._store.reading() as conn:
            return conn.execute(select(marks.c.last_backend_id).where(marks.c.metastore == metastore)).scalar()

    def start(self, metastore: str, backend_id: int) -> None:
        """Begin following `metastore` after `backend_id` (its log before that is not merged), unless
        another proxy began already."""
        try:
            with self._store.writing() as conn:
                if conn.execute(select(marks.c.metastore).where(marks.c.metastore == metastore)).first() is None:
                    conn.execute(marks.insert().values(metastore=metastore, last_backend_id=backend_id))
        except IntegrityError:  # another proxy began at the same moment: its start stands
            pass

    def append(self, metastore: str, after: int, page: Pulled) -> bool:
        """Append the shown events of `page`, read after mark `after`, and move the mark to its last id,
        in one transaction. False when another proxy moved the mark first (nothing is written: re-read)."""
        try:
            with self._store.writing() as conn:
                if self._store.dialect == "postgresql":
                    conn.execute(_APPENDERS_TAKE_TURNS)
                moved = conn.execute(
                    update(marks).where(marks.c.metastore == metastore, marks.c.last_backend_id == after).values(last_backend_id=page.last)
                ).rowcount
                if moved != 1:
                    return False
                if page.shown:
                    first = (conn.execute(select(func.max(log_table.c.proxy_id))).scalar() or 0) + 1
                    conn.execute(
                        log_table.insert(),
                        [{"proxy_id": first + i, "metastore": metastore, "backend_id": b} for i, b in enumerate(page.shown)],
                    )
            return True
        except IntegrityError:  # an id taken meanwhile: the transaction rolled back, the caller re-reads
            return False

    def current(self) -> int:
        """The last proxy id handed out (0 for an empty log)."""
        with self._store.reading() as conn:
            return conn.execute(select(func.max(log_table.c.proxy_id))).scalar() or 0

    def after(self, last: int, limit: int) -> list[Merged]:
        """At most `limit` events with proxy ids above `last`, in order."""
        query = select(log_table).where(log_table.c.proxy_id > last).order_by(log_table.c.proxy_id).limit(limit)
        with self._store.reading() as conn:
            return [Merged(r.proxy_id, r.metastore, r.backend_id) for r in conn.execute(query)]

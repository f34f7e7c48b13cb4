"""The merged notification log as the store keeps it: the `notifications` component.

Four tables: the log (proxy id -> metastore and its event id, both unique), each metastore's
high-water mark (the last of its event ids merged or passed over), and each event's label (type,
database, table: what Hive 4's filters and `get_notification_events_count` look at), written with
the log row since store version 2, and (version 3) the client's transaction ids inside members'
transaction events. Every proxy on one store appends
to the same log, so they hand out the same id for the same event, and a restarted proxy goes on where
the log ends. An append is one transaction per batch that checks the mark it started from: a proxy
that lost a race (the mark moved, or an id it chose was taken) appends nothing and re-reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import (
    BigInteger,
    Column,
    Connection,
    Index,
    MetaData,
    String,
    Table,
    UniqueConstraint,
    and_,
    func,
    or_,
    select,
    text,
    update,
)
from sqlalchemy.exc import IntegrityError

from hmsproxy.features.notifications.model import Label, LogFilter, Merged, Pulled
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


#: What filters and counts read of each event (model.Label), one row per proxy id. Rows merged before
#: this table existed have none until the merger labels them (merging.py, fetched from their metastore).
labels = Table(
    "hmsproxy_notif_labels",
    metadata,
    Column("proxy_id", BigInteger, primary_key=True, autoincrement=False),
    Column("event_type", String(256), nullable=False),
    Column("db_name", String(256)),
    Column("table_name", String(256)),
    Index("hmsproxy_notif_labels_db", "db_name", "proxy_id"),
)


#: The client's transaction ids inside a member's transaction events (txn_events.py), decided when
#: merged so an event reads the same for ever: (proxy id, the metastore's real id) -> the client's id.
txn_ids = Table(
    "hmsproxy_notif_txn_ids",
    metadata,
    Column("proxy_id", BigInteger, primary_key=True, autoincrement=False),
    Column("real_txn", BigInteger, primary_key=True, autoincrement=False),
    Column("client_txn", BigInteger, nullable=False),
)


def _m001_log(conn: Connection) -> None:
    log_table.create(conn)
    marks.create(conn)


def _m002_labels(conn: Connection) -> None:
    labels.create(conn)


def _m003_txn_ids(conn: Connection) -> None:
    txn_ids.create(conn)


#: Append-only: never edit or reorder a released migration.
NOTIFICATIONS_SCHEMA = StoreSchema(COMPONENT, (_m001_log, _m002_labels, _m003_txn_ids))

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
                        [{"proxy_id": first + i, "metastore": metastore, "backend_id": s.backend_id} for i, s in enumerate(page.shown)],
                    )
                    conn.execute(labels.insert(), [_label_row(first + i, s) for i, s in enumerate(page.shown)])
                    rows = [
                        {"proxy_id": first + i, "real_txn": real, "client_txn": client}
                        for i, s in enumerate(page.shown)
                        for real, client in page.txn_ids.get(s.backend_id, {}).items()
                    ]
                    if rows:
                        conn.execute(txn_ids.insert(), rows)
            return True
        except IntegrityError:  # an id taken meanwhile: the transaction rolled back, the caller re-reads
            return False

    def client_txn_ids(self, proxy_ids: list[int]) -> dict[int, dict[int, int]]:
        """proxy id -> (real txn id -> the client's), for those of `proxy_ids` that name transactions."""
        found: dict[int, dict[int, int]] = {}
        with self._store.reading() as conn:
            for i in range(0, len(proxy_ids), 500):  # bounded IN lists
                rows = conn.execute(select(txn_ids).where(txn_ids.c.proxy_id.in_(proxy_ids[i : i + 500])))
                for r in rows:
                    found.setdefault(r.proxy_id, {})[r.real_txn] = r.client_txn
        return found

    def current(self) -> int:
        """The last proxy id handed out (0 for an empty log)."""
        with self._store.reading() as conn:
            return conn.execute(select(func.max(log_table.c.proxy_id))).scalar() or 0

    def after(self, last: int, limit: int) -> list[Merged]:
        """At most `limit` events with proxy ids above `last`, in order."""
        query = select(log_table).where(log_table.c.proxy_id > last).order_by(log_table.c.proxy_id).limit(limit)
        with self._store.reading() as conn:
            return [Merged(r.proxy_id, r.metastore, r.backend_id) for r in conn.execute(query)]

    def unlabelled(self, limit: int) -> list[Merged]:
        """At most `limit` events merged before labels were kept (store version 1), oldest first."""
        query = (
            select(log_table)
            .outerjoin(labels, labels.c.proxy_id == log_table.c.proxy_id)
            .where(labels.c.proxy_id.is_(None))
            .order_by(log_table.c.proxy_id)
            .limit(limit)
        )
        with self._store.reading() as conn:
            return [Merged(r.proxy_id, r.metastore, r.backend_id) for r in conn.execute(query)]

    def label(self, labelled: list[tuple[int, Label]]) -> bool:
        """Record these (proxy id, label) pairs in one transaction; False when another proxy labelled
        some of them first (nothing written here: theirs stand)."""
        if not labelled:
            return True
        try:
            with self._store.writing() as conn:
                conn.execute(labels.insert(), [_label_row(proxy_id, label) for proxy_id, label in labelled])
            return True
        except IntegrityError:
            return False

    def after_filtered(self, last: int, limit: int, where: LogFilter) -> list[Merged]:
        """At most `limit` events above `last` that `where` may accept, in order. Events without a label
        (their metastore was down when the merger labelled) are included: the caller tests them when
        fetched."""
        query = (
            select(log_table)
            .outerjoin(labels, labels.c.proxy_id == log_table.c.proxy_id)
            .where(log_table.c.proxy_id > last, or_(labels.c.proxy_id.is_(None), _matching(where)))
            .order_by(log_table.c.proxy_id)
            .limit(limit)
        )
        with self._store.reading() as conn:
            return [Merged(r.proxy_id, r.metastore, r.backend_id) for r in conn.execute(query)]

    def count(self, after: int, where: LogFilter) -> int:
        """How many labelled events above `after` `where` accepts."""
        query = (
            select(func.count())
            .select_from(log_table.join(labels, labels.c.proxy_id == log_table.c.proxy_id))
            .where(log_table.c.proxy_id > after, _matching(where))
        )
        with self._store.reading() as conn:
            return conn.execute(query).scalar() or 0


def _label_row(proxy_id: int, label: Label) -> dict:
    return {"proxy_id": proxy_id, "event_type": label.event_type, "db_name": label.db, "table_name": label.table}


def _matching(where: LogFilter):
    """`where` as a condition on the log joined with its labels."""
    conditions = []
    if where.to_id is not None:
        conditions.append(log_table.c.proxy_id <= where.to_id)
    if where.skip_types:
        conditions.append(labels.c.event_type.not_in(sorted(where.skip_types)))
    if where.db is not None:
        conditions += [log_table.c.metastore == where.db[0], labels.c.db_name == where.db[1]]
    if where.tables is not None:
        conditions.append(labels.c.table_name.in_(sorted(where.tables)))
    return and_(True, *conditions)

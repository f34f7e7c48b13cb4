"""Bindings of transactions and slots of metastores, as the store keeps them: the `transactions` component.

Every proxy process on one store (``--workers``, several proxies on one PostgreSQL) reads and
writes the same rows, so an id handed out by one is understood by all, and by a restarted one.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

from sqlalchemy import (
    BigInteger,
    Column,
    Connection,
    Float,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    delete,
    func,
    select,
)
from sqlalchemy.exc import IntegrityError

from hmsproxy.features.transactions.ids import MAX_SLOT, Place
from hmsproxy.store.schema import StoreSchema

if TYPE_CHECKING:
    from hmsproxy.store.db import Store

COMPONENT = "transactions"

metadata = MetaData()

#: A small number per metastore name, given once: the high bits of its encoded ids (ids.py). 0 is the primary's.
slots = Table(
    "hmsproxy_txn_slots",
    metadata,
    Column("metastore", String(256), primary_key=True),
    Column("slot", Integer, nullable=False, unique=True),
)

#: Transactions (by the primary that gave the id and the id the client holds) bound to a metastore other
#: than the primary, or to the primary once they named a database there (so they can't cross to another).
#: Keyed by the primary too: after the primary changes (a reload, another proxy's config), its ids start
#: again, and an old binding must not take a new primary's transaction elsewhere.
bindings = Table(
    "hmsproxy_txn_bindings",
    metadata,
    Column("primary_name", String(256), nullable=False),
    Column("proxy_txn", BigInteger, nullable=False, autoincrement=False),
    Column("metastore", String(256), nullable=False),
    Column("real_txn", BigInteger, nullable=False),
    Column("bound_at", Float, nullable=False),
    PrimaryKeyConstraint("primary_name", "proxy_txn"),
    Index("hmsproxy_txn_bindings_real", "primary_name", "metastore", "real_txn"),
)


def _m001_bindings(conn: Connection) -> None:
    slots.create(conn)
    bindings.create(conn)


#: Append-only: never edit or reorder a released migration.
TRANSACTIONS_SCHEMA = StoreSchema(COMPONENT, (_m001_bindings,))


class TxnRepository:
    def __init__(self, store: Store):
        if COMPONENT not in store.components:
            raise ValueError(f"{store!r} was opened without TRANSACTIONS_SCHEMA")
        self._store = store

    # -- slots ---------------------------------------------------------------------------

    def slots(self) -> dict[str, int]:
        with self._store.reading() as conn:
            return {row.metastore: row.slot for row in conn.execute(select(slots))}

    def slot_for(self, metastore: str) -> int:
        """The metastore's slot, given now if it has none (the first free number above 0)."""
        for _ in range(20):  # another process may take the same number first: try the next
            with self._store.reading() as conn:
                found = conn.execute(select(slots.c.slot).where(slots.c.metastore == metastore)).scalar()
                if found is not None:
                    return found
                highest = conn.execute(select(func.max(slots.c.slot))).scalar() or 0
            if highest >= MAX_SLOT:
                raise ValueError(f"no slot left for metastore '{metastore}'")
            try:
                with self._store.writing() as conn:
                    conn.execute(slots.insert().values(metastore=metastore, slot=highest + 1))
                return highest + 1
            except IntegrityError:
                continue
        raise RuntimeError(f"could not give metastore '{metastore}' a slot")

    # -- bindings ------------------------------------------------------------------------

    def binding(self, primary: str, proxy_txn: int) -> Place | None:
        with self._store.reading() as conn:
            row = conn.execute(select(bindings).where(bindings.c.primary_name == primary, bindings.c.proxy_txn == proxy_txn)).first()
        return None if row is None else Place(row.metastore, row.real_txn)

    def bindings_between(self, primary: str, low: int, high: int) -> dict[int, Place]:
        """proxy id -> place, for the primary's bound transactions in [low, high]."""
        c = bindings.c
        with self._store.reading() as conn:
            rows = conn.execute(select(bindings).where(c.primary_name == primary, c.proxy_txn >= low, c.proxy_txn <= high))
            return {row.proxy_txn: Place(row.metastore, row.real_txn) for row in rows}

    def bindings_of(self, primary: str, proxy_txns: Iterable[int]) -> dict[int, Place]:
        """proxy id -> place, for those of `proxy_txns` that are bound."""
        wanted = sorted(set(proxy_txns))
        found: dict[int, Place] = {}
        c = bindings.c
        with self._store.reading() as conn:
            for i in range(0, len(wanted), 500):  # bounded IN lists
                rows = conn.execute(select(bindings).where(c.primary_name == primary, c.proxy_txn.in_(wanted[i : i + 500])))
                found.update({row.proxy_txn: Place(row.metastore, row.real_txn) for row in rows})
        return found

    def bind(self, primary: str, proxy_txn: int, place: Place) -> Place:
        """Record the binding; if another process bound this transaction first, its binding (the winner)."""
        values = dict(primary_name=primary, proxy_txn=proxy_txn, metastore=place.metastore, real_txn=place.real, bound_at=time.time())
        try:
            with self._store.writing() as conn:
                conn.execute(bindings.insert().values(**values))
            return place
        except IntegrityError:
            won = self.binding(primary, proxy_txn)
            if won is None:  # bound and already swept by the winner: ours stands alone
                raise
            return won

    def proxy_ids(self, primary: str, metastore: str, reals: Iterable[int]) -> dict[int, int]:
        """real id -> the proxy id a client holds, for those of `reals` bound on `metastore`."""
        wanted = list(set(reals))
        found: dict[int, int] = {}
        c = bindings.c
        with self._store.reading() as conn:
            for i in range(0, len(wanted), 500):  # bounded IN lists
                part = wanted[i : i + 500]
                rows = conn.execute(select(bindings).where(c.primary_name == primary, c.metastore == metastore, c.real_txn.in_(part)))
                found.update({row.real_txn: row.proxy_txn for row in rows})
        return found

    def unbind(self, primary: str, proxy_txns: Iterable[int]) -> None:
        ids = list(proxy_txns)
        if not ids:
            return
        with self._store.writing() as conn:
            conn.execute(delete(bindings).where(bindings.c.primary_name == primary, bindings.c.proxy_txn.in_(ids)))

    def bound_before(self, when: float) -> list[tuple[str, int, Place]]:
        """(primary, proxy id, place) of bindings made before `when` (at most 10,000 a time)."""
        with self._store.reading() as conn:
            rows = conn.execute(select(bindings).where(bindings.c.bound_at < when).order_by(bindings.c.proxy_txn).limit(10_000))
            return [(row.primary_name, row.proxy_txn, Place(row.metastore, row.real_txn)) for row in rows]

"""Indexes as the store keeps them: the `indexes` component (the seed's IDXS and INDEX_PARAMS)."""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING

from sqlalchemy import (
    Boolean,
    Column,
    Connection,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    and_,
    delete,
    select,
    update,
)
from sqlalchemy.exc import IntegrityError

from hmsproxy.features.identity import TableRef
from hmsproxy.features.indexes.model import IndexRecord, IndexSnapshot
from hmsproxy.store.db import AlreadyExists
from hmsproxy.store.schema import StoreSchema

if TYPE_CHECKING:
    from hmsproxy.store.db import Store

COMPONENT = "indexes"

metadata = MetaData()

indexes = Table(
    "hmsproxy_indexes",
    metadata,
    Column("metastore", String(256), nullable=False),
    Column("db", String(256), nullable=False),
    Column("table", String(256), nullable=False),
    Column("name", String(128), nullable=False),
    Column("handler", String(256), nullable=False),
    Column("deferred", Boolean, nullable=False),
    Column("index_db", String(256), nullable=True),  # the index table, on the base table's metastore
    Column("index_table", String(256), nullable=True),
    Column("columns", Text, nullable=False),  # JSON [[name, type], ...]
    Column("sd", Text, nullable=False),  # base64 of the Thrift-encoded StorageDescriptor
    Column("parameters", Text, nullable=False),  # JSON {key: value}
    Column("created_at", Integer, nullable=False),
    Column("last_access", Integer, nullable=False),
    PrimaryKeyConstraint("metastore", "db", "table", "name"),
    Index("hmsproxy_indexes_by_index_table", "metastore", "index_db", "index_table"),
)


def _m001_tables(conn: Connection) -> None:
    metadata.create_all(conn)


#: Append-only: never edit or reorder a released migration.
INDEXES_SCHEMA = StoreSchema(COMPONENT, (_m001_tables,))


def _is(base: TableRef):
    c = indexes.c
    return and_(c.metastore == base.metastore, c.db == base.db, c.table == base.table)


def _record(row) -> IndexRecord:
    base = TableRef(row.metastore, row.db, row.table)
    index_table = TableRef(row.metastore, row.index_db, row.index_table) if row.index_table is not None else None
    return IndexRecord(
        base,
        row.name,
        row.handler,
        bool(row.deferred),
        index_table,
        tuple((n, t) for n, t in json.loads(row.columns)),
        base64.b64decode(row.sd),
        tuple(sorted(json.loads(row.parameters).items())),
        row.created_at,
        row.last_access,
    )


def _row(r: IndexRecord) -> dict:
    return {
        "metastore": r.base.metastore,
        "db": r.base.db,
        "table": r.base.table,
        "name": r.name,
        "handler": r.handler,
        "deferred": r.deferred,
        "index_db": r.index_table.db if r.index_table else None,
        "index_table": r.index_table.table if r.index_table else None,
        "columns": json.dumps([list(c) for c in r.columns]),
        "sd": base64.b64encode(r.sd).decode("ascii"),
        "parameters": json.dumps(dict(r.parameters), sort_keys=True),
        "created_at": r.created_at,
        "last_access": r.last_access,
    }


class IndexRepository:
    def __init__(self, store: Store):
        self.store = store

    def generation(self) -> int:
        return self.store.generation(COMPONENT)

    def snapshot(self) -> IndexSnapshot:
        with self.store.reading() as conn:
            generation = self.store.generation(COMPONENT)
            records = [_record(r) for r in conn.execute(select(indexes))]
        return IndexSnapshot.build(generation, records)

    def create(self, record: IndexRecord) -> None:
        try:
            with self.store.writing() as conn:
                conn.execute(indexes.insert().values(**_row(record)))
                self.store.bump(conn, COMPONENT)
        except IntegrityError:
            raise AlreadyExists(f"index {record.name} on {record.base.db}.{record.base.table} exists already") from None

    def replace(self, record: IndexRecord) -> None:
        """Write every field of an existing index (ALTER INDEX, alter_index)."""
        with self.store.writing() as conn:
            conn.execute(update(indexes).where(_is(record.base), indexes.c.name == record.name).values(**_row(record)))
            self.store.bump(conn, COMPONENT)

    def drop(self, base: TableRef, name: str) -> None:
        with self.store.writing() as conn:
            conn.execute(delete(indexes).where(_is(base), indexes.c.name == name))
            self.store.bump(conn, COMPONENT)

    def drop_all(self, base: TableRef) -> None:
        with self.store.writing() as conn:
            conn.execute(delete(indexes).where(_is(base)))
            self.store.bump(conn, COMPONENT)

    def drop_database(self, metastore: str, db: str) -> None:
        with self.store.writing() as conn:
            conn.execute(delete(indexes).where(indexes.c.metastore == metastore, indexes.c.db == db))
            self.store.bump(conn, COMPONENT)

    def rename_base(self, old: TableRef, new: TableRef) -> None:
        """The base table was renamed (or moved to another database): its indexes follow it."""
        with self.store.writing() as conn:
            conn.execute(update(indexes).where(_is(old)).values(db=new.db, table=new.table))
            self.store.bump(conn, COMPONENT)

"""Indexes as the store keeps them: the `indexes` component (the seed's IDXS and INDEX_PARAMS, and
each index partition's last build)."""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING

from sqlalchemy import (
    BigInteger,
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
from hmsproxy.features.indexes.builds import IndexBuild
from hmsproxy.features.indexes.model import IndexRecord
from hmsproxy.features.indexes.snapshot import IndexSnapshot
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


#: Added by migration 2, in its own MetaData (migration 1 creates all of `metadata`).
build_metadata = MetaData()

builds = Table(
    "hmsproxy_index_builds",
    build_metadata,
    Column("metastore", String(256), nullable=False),
    Column("db", String(256), nullable=False),
    Column("table", String(256), nullable=False),
    Column("name", String(128), nullable=False),
    Column("partition", String(767), nullable=False),  # the index partition's name; '' unpartitioned
    Column("built_at", Integer, nullable=False),
    Column("rows", BigInteger, nullable=False),
    Column("files", Integer, nullable=False),
    Column("base", Text, nullable=False),  # JSON {base partition name: digest}
    PrimaryKeyConstraint("metastore", "db", "table", "name", "partition"),
)


def _m001_tables(conn: Connection) -> None:
    metadata.create_all(conn)


def _m002_builds(conn: Connection) -> None:
    build_metadata.create_all(conn)


#: Append-only: never edit or reorder a released migration.
INDEXES_SCHEMA = StoreSchema(COMPONENT, (_m001_tables, _m002_builds))


def _is(base: TableRef, t: Table = indexes):
    c = t.c
    return and_(c.metastore == base.metastore, c.db == base.db, c.table == base.table)


def _build(row) -> IndexBuild:
    return IndexBuild(row.partition, row.built_at, row.rows, row.files, tuple(sorted(json.loads(row.base).items())))


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
            built = [(TableRef(r.metastore, r.db, r.table), r.name, _build(r)) for r in conn.execute(select(builds))]
        return IndexSnapshot.build(generation, records, built)

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
            for t in (indexes, builds):
                conn.execute(delete(t).where(_is(base, t), t.c.name == name))
            self.store.bump(conn, COMPONENT)

    def drop_all(self, base: TableRef) -> None:
        with self.store.writing() as conn:
            for t in (indexes, builds):
                conn.execute(delete(t).where(_is(base, t)))
            self.store.bump(conn, COMPONENT)

    def drop_database(self, metastore: str, db: str) -> None:
        with self.store.writing() as conn:
            for t in (indexes, builds):
                conn.execute(delete(t).where(t.c.metastore == metastore, t.c.db == db))
            self.store.bump(conn, COMPONENT)

    def rename_base(self, old: TableRef, new: TableRef) -> None:
        """The base table was renamed (or moved to another database): its indexes follow it."""
        with self.store.writing() as conn:
            for t in (indexes, builds):
                conn.execute(update(t).where(_is(old, t)).values(db=new.db, table=new.table))
            self.store.bump(conn, COMPONENT)

    # -- builds -------------------------------------------------------------------------------

    def _is_build(self, base: TableRef, name: str, partitions: list[str]):
        return and_(_is(base, builds), builds.c.name == name, builds.c.partition.in_(partitions))

    def forget_builds(self, base: TableRef, name: str, partitions: list[str]) -> int:
        """Before an index partition is swapped or dropped: until its new build is recorded it has none.
        The component's new generation."""
        with self.store.writing() as conn:
            conn.execute(delete(builds).where(self._is_build(base, name, partitions)))
            return self.store.bump(conn, COMPONENT)

    def record_builds(self, base: TableRef, name: str, made: list[IndexBuild]) -> int:
        """Each build replaces its partition's, in one transaction; the component's new generation."""
        with self.store.writing() as conn:
            conn.execute(delete(builds).where(self._is_build(base, name, [b.partition for b in made])))
            if made:
                conn.execute(builds.insert(), [_build_row(base, name, b) for b in made])
            return self.store.bump(conn, COMPONENT)

    def record_build(self, base: TableRef, name: str, build: IndexBuild) -> int:
        return self.record_builds(base, name, [build])


def _build_row(base: TableRef, name: str, build: IndexBuild) -> dict:
    return {
        "metastore": base.metastore,
        "db": base.db,
        "table": base.table,
        "name": name,
        "partition": build.partition,
        "built_at": build.built_at,
        "rows": build.rows,
        "files": build.files,
        "base": json.dumps(dict(build.base), sort_keys=True),
    }

"""Dependent tables and partitions as the store keeps them: the `dependent` component.

Both ways (seed: "materialize the dependencies both ways"): each record names the dependent
table and the table it depends on, and the table of partitions is indexed by that target, so
"who depends on events" is one indexed query as well as a snapshot lookup.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

from sqlalchemy import (
    Boolean,
    Column,
    Connection,
    Float,
    Index,
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

from hmsproxy.features.dependent import model
from hmsproxy.features.dependent.model import DependentPartition, DependentTable, TableRef
from hmsproxy.features.dependent.snapshot import DependentSnapshot
from hmsproxy.store.db import AlreadyExists
from hmsproxy.store.schema import StoreSchema

if TYPE_CHECKING:
    from hmsproxy.store.db import Store

COMPONENT = "dependent"

metadata = MetaData()


def _ref_columns(prefix: str) -> list[Column]:
    return [
        Column(f"{prefix}metastore", String(256), nullable=False),
        Column(f"{prefix}db", String(256), nullable=False),
        Column(f"{prefix}table", String(256), nullable=False),
    ]


dependent_tables = Table(
    "hmsproxy_dependent_tables",
    metadata,
    *_ref_columns(""),
    Column("partition_columns", Text, nullable=False),  # JSON [[name, type, comment], ...]
    Column("columns", Text, nullable=False),
    *_ref_columns("target_"),
    Column("policy", String(16), nullable=False),
    Column("owner", String(256), nullable=True),
    Column("created_at", Float, nullable=False),
    PrimaryKeyConstraint("metastore", "db", "table"),
)

dependent_partitions = Table(
    "hmsproxy_dependent_partitions",
    metadata,
    *_ref_columns(""),
    Column("spec", String(1024), nullable=False),  # JSON list of the partition's values
    *_ref_columns("target_"),
    Column("published_at", Float, nullable=False),
    Column("problem", Text, nullable=True),
    Column("target_gone", Boolean, nullable=False, default=False),
    PrimaryKeyConstraint("metastore", "db", "table", "spec"),
    Index("hmsproxy_dependent_partitions_by_target", "target_metastore", "target_db", "target_table"),
)


def _m001_tables(conn: Connection) -> None:
    metadata.create_all(conn)


#: Append-only: never edit or reorder a released migration.
DEPENDENT_SCHEMA = StoreSchema(COMPONENT, (_m001_tables,))


def _columns(text: str) -> tuple[model.Column, ...]:
    return tuple(model.Column(*c) for c in json.loads(text))


def _dump_columns(columns: Iterable[model.Column]) -> str:
    return json.dumps([[c.name, c.type, c.comment] for c in columns])


def _ref(row, prefix: str = "") -> TableRef:
    m = row._mapping
    return TableRef(m[f"{prefix}metastore"], m[f"{prefix}db"], m[f"{prefix}table"])


def _ref_values(ref: TableRef, prefix: str = "") -> dict[str, str]:
    return {f"{prefix}metastore": ref.metastore, f"{prefix}db": ref.db, f"{prefix}table": ref.table}


def _is(table: Table, ref: TableRef, prefix: str = ""):
    c = table.c
    return and_(c[f"{prefix}metastore"] == ref.metastore, c[f"{prefix}db"] == ref.db, c[f"{prefix}table"] == ref.table)


class DependentRepository:
    def __init__(self, store: Store):
        self.store = store

    def generation(self) -> int:
        return self.store.generation(COMPONENT)

    def snapshot(self) -> DependentSnapshot:
        with self.store.reading() as conn:
            generation = self.store.generation(COMPONENT)
            tables = [
                DependentTable(
                    _ref(r),
                    _columns(r.partition_columns),
                    _columns(r.columns),
                    _ref(r, "target_"),
                    r.policy,
                    r.owner,
                    r.created_at,
                )
                for r in conn.execute(select(dependent_tables))
            ]
            partitions = [
                DependentPartition(_ref(r), tuple(json.loads(r.spec)), _ref(r, "target_"), r.published_at, r.problem, bool(r.target_gone))
                for r in conn.execute(select(dependent_partitions))
            ]
        return DependentSnapshot.build(generation, tables, partitions)

    # -- dependent tables -------------------------------------------------------------

    def create_table(self, t: DependentTable) -> None:
        row = {
            **_ref_values(t.ref),
            "partition_columns": _dump_columns(t.partition_columns),
            "columns": _dump_columns(t.columns),
            **_ref_values(t.target, "target_"),
            "policy": t.policy,
            "owner": t.owner,
            "created_at": t.created_at or time.time(),
        }
        try:
            with self.store.writing() as conn:
                conn.execute(dependent_tables.insert().values(**row))
                self.store.bump(conn, COMPONENT)
        except IntegrityError:
            raise AlreadyExists(f"dependent table {t.ref.db}.{t.ref.table} exists already") from None

    def drop_table(self, ref: TableRef) -> None:
        with self.store.writing() as conn:
            conn.execute(delete(dependent_partitions).where(_is(dependent_partitions, ref)))
            conn.execute(delete(dependent_tables).where(_is(dependent_tables, ref)))
            self.store.bump(conn, COMPONENT)

    def set_table_target(self, ref: TableRef, target: TableRef, columns: tuple[model.Column, ...]) -> None:
        with self.store.writing() as conn:
            conn.execute(
                update(dependent_tables)
                .where(_is(dependent_tables, ref))
                .values(**_ref_values(target, "target_"), columns=_dump_columns(columns))
            )
            self.store.bump(conn, COMPONENT)

    def set_columns(self, refs: Iterable[TableRef], columns: tuple[model.Column, ...]) -> None:
        """The propagate policy: the dependent tables' data columns follow their source's."""
        with self.store.writing() as conn:
            for ref in refs:
                conn.execute(update(dependent_tables).where(_is(dependent_tables, ref)).values(columns=_dump_columns(columns)))
            self.store.bump(conn, COMPONENT)

    def set_policy(self, ref: TableRef, policy: str) -> None:
        with self.store.writing() as conn:
            conn.execute(update(dependent_tables).where(_is(dependent_tables, ref)).values(policy=policy))
            self.store.bump(conn, COMPONENT)

    # -- partitions ---------------------------------------------------------------------

    def add_partitions(self, partitions: list[DependentPartition]) -> None:
        """All in one transaction: AlreadyExists (and none added) if one is there already."""
        rows = [
            {
                **_ref_values(p.table),
                "spec": json.dumps(list(p.values)),
                **_ref_values(p.target, "target_"),
                "published_at": p.published_at or time.time(),
                "target_gone": False,
            }
            for p in partitions
        ]
        if not rows:
            return
        try:
            with self.store.writing() as conn:
                conn.execute(dependent_partitions.insert(), rows)
                self.store.bump(conn, COMPONENT)
        except IntegrityError:
            raise AlreadyExists("a partition is published already") from None

    def drop_partition(self, table: TableRef, values: tuple[str, ...]) -> None:
        with self.store.writing() as conn:
            conn.execute(
                delete(dependent_partitions).where(
                    _is(dependent_partitions, table), dependent_partitions.c.spec == json.dumps(list(values))
                )
            )
            self.store.bump(conn, COMPONENT)

    def set_partition_target(self, table: TableRef, values: tuple[str, ...], target: TableRef) -> None:
        with self.store.writing() as conn:
            conn.execute(
                update(dependent_partitions)
                .where(_is(dependent_partitions, table), dependent_partitions.c.spec == json.dumps(list(values)))
                .values(**_ref_values(target, "target_"), problem=None, target_gone=False)
            )
            self.store.bump(conn, COMPONENT)

    # -- what a change allowed by the notify policy does ----------------------------------------

    def mark(self, partitions: Iterable[DependentPartition], problem: str, *, target_gone: bool = False) -> None:
        with self.store.writing() as conn:
            for p in partitions:
                conn.execute(
                    update(dependent_partitions)
                    .where(_is(dependent_partitions, p.table), dependent_partitions.c.spec == json.dumps(list(p.values)))
                    .values(problem=problem, target_gone=target_gone)
                )
            self.store.bump(conn, COMPONENT)

    def follow_rename(self, old: TableRef, new: TableRef, problem: str) -> None:
        """The depended-upon table was renamed (notify policy): every record follows it."""
        with self.store.writing() as conn:
            conn.execute(
                update(dependent_partitions)
                .where(_is(dependent_partitions, old, "target_"))
                .values(**_ref_values(new, "target_"), problem=problem)
            )
            conn.execute(update(dependent_tables).where(_is(dependent_tables, old, "target_")).values(**_ref_values(new, "target_")))
            self.store.bump(conn, COMPONENT)

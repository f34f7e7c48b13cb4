"""What the proxy records about dependent tables, in the names their metastores use.

Records name tables by their backend identity (metastore, its database name, table name), so
prefixes and database mappings, which differ between proxies sharing a store and may change
with a reload, never orphan them; features/identity.py turns identities into client names.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hmsproxy.features.identity import TableRef

RESTRICT = "restrict"
NOTIFY = "notify"
POLICIES = (RESTRICT, NOTIFY)
#: The dependent table's property choosing what happens when a table it depends on changes.
POLICY_KEY = "hmsproxy.dependent.on-change"


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    comment: str | None = None


@dataclass(frozen=True)
class DependentTable:
    ref: TableRef
    #: Its partition columns: a prefix of its dependencies' partition columns.
    partition_columns: tuple[Column, ...]
    #: The data columns, inherited from the table it depends on when it was created or re-pointed.
    columns: tuple[Column, ...]
    #: What partitions added from now on depend on.
    target: TableRef
    policy: str = RESTRICT
    owner: str | None = None
    created_at: float = 0.0

    @property
    def partition_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.partition_columns)

    def spec_name(self, values: tuple[str, ...]) -> str:
        return "/".join(f"{k}={v}" for k, v in zip(self.partition_names, values))


@dataclass(frozen=True)
class DependentPartition:
    table: TableRef  # the dependent table
    values: tuple[str, ...]
    target: TableRef  # the table whose partitions with these leading values it is made of
    published_at: float = 0.0
    #: What a change allowed by the notify policy broke (None: nothing).
    problem: str | None = None
    #: The target was dropped (notify policy): the partition is no longer served.
    target_gone: bool = False


@dataclass(frozen=True)
class DependentSnapshot:
    """Every dependent table and partition of the store, indexed both ways."""

    generation: int = -1
    tables: dict[TableRef, DependentTable] = field(default_factory=dict)
    #: dependent table -> its partitions in value order
    partitions: dict[TableRef, tuple[DependentPartition, ...]] = field(default_factory=dict)
    #: (metastore, db) -> names of the dependent tables living there
    by_database: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    #: depended-upon table -> the dependent tables naming it (at table level or by a partition)
    dependents: dict[TableRef, tuple[TableRef, ...]] = field(default_factory=dict)

    @classmethod
    def build(cls, generation: int, tables: list[DependentTable], partitions: list[DependentPartition]) -> DependentSnapshot:
        by_table: dict[TableRef, list[DependentPartition]] = {t.ref: [] for t in tables}
        for p in partitions:
            by_table.setdefault(p.table, []).append(p)
        by_database: dict[tuple[str, str], list[str]] = {}
        dependents: dict[TableRef, set[TableRef]] = {}
        for t in tables:
            by_database.setdefault((t.ref.metastore, t.ref.db), []).append(t.ref.table)
            dependents.setdefault(t.target, set()).add(t.ref)
        for p in partitions:
            if not p.target_gone:
                dependents.setdefault(p.target, set()).add(p.table)
        return cls(
            generation,
            {t.ref: t for t in tables},
            {ref: tuple(sorted(ps, key=lambda p: p.values)) for ref, ps in by_table.items()},
            {k: tuple(sorted(v)) for k, v in by_database.items()},
            {k: tuple(sorted(v)) for k, v in dependents.items()},
        )

    def table(self, ref: TableRef | None) -> DependentTable | None:
        return self.tables.get(ref) if ref is not None else None

    def partitions_on(self, target: TableRef) -> list[DependentPartition]:
        """The served partitions, of every dependent table, made of `target`'s partitions."""
        return [p for d in self.dependents.get(target, ()) for p in self.partitions.get(d, ()) if p.target == target and not p.target_gone]

"""Every dependent table and partition of the store in memory, read by every call without a query.

The snapshot is immutable; `DependentRecords` (the repository and `current(repository)`, what the
feature's parts are given) replaces it when the dependent component's
generation in the store moves, checked twice a second, so another proxy's change is served
within a second (one cheap query per check) and this proxy's own at once (`refresh()`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hmsproxy.features.dependent.model import DependentPartition, DependentTable
from hmsproxy.features.identity import TableRef
from hmsproxy.store.snapshot import GenerationCache, Records

if TYPE_CHECKING:
    from hmsproxy.features.dependent.store import DependentRepository


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
    #: What is written from these records alone, kept while they last (view.py: the view's text and parameters).
    memo: dict = field(default_factory=dict, compare=False, repr=False)

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


def current(repository: DependentRepository) -> GenerationCache[DependentSnapshot]:
    """The store's dependent tables, kept in memory until their generation moves."""
    return GenerationCache(repository.generation, repository.snapshot, DependentSnapshot(), what="dependent tables", check_interval_s=0.5)


class DependentRecords(Records["DependentRepository", DependentSnapshot]):
    """The dependent tables' records room, handed to each part of the feature (the parts never see the feature)."""

    def __init__(self, repository: DependentRepository):
        super().__init__(repository, current(repository))

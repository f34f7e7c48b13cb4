"""Every index of the store in memory, read by every call without a query.

The snapshot is immutable; `IndexRecords` (the repository and `current(repository)`, what the
feature's parts are given) replaces it when the indexes component's
generation in the store moves, checked twice a second, so another proxy's change is seen within
a second (one cheap query per check) and this proxy's own at once: a build recorded or forgotten
is applied to the snapshot in memory (`with_builds`, GenerationCache.apply) rather than re-reading
every index and build, which made a rebuild of N partitions read N x N build rows; other changes
`refresh()`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from hmsproxy.features.identity import TableRef
from hmsproxy.features.indexes.builds import IndexBuild
from hmsproxy.features.indexes.model import IndexRecord
from hmsproxy.store.snapshot import GenerationCache, Records

if TYPE_CHECKING:
    from hmsproxy.features.indexes.store import IndexRepository


@dataclass(frozen=True)
class IndexSnapshot:
    generation: int = -1
    #: base table -> {index name: record}
    by_base: dict[TableRef, dict[str, IndexRecord]] = field(default_factory=dict)
    #: index table -> its record
    by_index_table: dict[TableRef, IndexRecord] = field(default_factory=dict)
    #: (base table, index name) -> {index partition name: its last build}
    builds: dict[tuple[TableRef, str], dict[str, IndexBuild]] = field(default_factory=dict)

    @classmethod
    def build(
        cls, generation: int, records: Iterable[IndexRecord], built: Iterable[tuple[TableRef, str, IndexBuild]] = ()
    ) -> IndexSnapshot:
        by_base: dict[TableRef, dict[str, IndexRecord]] = {}
        by_index_table: dict[TableRef, IndexRecord] = {}
        for r in records:
            by_base.setdefault(r.base, {})[r.name] = r
            if r.index_table is not None:
                by_index_table[r.index_table] = r
        builds: dict[tuple[TableRef, str], dict[str, IndexBuild]] = {}
        for base, name, b in built:
            builds.setdefault((base, name), {})[b.partition] = b
        return cls(generation, by_base, by_index_table, builds)

    def with_builds(
        self, generation: int, base: TableRef, name: str, forgotten: Iterable[str] = (), recorded: Iterable[IndexBuild] = ()
    ) -> IndexSnapshot:
        """A new snapshot: this one with the index's builds of `forgotten` partitions gone and `recorded`
        ones in (what the store holds after this proxy's own forget_builds / record_builds). Copies only
        that index's builds, so readers of this snapshot keep seeing it unchanged."""
        key = (base, name)
        mine = dict(self.builds.get(key, {}))
        for partition in forgotten:
            mine.pop(partition, None)
        for b in recorded:
            mine[b.partition] = b
        builds = {k: v for k, v in self.builds.items() if k != key}
        if mine:
            builds[key] = mine
        return replace(self, generation=generation, builds=builds)

    def builds_of(self, record: IndexRecord) -> dict[str, IndexBuild]:
        """The index's built partitions, by index partition name."""
        return self.builds.get((record.base, record.name), {})

    def of(self, base: TableRef) -> list[IndexRecord]:
        """The base table's indexes, by name."""
        return sorted(self.by_base.get(base, {}).values(), key=lambda r: r.name)

    def get(self, base: TableRef, name: str) -> IndexRecord | None:
        return self.by_base.get(base, {}).get(name.lower())

    def in_database(self, metastore: str, db: str) -> list[IndexRecord]:
        return [r for base, named in self.by_base.items() if (base.metastore, base.db) == (metastore, db) for r in named.values()]


def current(repository: IndexRepository) -> GenerationCache[IndexSnapshot]:
    """The store's indexes, kept in memory until their generation moves."""
    return GenerationCache(repository.generation, repository.snapshot, IndexSnapshot(), what="indexes", check_interval_s=0.5)


class IndexRecords(Records["IndexRepository", IndexSnapshot]):
    """The indexes' records room, handed to each part of the feature (the parts never see the feature)."""

    def __init__(self, repository: IndexRepository):
        super().__init__(repository, current(repository))

    def builds_changed(self, record: IndexRecord, generation: int, *, forgotten=(), recorded=()) -> None:
        """This proxy forgot or recorded builds of the index (the store's generation is now `generation`):
        applied to the snapshot in memory, not by re-reading every index and build."""
        self._cache.apply(generation, lambda s: s.with_builds(generation, record.base, record.name, forgotten, recorded))

"""What the proxy records about an index, keyed by its base table's backend identity.

The seed's IDXS/INDEX_PARAMS model: an index's name is unique per base table; it has a handler,
a deferred-rebuild flag, an optional index table (a real table on the base table's metastore),
the storage descriptor of the indexed columns, parameters, and create and last-access times; and
per index partition its last build (builds.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from hmsproxy.features.identity import TableRef
from hmsproxy.features.indexes.builds import IndexBuild


@dataclass(frozen=True)
class IndexRecord:
    base: TableRef
    name: str  # lower case
    handler: str  # the handler's class name, as Hive writes it
    deferred: bool
    #: The index table (same metastore as the base table), or None for a handler without one.
    index_table: TableRef | None
    #: The indexed columns: (name, type), in the order the index lists them.
    columns: tuple[tuple[str, str], ...]
    #: The Index struct's storage descriptor, Thrift-encoded as the client or the handler wrote it.
    sd: bytes
    parameters: tuple[tuple[str, str], ...] = ()
    created_at: int = 0
    last_access: int = 0

    @property
    def params(self) -> dict[str, str]:
        return dict(self.parameters)


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

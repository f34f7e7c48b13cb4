"""What the proxy records about an index, keyed by its base table's backend identity.

The seed's IDXS/INDEX_PARAMS model: an index's name is unique per base table; it has a handler,
a deferred-rebuild flag, an optional index table (a real table on the base table's metastore),
the storage descriptor of the indexed columns, parameters, and create and last-access times; and
per index partition its last build (builds.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from hmsproxy.features.identity import TableRef


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

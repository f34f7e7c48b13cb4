"""What the proxy records about dependent tables, in the names their metastores use.

Records name tables by their backend identity (metastore, its database name, table name), so
prefixes and database mappings, which differ between proxies sharing a store and may change
with a reload, never orphan them; features/identity.py turns identities into client names.
"""

from __future__ import annotations

from dataclasses import dataclass

from hmsproxy.features.columns import type_key
from hmsproxy.features.identity import TableRef

RESTRICT = "restrict"
NOTIFY = "notify"
#: Like notify, and a compatible change of the columns is applied to the dependent table (schema_change.py).
PROPAGATE = "propagate"
POLICIES = (RESTRICT, NOTIFY, PROPAGATE)
#: The dependent table's property choosing what happens when a table it depends on changes.
POLICY_KEY = "hmsproxy.dependent.on-change"


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    comment: str | None = None


def columns_of(cols) -> tuple[Column, ...]:
    """A Thrift column list as recorded: names lowercased, types as features/columns.py compares them."""
    return tuple(Column(c.name.lower(), type_key(c.type), c.comment) for c in cols or [])


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

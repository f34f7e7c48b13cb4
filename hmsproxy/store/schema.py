"""The store's own tables and how features declare theirs.

The store knows no feature: each feature hands `Store` a `StoreSchema`, its
component name and its append-only migration list. A migration is a function
of one Connection, run inside the migration transaction; its version is its
position in the list (1-based, per component). Never edit or reorder a
released migration: append a new one.

The core (component `core`) has the same kind of list, for the tables below.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import BigInteger, Column, Connection, Float, Integer, MetaData, String, Table, inspect, select

Migration = Callable[[Connection], None]

_COMPONENT_NAME = re.compile(r"^[a-z][a-z0-9_.-]{0,63}$")


@dataclass(frozen=True)
class StoreSchema:
    """A component's tables as an append-only migration list (versions 1, 2, ... in list order)."""

    component: str
    migrations: tuple[Migration, ...]

    def __post_init__(self):
        if not isinstance(self.component, str) or not _COMPONENT_NAME.match(self.component):
            raise ValueError(f"store component name {self.component!r}: lower case letters, digits, '_', '.', '-' (at most 64)")
        object.__setattr__(self, "migrations", tuple(self.migrations))  # a list would make the schema mutable
        for m in self.migrations:
            if not callable(m):
                raise ValueError(f"store component {self.component!r}: migration {m!r} is not callable")


metadata = MetaData()

#: Created before anything else (it records everything else): one row per applied migration.
migrations = Table(
    "hmsproxy_migrations",
    metadata,
    Column("component", String(64), primary_key=True),
    Column("version", Integer, primary_key=True, autoincrement=False),
    Column("applied_at", Float, nullable=False),
)

#: One row per component, bumped by each of its changes, so other proxies notice them cheaply
#: and a change of one component does not make proxies reload another's state.
generations = Table(
    "hmsproxy_generations",
    metadata,
    Column("component", String(64), primary_key=True),
    Column("value", BigInteger, nullable=False),
)

# -- the previous release's layout (one global version and one global generation) ------------

_legacy = MetaData()
legacy_schema_version = Table(
    "hmsproxy_schema_version",
    _legacy,
    Column("version", Integer, primary_key=True, autoincrement=False),
    Column("applied_at", Float, nullable=False),
)
legacy_generation = Table(
    "hmsproxy_generation",
    _legacy,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("value", BigInteger, nullable=False),
)
#: The previous release's only migration (version 1) created the remotes feature's tables.
LEGACY_COMPONENT = "remotes"


def _m001_components(conn: Connection) -> None:
    generations.create(conn)
    if inspect(conn).has_table(legacy_schema_version.name):
        _adopt_previous_release(conn)
    _fence_previous_release(conn)


def _adopt_previous_release(conn: Connection) -> None:
    """A store of the previous release: its remote tables stay as they are, recorded as remotes v1."""
    versions = set(conn.execute(select(legacy_schema_version.c.version)).scalars())
    if 1 not in versions:
        return  # the previous release never finished its migration: nothing to adopt
    conn.execute(migrations.insert().values(component=LEGACY_COMPONENT, version=1, applied_at=time.time()))
    value = 0
    if inspect(conn).has_table(legacy_generation.name):
        value = conn.execute(select(legacy_generation.c.value).where(legacy_generation.c.id == 1)).scalar() or 0
        # Gone, so a proxy of the previous release still running fails its writes loudly instead
        # of bumping a counter the new proxies no longer read.
        legacy_generation.drop(conn)
    conn.execute(generations.insert().values(component=LEGACY_COMPONENT, value=value))


def _fence_previous_release(conn: Connection) -> None:
    """Versions 1 and 2 in the old table: the previous release then refuses this store
    ("a newer hmsproxy migrated it") instead of re-creating tables that exist."""
    if not inspect(conn).has_table(legacy_schema_version.name):
        legacy_schema_version.create(conn)
    present = set(conn.execute(select(legacy_schema_version.c.version)).scalars())
    for version in (1, 2):
        if version not in present:
            conn.execute(legacy_schema_version.insert().values(version=version, applied_at=time.time()))


CORE = "core"
CORE_SCHEMA = StoreSchema(CORE, (_m001_components,))

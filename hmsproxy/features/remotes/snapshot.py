"""The proxy's cached view of the remote databases and tables in the store.

Every call looks remotes up, so the view lives in memory: an immutable
snapshot, replaced when the remotes' generation counter in the store moves
(other components' changes don't move it). The counter is
read at most once per `check_interval_s`, so a second proxy on the same store
sees a new remote within about a second, and a proxy's own changes are seen at
once (`refresh()` after each write).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from hmsproxy.routing.naming import split_catalog
from hmsproxy.store.snapshot import GenerationCache, Records

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RemotesSnapshot:
    generation: int = -1
    #: local database name (lower case) -> RemoteDatabase
    databases: dict = field(default_factory=dict)
    #: (local db, local table) (lower case) -> RemoteTable
    tables: dict = field(default_factory=dict)
    #: local db -> [RemoteTable] of that database, in name order
    tables_by_db: dict = field(default_factory=dict)
    #: Keys of `databases` / `tables` defined in the config file (remotes.databases / .tables).
    static_databases: frozenset = frozenset()
    static_tables: frozenset = frozenset()

    def database(self, client_db: str | None):
        if not client_db:
            return None
        _, db = split_catalog(client_db)
        return self.databases.get(db.lower()) if db else None

    def table(self, client_db: str | None, table: str | None):
        if not client_db or not table or not isinstance(table, str):
            return None
        _, db = split_catalog(client_db)
        return self.tables.get((db.lower(), table.lower())) if db else None

    def tables_of(self, client_db: str | None) -> list:
        if not client_db:
            return []
        _, db = split_catalog(client_db)
        return self.tables_by_db.get(db.lower(), []) if db else []

    @property
    def empty(self) -> bool:
        return not self.databases and not self.tables

    def with_static(self, static) -> RemotesSnapshot:
        """This view plus the config's remotes (RemotesConfig), which win over the store's."""
        databases = {**self.databases, **{d.local_name: d for d in static.databases}}
        tables = {**self.tables, **{(t.local_db, t.local_name): t for t in static.tables}}
        by_db: dict = {}
        for key in sorted(tables):
            by_db.setdefault(key[0], []).append(tables[key])
        return RemotesSnapshot(
            self.generation,
            databases,
            tables,
            by_db,
            frozenset(d.local_name for d in static.databases),
            frozenset((t.local_db, t.local_name) for t in static.tables),
        )


class RemotesCache(Records):
    """Remote databases and tables of one store, reloaded when its generation changes: the remotes'
    records room, whose `repository` is a RemoteRepository (generation, list_databases, list_tables)."""

    def __init__(self, repository, check_interval_s: float = 1.0):
        cache = GenerationCache(repository.generation, self._load, RemotesSnapshot(), what="remotes", check_interval_s=check_interval_s)
        super().__init__(repository, cache)
        self._merged: tuple | None = None  # (store snapshot, static config, merged view)

    def view(self, static=None) -> RemotesSnapshot:
        """The store's remotes merged with the config's (`static`: a RemotesConfig), cached per pair."""
        snap = self.snapshot()
        if static is None or (not static.databases and not static.tables):
            return snap
        merged = self._merged
        if merged is not None and merged[0] is snap and merged[1] is static:
            return merged[2]
        view = snap.with_static(static)
        self._merged = (snap, static, view)
        return view

    def _load(self) -> RemotesSnapshot:
        generation = self.repository.generation()
        databases = {rd.local_name.lower(): rd for rd in self.repository.list_databases()}
        tables, by_db = {}, {}
        for rt in self.repository.list_tables():
            key = (rt.local_db.lower(), rt.local_name.lower())
            tables[key] = rt
            by_db.setdefault(key[0], []).append(rt)
        log.info("remotes: %d databases, %d tables (remotes generation %s)", len(databases), len(tables), generation)
        return RemotesSnapshot(generation, databases, tables, by_db)

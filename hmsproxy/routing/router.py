"""Which metastore owns a database, with Waggle Dance's two resolution modes.

PREFIXED: the prefix a client-side name starts with picks the metastore
(longest prefix first; the primary usually has none). MANUAL: names carry no
prefix; a database belongs to the metastore whose `mapped-databases` admit
it, and where several do, to the one that really has it (asked live, so
databases created or dropped on a backend are seen without a restart).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from hmsproxy.config.model import Config, DatabaseResolution, MetastoreConfig
from hmsproxy.routing.naming import MetastoreNaming, join_catalog, split_catalog

log = logging.getLogger(__name__)


class UnknownDatabase(Exception):
    """No metastore of the federation serves this database name."""

    def __init__(self, client_db: str, reason: str):
        super().__init__(f"database '{client_db}' is not in the federation: {reason}")
        self.client_db = client_db


@dataclass(frozen=True)
class Route:
    naming: MetastoreNaming
    backend_db: str
    catalog: str | None = None  # Hive 3 "@cat#" marker the client used, kept for the backend
    #: (the metastore's table, the client's) for each table this route renames (a remote table's
    #: local name), so that its error messages name the client's (pipeline/error_names.py).
    renamed_tables: tuple[tuple[str, str], ...] = ()
    #: The database name the client used (lower case), given back for backend_db in answers: under
    #: database-name-mapping a client may use the alias or the metastore's own name (as in Waggle Dance).
    client_db: str | None = None
    #: The metastore the route goes to (its naming's), kept as a field: every call reads it.
    metastore: MetastoreConfig = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "metastore", self.naming.metastore)

    def inbound(self, client_name: str) -> str:
        """A client-side database name as this route's backend knows it."""
        catalog, db = split_catalog(client_name)
        return join_catalog(catalog, self.naming.to_backend(db)) if db else client_name

    def outbound(self, backend_name: str) -> str:
        catalog, db = split_catalog(backend_name)
        if not db:
            return backend_name
        if self.client_db is not None and db.lower() == self.backend_db:
            return join_catalog(catalog, self.client_db)
        return join_catalog(catalog, self.naming.to_client(db))


#: Routes a Router keeps before it starts over (client database names are few; this bounds the odd client).
MAX_REMEMBERED_ROUTES = 10_000

#: metastore name -> its database names right now, or None if it can't be asked.
DatabaseLister = Callable[[str], "set[str] | None"]


class DatabaseDirectory:
    """Live lists of each metastore's databases, cached briefly (MANUAL mode's clash resolution)."""

    def __init__(self, lister: DatabaseLister, ttl_s: float = 5.0):
        self._lister = lister
        self._ttl = ttl_s
        self._cache: dict[str, tuple[float, set[str] | None]] = {}
        self._lock = threading.Lock()

    def databases(self, metastore: str, *, fresh: bool = False) -> set[str] | None:
        now = time.monotonic()
        with self._lock:
            hit = self._cache.get(metastore)
        if hit and not fresh and now - hit[0] < self._ttl:
            return hit[1]
        dbs = self._lister(metastore)
        with self._lock:
            self._cache[metastore] = (now, dbs)
        return dbs

    def forget(self) -> None:
        with self._lock:
            self._cache.clear()


class Router:
    def __init__(self, config: Config, directory: DatabaseDirectory | None = None):
        self.config = config
        self.namings = [MetastoreNaming(m, config.database_resolution) for m in config.metastores]
        self.by_name = {n.name: n for n in self.namings}
        self.primary = self.namings[0]
        self.directory = directory
        #: Database name -> the metastores that all have it (MANUAL mode), as reported.
        self.clashes: dict[str, tuple[str, ...]] = {}
        # Longest prefix first, so "sales_eu_" wins over "sales_" for "sales_eu_x".
        self._by_prefix = sorted(self.namings, key=lambda n: len(n.prefix), reverse=True)
        #: PREFIXED routes by client name: they follow from the config alone, and every call asks.
        self._routes: dict[str, Route] = {}

    @property
    def prefixed(self) -> bool:
        return self.config.database_resolution is DatabaseResolution.PREFIXED

    def route(self, client_name: str) -> Route:
        route = self._routes.get(client_name)
        if route is not None:
            return route
        catalog, client_db = split_catalog(client_name)
        if not self.prefixed:  # MANUAL: may depend on which databases the metastores have right now
            naming = self._owner_manual(client_db)
            return Route(naming, naming.to_backend(client_db), catalog, client_db=client_db.lower())
        naming = self._owner_prefixed(client_db)
        route = Route(naming, naming.to_backend(client_db), catalog, client_db=client_db.lower())
        if len(self._routes) >= MAX_REMEMBERED_ROUTES:
            self._routes.clear()
        self._routes[client_name] = route
        return route

    def route_primary(self) -> Route:
        return Route(self.primary, "")

    def _owner_prefixed(self, client_db: str) -> MetastoreNaming:
        for naming in self._by_prefix:
            if naming.owns_client_name(client_db):
                if naming.db_visible(naming.to_backend(client_db)):
                    return naming
                if naming.prefix:
                    raise UnknownDatabase(client_db, f"metastore '{naming.name}' does not map it (mapped-databases)")
        raise UnknownDatabase(client_db, "no metastore's prefix or mapped-databases match it")

    def _owner_manual(self, client_db: str) -> MetastoreNaming:
        candidates = [n for n in self.namings if n.db_visible(n.to_backend(client_db))]
        if not candidates:
            raise UnknownDatabase(client_db, "no metastore's mapped-databases match it")
        if len(candidates) == 1 or self.directory is None:
            return candidates[0]
        holders = []
        for n in candidates:
            dbs = self.directory.databases(n.name)
            if dbs is not None and n.to_backend(client_db) in dbs:
                holders.append(n)
        if not holders:
            return candidates[0]  # a database about to be created goes to the first that maps it
        if len(holders) > 1:
            self.report_clash(client_db, [h.name for h in holders])
        return holders[0]

    def report_clash(self, client_db: str, metastores: list[str]) -> None:
        if client_db in self.clashes:
            return
        self.clashes[client_db] = tuple(metastores)
        log.warning(
            "database '%s' exists on metastores %s; clients see the one on '%s' (MANUAL resolution, first in config order)",
            client_db,
            ", ".join(f"'{m}'" for m in metastores),
            metastores[0],
        )

    def client_name(self, naming: MetastoreNaming, backend_db: str) -> str | None:
        """What clients call `backend_db` of this metastore, or None if it is hidden from them."""
        names = self.client_names(naming, backend_db)
        return names[0] if names else None

    def client_names(self, naming: MetastoreNaming, backend_db: str) -> list[str]:
        """Every name clients see `backend_db` under: its alias first, then (as in Waggle Dance) its own."""
        if not naming.db_visible(backend_db):
            return []
        return [c for c in naming.client_names(backend_db) if not self._claimed_by_other_prefix(naming, c)]

    def _claimed_by_other_prefix(self, naming: MetastoreNaming, client: str) -> bool:
        # A primary without prefix must not show names that a federated prefix claims.
        if not self.prefixed:
            return False
        for other in self._by_prefix:
            if other is naming:
                return False
            if other.prefix and other.owns_client_name(client):
                return True
        return False

"""Tables as their metastores know them, and the names clients see for them.

Features that record tables (dependent tables, indexes) key them by backend identity
(metastore, its database name, table name), so prefixes and database mappings, which differ
between proxies sharing a store and may change with a reload, never orphan a record; these
functions turn identities into client names and back through the proxy's current router.
"""

from __future__ import annotations

from dataclasses import dataclass

from hmsproxy.pipeline.errors import NotFound
from hmsproxy.routing.naming import split_catalog
from hmsproxy.routing.router import Route, Router, UnknownDatabase


@dataclass(frozen=True, order=True)
class TableRef:
    metastore: str
    db: str  # as the metastore knows it, lower case
    table: str


def routed_db(route: Route) -> tuple[str, str]:
    """(metastore, backend database) a route leads to."""
    return route.metastore.name, route.backend_db.lower()


def routed(route: Route, table: str) -> TableRef:
    """The backend identity of `table` in the database a route leads to (a call's, once routed)."""
    return TableRef(*routed_db(route), table.lower())


def ref_of(router: Router, client_db: str, table: str) -> TableRef:
    """The backend identity of client-side `client_db.table` (NotFound if no metastore serves the database)."""
    try:
        return routed(router.route(client_db), table)
    except UnknownDatabase as e:
        raise NotFound(f"hmsproxy: {e}") from None


def db_key(router: Router, client_db: str) -> tuple[str, str] | None:
    """(metastore, backend database) of a client database name, or None if nobody serves it."""
    try:
        return routed_db(router.route(split_catalog(client_db)[1]))
    except UnknownDatabase:
        return None


def client_db(router: Router, metastore: str, backend_db: str) -> str | None:
    naming = router.by_name.get(metastore)
    return router.client_name(naming, backend_db) if naming is not None else None


def client_name(router: Router, ref: TableRef) -> str:
    """`db.table` as this proxy's clients see it; the backend identity when it is hidden from them."""
    db = client_db(router, ref.metastore, ref.db)
    return f"{db}.{ref.table}" if db is not None else f"{ref.db}.{ref.table} (metastore {ref.metastore}, not visible here)"


def quoted(router: Router, ref: TableRef) -> str | None:
    """`db`.`table` for SQL text, or None when clients can't see it through this proxy."""
    db = client_db(router, ref.metastore, ref.db)
    return f"{ident(db)}.{ident(ref.table)}" if db is not None else None


def ident(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"

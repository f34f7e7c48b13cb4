"""How one metastore's database names look to clients, and what it shows.

Names stack like small wrappers: the backend's name, then its alias
(`database-name-mapping`), then the prefix (PREFIXED mode only). Hive folds
database and table names to lower case, so every comparison here does too.
"""

from __future__ import annotations

import re

from hmsproxy.config.model import DatabaseResolution, MetastoreConfig

#: Hive 3 clients send "@catalog#db" where a database name goes; "!" stands for no database.
CATALOG_MARK = "@"
CATALOG_SEPARATOR = "#"
EMPTY_DB_MARK = "!"


def split_catalog(name: str) -> tuple[str | None, str]:
    """("hive", "db") from "@hive#db"; (None, name) from a plain name."""
    if name.startswith(CATALOG_MARK) and CATALOG_SEPARATOR in name:
        catalog, db = name[1:].split(CATALOG_SEPARATOR, 1)
        return catalog, ("" if db == EMPTY_DB_MARK else db)
    return None, name


def join_catalog(catalog: str | None, db: str) -> str:
    if catalog is None:
        return db
    return f"{CATALOG_MARK}{catalog}{CATALOG_SEPARATOR}{db or EMPTY_DB_MARK}"


def _compile(patterns) -> tuple[re.Pattern, ...]:
    return tuple(re.compile(p, re.IGNORECASE) for p in patterns)


def _any_match(patterns: tuple[re.Pattern, ...], name: str) -> bool:
    return any(p.fullmatch(name) for p in patterns)


class MetastoreNaming:
    """Name translation and visibility for one metastore under one config snapshot."""

    def __init__(self, metastore: MetastoreConfig, resolution: DatabaseResolution):
        self.metastore = metastore
        self.prefix = metastore.database_prefix if resolution is DatabaseResolution.PREFIXED else ""
        self._prefix_lower = self.prefix.lower()
        self._alias = {k.lower(): v.lower() for k, v in metastore.database_name_mapping.items()}
        self._unalias = {v: k for k, v in self._alias.items()}
        self._mapped_dbs = None if metastore.mapped_databases is None else _compile(metastore.mapped_databases)
        self._mapped_tables = {m.database.lower(): _compile(m.patterns) for m in metastore.mapped_tables}
        self._writable = _compile(metastore.writable_database_white_list)
        #: True when client and backend names are the same, so nothing needs rewriting.
        self.identity = not self.prefix and not self._alias
        #: True when `mapped-tables` hides tables of some database (else every table is visible).
        self.hides_any_tables = bool(self._mapped_tables)

    @property
    def name(self) -> str:
        return self.metastore.name

    def owns_client_name(self, client_db: str) -> bool:
        """True if `client_db` carries this metastore's prefix (always true without one)."""
        return client_db.lower().startswith(self._prefix_lower)

    def to_backend(self, client_db: str) -> str:
        local = client_db.lower()[len(self._prefix_lower) :] if self.owns_client_name(client_db) else client_db.lower()
        return self._unalias.get(local, local)

    def to_client(self, backend_db: str) -> str:
        name = backend_db.lower()
        return self.prefix + self._alias.get(name, name)

    def client_names(self, backend_db: str) -> list[str]:
        name = backend_db.lower()
        alias = self._alias.get(name)
        return [self.prefix + alias, self.prefix + name] if alias else [self.prefix + name]

    def db_visible(self, backend_db: str) -> bool:
        if self._mapped_dbs is None:
            return True
        name = backend_db.lower()
        return _any_match(self._mapped_dbs, name) or _any_match(self._mapped_dbs, self._alias.get(name, name))

    def hides_tables(self, backend_db: str) -> bool:
        """Whether `mapped-tables` limits the tables of this database (table lists are filtered)."""
        return backend_db.lower() in self._mapped_tables

    def table_visible(self, backend_db: str, table: str) -> bool:
        patterns = self._mapped_tables.get(backend_db.lower())
        return patterns is None or _any_match(patterns, table.lower())

    def db_writable(self, backend_db: str) -> bool:
        """Whether the database is on the write white list (by backend name or alias)."""
        name = backend_db.lower()
        return _any_match(self._writable, name) or _any_match(self._writable, self._alias.get(name, name))

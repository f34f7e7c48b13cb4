"""A metastore's error messages in the names the client used.

Behind a prefix, an alias (`database-name-mapping`) or a remote's local name, a metastore names
databases and tables as it knows them: a federated get_table of a missing table says
`sales.x table not found` where the client asked for `fed1_sales.x`. The declared exceptions of an
answer that came back on the full path get the call's own names swapped back, and only those
(the relay never carries an answer of a renamed route: fastpath.py's RENAMED, ROUTED_BY_FEATURE).

What Hive writes (docs/errors.md has each version's messages): `db.table` (2.3), `hive.db.table`
(3.1 and 4.0 put the catalog first), `database hive.db` (4.0), the database alone as the whole
message (2.3 and 3.1), `Database db already exists`, `Table t already exists`.

Precision: a dotted name (`db.t`, `cat.db`, `cat.db.t`, and `@cat#db`) is a name wherever it stands, except in a
path or URI (`/warehouse/sales.db/t`); a longer chain (a Java class) never is. A bare word is a
name only where Hive puts one: the whole message (or a nested `...Exception(message:db)`), in
quotes, after `database`/`table`/`dbName:` or before ` database`; so a database called `default`
leaves "the default catalog" alone. Only whole identifiers match, case as Hive writes them
(lower): `default` is not in `defaults` or `fed1_default`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hmsproxy.pipeline.call import Call
from hmsproxy.protocol.results import declared_error
from hmsproxy.routing.methods import other_databases
from hmsproxy.routing.naming import split_catalog

#: Hive's identifiers, dotted chains of them (db.table, catalog.db.table), and a Hive 3 client's "@catalog#db".
_CHAIN = re.compile(r"@[A-Za-z0-9_]+#[A-Za-z0-9_]+|[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*")
#: The catalog Hive 3+ writes before a database when the client named none.
DEFAULT_CATALOG = "hive"
_QUOTES = "'\"`"
#: Text right before a bare database / table name, as Hive's messages and toString()s put it.
_DB_BEFORE = re.compile(r"\b(?:database|db|dbname|db_name|schema)(?:\s+named)?\s*[:=]?\s*$", re.IGNORECASE)
_DB_AFTER = re.compile(r"^\s+database\b", re.IGNORECASE)
_TABLE_BEFORE = re.compile(r"\b(?:table|tablename|table_name|tbl|tblname|tbl_name)(?:\s+named)?\s*[:=]?\s*$", re.IGNORECASE)
#: How far back a keyword before a bare name is looked for.
_LOOK_BACK = 24


@dataclass(frozen=True)
class ClientNames:
    """The names one call's metastore uses and what the client called them."""

    #: The metastore's database -> the client's, for every database the call names.
    databases: dict[str, str]
    #: (the metastore's database, its table) -> the client's table name (remote tables' local names).
    tables: dict[tuple[str, str], str]
    catalogs: frozenset[str]

    @property
    def differ(self) -> bool:
        return bool(self.tables) or any(b != c for b, c in self.databases.items())

    def rewrite(self, message: str) -> str:
        """`message` with each name of this call as the client wrote it."""
        return _CHAIN.sub(lambda m: self._swap(m, message), message)

    def _swap(self, m: re.Match, message: str) -> str:
        text, start, end = m.group(), m.start(), m.end()
        if (start and message[start - 1] in "/\\") or message[end : end + 1] in ("/", "\\"):
            return text  # a path or URI: the metastore's files keep their names
        dbs = self.databases
        if text[0] == "@":  # "@hive#db", as Hive 3 clients send a database's name
            catalog, db = text[1:].split("#", 1)
            return f"@{catalog}#{dbs[db]}" if db in dbs else text
        parts = text.split(".")
        if len(parts) == 1:
            return self._bare(text, message, start, end)
        if len(parts) == 2:
            first, second = parts
            if first in self.catalogs and second in dbs:  # 4.0's "database hive.db"
                return f"{first}.{dbs[second]}"
            if first in dbs:
                return f"{dbs[first]}.{self.tables.get((first, second), second)}"
            return text
        if len(parts) == 3 and parts[0] in self.catalogs and parts[1] in dbs:
            catalog, db, table = parts
            return f"{catalog}.{dbs[db]}.{self.tables.get((db, table), table)}"
        return text

    def _bare(self, word: str, message: str, start: int, end: int) -> str:
        before, after = message[max(0, start - _LOOK_BACK) : start], message[end:]
        if word in self.databases and self.databases[word] != word:
            if _stands_alone(message, start, end) or _DB_BEFORE.search(before) or _DB_AFTER.match(after):
                return self.databases[word]
        for (_, table), client in self.tables.items():
            if word == table and (_stands_alone(message, start, end) or _TABLE_BEFORE.search(before)):
                return client
        return word


def _stands_alone(message: str, start: int, end: int) -> bool:
    """The whole message, a nested exception's whole message, or in quotes."""
    before, after = message[:start], message[end:]
    if before and after and before[-1] in _QUOTES and after[0] == before[-1]:
        return True
    return (not before.strip() or before.endswith("message:")) and (not after.strip() or after.startswith(")"))


def names_of(call: Call) -> ClientNames | None:
    """What `call`'s metastore calls its databases and tables and what the client called them;
    None when they are the same (the cheap answer for most calls). After the call went out: its
    arguments hold the metastore's names then (handler._forward rewrote them)."""
    route = call.route
    if route is None or (route.naming.identity and not route.renamed_tables):
        return None
    naming = route.naming
    databases = {}
    if route.backend_db:  # else nothing named a database, and the arguments kept the client's names
        for db in other_databases(call.spec, call.args) + _altered_db(call):
            backend = split_catalog(db)[1].lower()
            databases[backend] = naming.to_client(backend)
        # Last: the name the client used wins over the alias to_client gives.
        databases[route.backend_db] = split_catalog(call.client_db)[1].lower() if call.client_db else naming.to_client(route.backend_db)
    tables = {(route.backend_db, backend): client for backend, client in route.renamed_tables}
    names = ClientNames(databases, tables, frozenset(c for c in (DEFAULT_CATALOG, route.catalog) if c))
    return names if names.differ else None


def _altered_db(call: Call) -> list[str]:
    """alter_table's new database (a rename across databases names both)."""
    if not call.spec.alters_table:
        return []
    db = getattr(call.spec.altered_table(call.args), "dbName", None)
    return [db] if db else []


def in_client_names(call: Call, result) -> None:
    """Rewrite, in place, the message of each declared exception `result` carries."""
    route = call.route
    if route is None or (route.naming.identity and not route.renamed_tables):
        return  # the hot path: nothing renamed, nothing looked at
    error = declared_error(result)
    if error is None or not getattr(error, "message", None):
        return
    names = names_of(call)
    if names is None:
        return
    error.message = names.rewrite(error.message)

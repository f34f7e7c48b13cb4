"""Which calls the cache answers, what they are about, and what a write makes stale.

Everything here speaks the backend's names (the args after name rewriting), the same names
the metastore's notification log uses.

In: reads whose answer depends only on the metadata named in the call — tables, databases,
partitions and their names, fields/schemas, table objects by name, table lists of a database.
Out: `*_with_auth` calls (the answer carries the caller's privileges), statistics (written by
calls that may not name a table the way reads do), listings across databases (fan-out), and
everything of transactions, locks, functions, roles, tokens and notifications.
"""

from __future__ import annotations

from dataclasses import dataclass

from hmsproxy.routing.methods import METHOD_SPECS, MethodSpec, locate

#: Calls answered about one table (scope: database and table).
TABLE_READS = frozenset(
    {
        "get_table",
        "get_table_req",
        "get_partition",
        "get_partition_by_name",
        "get_partitions",
        "get_partitions_ps",
        "get_partition_names",
        "get_partition_names_ps",
        "get_partitions_by_filter",
        "get_partitions_by_names",
        "get_partitions_by_expr",
        "get_partitions_req",
        "get_fields",
        "get_fields_with_environment_context",
        "get_schema",
        "get_schema_with_environment_context",
    }
)
#: Calls answered about one database as a whole (scope: the database, no table).
DATABASE_READS = frozenset(
    {
        "get_database",
        "get_database_req",
        "get_all_tables",
        "get_tables",
        "get_tables_by_type",
        "get_table_objects_by_name",
        "get_table_objects_by_name_req",
    }
)
CACHEABLE = TABLE_READS | DATABASE_READS


@dataclass(frozen=True)
class Scope:
    """What an entry is about, or what a write touches: a database (table None), or one table of it."""

    db: str | None  # None: anything (a write the cache cannot place)
    table: str | None = None


EVERYTHING = Scope(None)


def read_scope(spec: MethodSpec, args) -> Scope | None:
    """The scope of a cacheable call's answer; None: not cacheable."""
    if spec.name not in CACHEABLE:
        return None
    db = locate(args, spec.db) if spec.db else None
    if not isinstance(db, str) or not db:
        return None
    if spec.name in DATABASE_READS:
        return Scope(_plain(db))
    table = locate(args, spec.table) if spec.table else None
    return Scope(_plain(db), table.lower()) if isinstance(table, str) and table else None


def write_scopes(spec: MethodSpec, args) -> list[Scope]:
    """What a write makes stale: its table (a rename: both names), its database, or everything."""
    db = locate(args, spec.db) if spec.db else None
    if not isinstance(db, str) or not db:
        return [EVERYTHING]
    db = _plain(db)
    if spec.table is None or spec.creates_database or spec.drops_database:
        return [Scope(db)]
    table = locate(args, spec.table)
    if not isinstance(table, str) or not table:
        return [Scope(db)]
    scopes = [Scope(db, table.lower())]
    if spec.alters_table:
        new = spec.altered_table(args)
        if new is not None and new.tableName and (new.tableName.lower(), _plain(new.dbName or db)) != (table.lower(), db):
            scopes.append(Scope(_plain(new.dbName or db), new.tableName.lower()))
    if spec.second_db is not None:  # exchange_partition: the other table changes too
        other = locate(args, spec.second_db)
        if isinstance(other, str) and other:
            scopes.append(Scope(_plain(other)))
    return scopes


def event_scope(db: str | None, table: str | None) -> Scope:
    """What a notification-log event makes stale."""
    if not db:
        return EVERYTHING
    return Scope(_plain(db), table.lower() if table else None)


def _plain(db: str) -> str:
    """A database name without Hive 3's "@catalog#" marker, lower case."""
    if db.startswith("@") and "#" in db:
        db = db.split("#", 1)[1]
    return db.lower()


def spec(method: str) -> MethodSpec:
    return METHOD_SPECS[method]

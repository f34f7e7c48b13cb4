"""One spec per Thrift method: how the proxy handles it.

Specs are derived from the IDL (where a database or table name sits in the
arguments) plus a few short tables of exceptions; a contract test checks that
every method of the service has one and that routed methods know their db.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from functools import cached_property

from thriftpy2.thrift import TType

from hmsproxy.protocol import idl
from hmsproxy.routing.rewrite import DB_NAME_FIELDS, args_db_fields
from hmsproxy.routing.table_rewrite import TABLE_NAMED_BY_NAME_ARG


class Kind(enum.Enum):
    ROUTED = "routed"  # goes to the backend that owns the database named in the call
    FANOUT = "fanout"  # asked of every backend, answers merged
    PRIMARY = "primary"  # names no database: the primary metastore answers
    LOCAL = "local"  # the proxy answers itself


#: fb303 status calls and the proxy's own calls, answered without a backend.
LOCAL_METHODS = frozenset(
    {
        "getName",
        "getVersion",
        "getStatus",
        "getStatusDetails",
        "getCounters",
        "getCounter",
        "setOption",
        "getOption",
        "getOptions",
        "getCpuProfile",
        "aliveSince",
        "reinitialize",
        "shutdown",
        "hmsproxy_describe",
        "hmsproxy_execute",
        "hmsproxy_execute_script",
    }
)
FANOUT_METHODS = frozenset({"get_all_databases", "get_databases", "get_table_meta", "set_ugi", "get_all_functions"})
#: Calls that change metadata. Everything else only reads.
WRITE_PREFIXES = (
    "create_",
    "drop_",
    "alter_",
    "add_",
    "append_",
    "rename_",
    "exchange_",
    "update_",
    "delete_",
    "markPartitionForEvent",
    "set_aggr_stats_for",
    "grant_",
    "revoke_",
    "cache_file_metadata",
    "put_file_metadata",
    "clear_file_metadata",
    "compact",
    "fire_listener_event",
    "truncate_",
    "setMetaConf",
)

#: Lock calls change metadata (locks are state in the metastore) though their names don't say so.
WRITE_METHODS = frozenset({"lock", "unlock", "check_lock", "allocate_table_write_ids"})
#: Calls on a metastore's transaction manager: they change transactions and locks, never the metadata a
#: relay decision rests on (routing, what a table is), so they leave every shortcut standing.
TRANSACTION_CALLS = frozenset(
    {
        "open_txns", "commit_txn", "abort_txn", "abort_txns", "lock", "check_lock", "unlock", "heartbeat",
        "heartbeat_txn_range", "allocate_table_write_ids", "show_locks", "show_compact",
    }
)  # fmt: skip
#: Calls that change something yet may be sent twice (Hive's TxnStore says so: committing or aborting
#: twice is a no-op, heartbeats and lock checks are safe to repeat). Like reads, they go again on a new
#: connection when a kept one turns out closed by the metastore (a restart while it was idle).
SAFE_TO_REPEAT = frozenset(
    {"commit_txn", "abort_txn", "abort_txns", "heartbeat", "heartbeat_txn_range", "check_lock", "unlock", "show_locks", "show_compact"}
)
#: Routed calls naming a second database that must live on the same metastore as the first.
SECOND_DB_ARGS = {"exchange_partition": ("dest_db",), "exchange_partitions": ("dest_db",)}
#: Routed calls whose table is the new object itself, not one that must already be visible.
TABLE_CREATING = frozenset({"create_table", "create_table_with_environment_context", "create_table_with_constraints", "create_table_req"})
TABLE_DROPPING = frozenset({"drop_table", "drop_table_with_environment_context", "drop_table_req"})
#: Calls sending a table's whole new state (a rename too), and where in their args it is.
TABLE_ALTERING = {
    "alter_table": ("new_tbl",),
    "alter_table_with_environment_context": ("new_tbl",),
    "alter_table_with_cascade": ("new_tbl",),
    "alter_table_req": ("req", "table"),
}
#: Database calls, in their Hive 2.3 and Hive 4 (request struct) forms.
DATABASE_CREATING = frozenset({"create_database", "create_database_req"})
DATABASE_DROPPING = frozenset({"drop_database", "drop_database_req"})
DATABASE_GETS = frozenset({"get_database", "get_database_req"})
#: Calls answering the table names of one database (a pattern, a type or a filter chooses which).
TABLE_NAME_LISTS = frozenset({"get_all_tables", "get_tables", "get_tables_by_type", "get_table_names_by_filter"})
#: Calls answering Table objects of one database by name, and one table by name.
TABLE_OBJECT_LISTS = frozenset({"get_table_objects_by_name", "get_table_objects_by_name_req"})
TABLE_GETS = frozenset({"get_table", "get_table_req"})
DATABASE_LISTS = frozenset({"get_all_databases", "get_databases"})

#: Table names among plain string arguments.
TABLE_NAME_ARGS = ("tbl_name", "table_name", "base_tbl_name", "source_table_name", "tableName")
#: Table-name fields inside request structs, next to the db field.
TABLE_NAME_FIELDS = ("tableName", "tblName", "tbl_name", "tablename", "table_name", "tableName")

Path = tuple  # attribute names and list indexes leading from the args struct to a value


@dataclass(frozen=True)
class MethodSpec:
    name: str
    kind: Kind
    db: Path | None = None  # where the database name is in the args
    table: Path | None = None  # where the table name is, for table-scoped calls
    writes: bool = False
    #: Only reads: a `get*` call that changes nothing (fb303's included). A read may use a metastore's
    #: read-only URIs, go again on a new connection, and leaves every relay shortcut standing.
    reads: bool = False
    #: May go again on a new connection if the metastore closed a kept one (reads and SAFE_TO_REPEAT).
    repeatable: bool = False
    creates_database: bool = False
    oneway: bool = False
    #: Where a second database sits that must be on the same metastore (exchange_partition's dest_db).
    second_db: Path | None = None

    def named(self, args) -> tuple[str | None, str | None]:
        """The database and the table a call names (None where it names none)."""
        return locate(args, self.db) if self.db else None, locate(args, self.table) if self.table else None

    # -- traits: what kind of call this is, for features that care -----------------------

    @property
    def creates_table(self) -> bool:
        return self.name in TABLE_CREATING

    @property
    def drops_table(self) -> bool:
        return self.name in TABLE_DROPPING

    @property
    def alters_table(self) -> bool:
        return self.name in TABLE_ALTERING

    def altered_table(self, args):
        """The Table an alters_table call sends (None if it sends none)."""
        value = args
        for step in TABLE_ALTERING[self.name]:
            value = getattr(value, step, None) if value is not None else None
        return value

    @property
    def drops_database(self) -> bool:
        return self.name in DATABASE_DROPPING

    @property
    def gets_database(self) -> bool:
        return self.name in DATABASE_GETS

    def new_database(self, args):
        """The Database a creates_database call creates."""
        request = getattr(args, "createDatabaseRequest", None)
        return args.database if request is None else database_from_request(request)

    def new_table(self, args):
        """The Table a creates_table call creates."""
        request = getattr(args, "request", None)
        return args.tbl if request is None else request.table

    @property
    def lists_table_names(self) -> bool:
        return self.name in TABLE_NAME_LISTS

    @property
    def lists_table_objects(self) -> bool:
        return self.name in TABLE_OBJECT_LISTS

    @property
    def gets_table(self) -> bool:
        return self.name in TABLE_GETS

    @property
    def lists_databases(self) -> bool:
        return self.name in DATABASE_LISTS

    @cached_property
    def db_list(self) -> tuple[Path, Path] | None:
        """(path to a list, path inside each element) when the db sits in list elements: every
        element names a database (add_partitions' parts, lock's components), not only the first."""
        if self.db is None or 0 not in self.db:
            return None
        i = self.db.index(0)
        return self.db[:i], self.db[i + 1 :]

    @cached_property
    def args_cls(self) -> type:
        return getattr(idl.HmsProxy, self.name + "_args")

    @cached_property
    def result_cls(self) -> type:
        return getattr(idl.HmsProxy, self.name + "_result")

    @cached_property
    def success_type(self) -> tuple | None:
        """(ttype, nested spec) of the return value, or None for void."""
        spec = self.result_cls.thrift_spec.get(0)
        if spec is None:
            return None
        return spec[0], (spec[2] if len(spec) > 3 else None)

    @cached_property
    def exceptions(self) -> tuple[tuple[str, type], ...]:
        """(result field, exception class) pairs the IDL declares, in id order."""
        spec = self.result_cls.thrift_spec
        return tuple((spec[k][1], spec[k][2]) for k in sorted(spec) if k != 0)


def _struct_path_to_db(cls: type, depth: int = 0) -> Path | None:
    """The shortest path inside struct `cls` to a field holding a database name."""
    fields = DB_NAME_FIELDS.get(cls.__name__)
    if fields:
        for v in sorted(cls.thrift_spec.items()):
            if v[1][1] in fields:
                return (v[1][1],)
    if depth >= 3:
        return None
    for _, v in sorted(cls.thrift_spec.items()):
        ttype, fname = v[0], v[1]
        nested = v[2] if len(v) > 3 else None
        if ttype == TType.STRUCT:
            sub = _struct_path_to_db(nested, depth + 1)
            if sub:
                return (fname, *sub)
        elif ttype == TType.LIST and isinstance(nested, tuple) and nested[0] == TType.STRUCT:
            sub = _struct_path_to_db(nested[1], depth + 1)
            if sub:
                return (fname, 0, *sub)
    return None


def _sibling_table_field(cls: type, db_path: Path) -> Path | None:
    """The table-name field next to the db field at the end of `db_path`, if any."""
    target = cls
    for step in db_path[:-1]:
        if isinstance(step, int):
            continue
        spec = {v[1]: v for v in target.thrift_spec.values()}[step]
        nested = spec[2]
        target = nested[1] if spec[0] == TType.LIST else nested
    names = {v[1] for v in target.thrift_spec.values()}
    for candidate in TABLE_NAME_FIELDS:
        if candidate in names:
            return (*db_path[:-1], candidate)
    return None


def _derive(name: str) -> MethodSpec:
    result_cls = getattr(idl.HmsProxy, name + "_result")
    oneway = bool(getattr(result_cls, "oneway", False))
    writes = name.startswith(WRITE_PREFIXES) or name in WRITE_METHODS
    reads = name.startswith("get") and not writes  # the one place a call's name says its kind
    repeatable = reads or name in SAFE_TO_REPEAT
    if name in LOCAL_METHODS:
        return MethodSpec(name, Kind.LOCAL, reads=reads, repeatable=repeatable, oneway=oneway)
    if name in FANOUT_METHODS:
        return MethodSpec(name, Kind.FANOUT, writes=writes, reads=reads, repeatable=repeatable)
    args = getattr(idl.HmsProxy, name + "_args")
    ordered = [args.thrift_spec[k] for k in sorted(args.thrift_spec)]
    db_args = args_db_fields(name)
    db: Path | None = None
    table: Path | None = None
    for v in ordered:
        if v[1] in db_args:
            db = (v[1],)
            break
    if db is not None:
        for v in ordered:
            if v[1] in TABLE_NAME_ARGS or (v[1] == "name" and name in TABLE_NAMED_BY_NAME_ARG):
                table = (v[1],)
                break
    else:
        for v in ordered:
            if v[0] == TType.STRUCT:
                sub = _struct_path_to_db(v[2])
                if sub:
                    db = (v[1], *sub)
                    table = _sibling_table_field(args, db)
                    break
            elif v[0] == TType.LIST and isinstance(v[2], tuple) and v[2][0] == TType.STRUCT:
                sub = _struct_path_to_db(v[2][1])
                if sub:
                    db = (v[1], 0, *sub)
                    table = _sibling_table_field(args, db)
                    break
    if db is None:
        return MethodSpec(name, Kind.PRIMARY, writes=writes, reads=reads, repeatable=repeatable, oneway=oneway)
    return MethodSpec(
        name,
        Kind.ROUTED,
        db=db,
        table=table,
        writes=writes,
        reads=reads,
        repeatable=repeatable,
        creates_database=name in DATABASE_CREATING,
        oneway=oneway,
        second_db=SECOND_DB_ARGS.get(name),
    )


METHOD_SPECS: dict[str, MethodSpec] = {m: _derive(m) for m in idl.HmsProxy.thrift_services}


def locate(args, path: Path):
    """The value at `path` inside an args struct, or None where anything on the way is missing."""
    value = args
    for step in path:
        if value is None:
            return None
        if isinstance(step, int):
            value = value[step] if len(value) > step else None
        else:
            value = getattr(value, step, None)
    return value


def other_databases(spec: MethodSpec, args) -> list[str]:
    """The databases a call names besides the first (exchange_partition's dest_db, lock's other components)."""
    found = []
    if spec.second_db is not None:
        found.append(locate(args, spec.second_db))
    if spec.db_list is not None:
        list_path, in_element = spec.db_list
        found += [locate(element, in_element) for element in (locate(args, list_path) or [])[1:]]
    return [db for db in found if db]


def database_from_request(r):
    """The Database a create_database_req creates (what create_database would be sent)."""
    return idl.hive.Database(
        name=r.databaseName,
        description=r.description,
        locationUri=r.locationUri,
        parameters=r.parameters if r.parameters is not None else {},
        privileges=r.privileges,
        ownerName=r.ownerName,
        ownerType=r.ownerType,
        catalogName=r.catalogName,
    )

"""Database names inside Thrift structs, found and rewritten generically.

`DB_NAME_FIELDS` is the one list of (struct, field) pairs that hold a database
name. The walker uses each struct's `thrift_spec`, so it follows names into
lists, maps and nested structs without a hand-written case per type. A
contract test proves the list complete against the IDL.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable

from thriftpy2.thrift import TType

from hmsproxy import idl

#: Struct name -> the fields of that struct that hold a database name.
DB_NAME_FIELDS: dict[str, frozenset[str]] = {
    name: frozenset(fields)
    for name, fields in {
        "AddDynamicPartitions": {"dbname"},
        "AddPartitionsRequest": {"dbName"},
        "CacheFileMetadataRequest": {"dbName"},
        "ColumnStatisticsDesc": {"dbName"},
        "CompactionRequest": {"dbname"},
        "Database": {"name"},
        "DropConstraintRequest": {"dbname"},
        "DropPartitionsRequest": {"dbName"},
        "FireEventRequest": {"dbName"},
        "ForeignKeysRequest": {"parent_db_name", "foreign_db_name"},
        "Function": {"dbName"},
        "GetTableRequest": {"dbName"},
        "GetTablesRequest": {"dbName"},
        "HiveObjectRef": {"dbName"},
        "Index": {"dbName"},
        "LockComponent": {"dbname"},
        "NotificationEvent": {"dbName"},
        "Partition": {"dbName"},
        "PartitionSpec": {"dbName"},
        "PartitionValuesRequest": {"dbName"},
        "PartitionsByExprRequest": {"dbName"},
        "PartitionsStatsRequest": {"dbName"},
        "PrimaryKeysRequest": {"db_name"},
        "SQLForeignKey": {"pktable_db", "fktable_db"},
        "SQLPrimaryKey": {"table_db"},
        "ShowCompactResponseElement": {"dbname"},
        "ShowLocksRequest": {"dbname"},
        "ShowLocksResponseElement": {"dbname"},
        "Table": {"dbName"},
        "TableMeta": {"dbName"},
        "TableStatsRequest": {"dbName"},
    }.items()
}

#: Plain string arguments of service methods that hold a database name.
DB_NAME_ARGS = frozenset({"dbname", "db_name", "dbName", "source_db", "dest_db"})
#: Methods whose argument called `name` is a database name.
DB_NAMED_BY_NAME_ARG = frozenset({"get_database", "drop_database"})

Rename = Callable[[str], str]


def _is_db_arg(method: str, field: str) -> bool:
    return field in DB_NAME_ARGS or (field == "name" and method in DB_NAMED_BY_NAME_ARG)


def args_db_fields(method: str) -> frozenset[str]:
    """The top-level arguments of `method` that are database names."""
    spec = getattr(idl.HmsProxy, method + "_args").thrift_spec
    return frozenset(v[1] for v in spec.values() if v[0] == TType.STRING and _is_db_arg(method, v[1]))


@lru_cache(maxsize=None)
def _plan(cls: type) -> tuple | None:
    """What to visit in instances of `cls`: (db fields, [(field, kind, nested)]), or None if nothing."""
    db_fields = DB_NAME_FIELDS.get(cls.__name__, frozenset())
    if cls.__name__.endswith("_args"):
        db_fields = args_db_fields(cls.__name__[: -len("_args")])
    children = []
    for v in cls.thrift_spec.values():
        ttype, fname = v[0], v[1]
        nested = v[2] if len(v) > 3 else None
        sub = _container_plan(ttype, nested)
        if sub is not None:
            children.append((fname, sub))
    if not db_fields and not children:
        return None
    return db_fields, tuple(children)


def _container_plan(ttype: int, nested) -> tuple | None:
    """A visitor description for a value of type (ttype, nested), or None if it holds no db names."""
    if ttype == TType.STRUCT:
        return ("struct", nested) if _plan(nested) is not None else None
    if ttype in (TType.LIST, TType.SET):
        etype, enested = nested if isinstance(nested, tuple) else (nested, None)
        inner = _container_plan(etype, enested)
        return ("list", inner) if inner else None
    if ttype == TType.MAP:
        (ktype, vtype) = nested
        kt, kn = ktype if isinstance(ktype, tuple) else (ktype, None)
        vt, vn = vtype if isinstance(vtype, tuple) else (vtype, None)
        kplan, vplan = _container_plan(kt, kn), _container_plan(vt, vn)
        return ("map", kplan, vplan) if (kplan or vplan) else None
    return None


def _visit(value, plan, rename: Rename) -> None:
    if value is None:
        return
    kind = plan[0]
    if kind == "struct":
        rewrite_struct(value, rename)
    elif kind == "list":
        for item in value:
            _visit(item, plan[1], rename)
    elif kind == "map":
        for k, v in value.items():
            if plan[1]:
                _visit(k, plan[1], rename)
            if plan[2]:
                _visit(v, plan[2], rename)


def rewrite_struct(obj, rename: Rename) -> None:
    """Rewrite, in place, every database name inside `obj` with `rename`."""
    plan = _plan(type(obj))
    if plan is None:
        return
    db_fields, children = plan
    for f in db_fields:
        name = getattr(obj, f, None)
        if name is not None:
            setattr(obj, f, rename(name))
    for fname, sub in children:
        _visit(getattr(obj, fname, None), sub, rename)


def rewrite_value(value, thrift_type: tuple, rename: Rename) -> None:
    """Rewrite db names inside a result value whose (ttype, nested) comes from a result spec."""
    ttype, nested = thrift_type
    plan = _container_plan(ttype, nested)
    if plan is not None:
        _visit(value, plan, rename)


def holds_db_names(cls: type) -> bool:
    return _plan(cls) is not None

"""The routing tables are complete: every method has a spec, every db-name field is rewritten,
and rewriting in then out gives back what the client sent."""

import copy
import re

import pytest
from thriftpy2.thrift import TType

from hmsproxy.config.model import Config, DatabaseResolution, MetastoreConfig, ServerConfig
from hmsproxy.protocol import idl
from hmsproxy.routing.methods import METHOD_SPECS, Kind, locate
from hmsproxy.routing.rewrite import DB_NAME_FIELDS, rewrite_struct
from hmsproxy.routing.router import Router

#: Fields whose names look like database names but are not.
NOT_DB_NAMES = {
    ("Database", "locationUri"),
    ("Database", "catalogName"),
    ("CreateDatabaseRequest", "remote_dbname"),  # a database behind a Hive 4 data connector, not one of ours
    # Filters of a notification log, not where the call goes: the log is the primary's, or the merged
    # one, whose filters features/notifications/filters.py translates itself.
    ("NotificationEventRequest", "dbName"),
    ("NotificationEventsCountRequest", "dbName"),
}
DB_LIKE = re.compile(r"(^|_)db(_|$)|dbname|db_?name|database|_db$", re.IGNORECASE)


def all_structs():
    mod = idl.hive
    for name in dir(mod):
        cls = getattr(mod, name)
        if isinstance(cls, type) and isinstance(getattr(cls, "thrift_spec", None), dict):
            yield name, cls


def test_every_method_has_a_spec():
    assert set(METHOD_SPECS) == set(idl.HmsProxy.thrift_services)


def test_routed_methods_locate_a_string_database_name():
    for spec in METHOD_SPECS.values():
        if spec.kind is not Kind.ROUTED:
            continue
        assert spec.db, spec.name
        # Walk the spec along the path: every step must exist and end on a string.
        cls, ttype, elem = spec.args_cls, TType.STRUCT, None
        for step in spec.db:
            if isinstance(step, int):
                assert ttype == TType.LIST, (spec.name, spec.db)
                ttype, cls = elem
                continue
            fields = {v[1]: v for v in cls.thrift_spec.values()}
            assert step in fields, (spec.name, step)
            v = fields[step]
            ttype = v[0]
            if ttype == TType.STRUCT:
                cls = v[2]
            elif ttype == TType.LIST:
                elem = v[2] if isinstance(v[2], tuple) else (v[2], None)
        assert ttype == TType.STRING, (spec.name, spec.db)


def test_every_db_name_field_is_in_the_rewrite_table():
    missing = []
    for name, cls in all_structs():
        for v in cls.thrift_spec.values():
            if v[0] == TType.STRING and (DB_LIKE.search(v[1]) or (name == "Database" and v[1] == "name")):
                if v[1] not in DB_NAME_FIELDS.get(name, ()) and (name, v[1]) not in NOT_DB_NAMES:
                    missing.append(f"{name}.{v[1]}")
    assert not missing, f"db-name fields not in DB_NAME_FIELDS: {missing}"


def test_rewrite_table_names_real_fields():
    structs = dict(all_structs())
    for name, fields in DB_NAME_FIELDS.items():
        assert name in structs, name
        names = {v[1] for v in structs[name].thrift_spec.values()}
        assert fields <= names, (name, fields - names)


def sample(ttype, nested, depth):
    if ttype == TType.STRING:
        return "waggle_sales"
    if ttype in (TType.I16, TType.I32, TType.I64, TType.BYTE):
        return 1
    if ttype == TType.BOOL:
        return True
    if ttype == TType.DOUBLE:
        return 1.0
    if ttype == TType.STRUCT:
        return build(nested, depth + 1) if depth < 4 else None
    if ttype in (TType.LIST, TType.SET):
        et, en = nested if isinstance(nested, tuple) else (nested, None)
        item = sample(et, en, depth)
        return [] if item is None else [item]
    if ttype == TType.MAP:
        (kt, vt) = nested
        kt, kn = kt if isinstance(kt, tuple) else (kt, None)
        vt, vn = vt if isinstance(vt, tuple) else (vt, None)
        k, v = sample(kt, kn, depth), sample(vt, vn, depth)
        return {} if k is None or v is None or isinstance(k, (list, dict)) else {k: v}
    return None


def build(cls, depth=0):
    obj = cls()
    for v in cls.thrift_spec.values():
        setattr(obj, v[1], sample(v[0], v[2] if len(v) > 3 else None, depth))
    return obj


def as_tuple(obj):
    if hasattr(obj, "thrift_spec"):
        return tuple((k, as_tuple(v)) for k, v in sorted(vars(obj).items()))
    if isinstance(obj, list):
        return tuple(as_tuple(x) for x in obj)
    if isinstance(obj, dict):
        return tuple(sorted((as_tuple(k), as_tuple(v)) for k, v in obj.items()))
    return obj


@pytest.fixture(scope="module")
def waggle_route():
    primary = MetastoreConfig("primary", ("thrift://127.0.0.1:1",), primary=True)
    fed = MetastoreConfig("waggle", ("thrift://127.0.0.1:2",), database_prefix="waggle_", database_name_mapping={"sales_remote": "sales"})
    return Router(Config(ServerConfig(), DatabaseResolution.PREFIXED, primary, (fed,))).route("waggle_sales")


def test_inbound_then_outbound_is_identity(waggle_route):
    checked = 0
    for name, cls in all_structs():
        original = build(cls)
        obj = copy.deepcopy(original)
        rewrite_struct(obj, waggle_route.inbound)
        rewrite_struct(obj, waggle_route.outbound)
        assert as_tuple(obj) == as_tuple(original), name
        checked += 1
    assert checked > 100


def test_inbound_reaches_nested_names(waggle_route):
    args = idl.HmsProxy.add_partitions_args(new_parts=[idl.hive.Partition(dbName="waggle_sales", tableName="t")])
    rewrite_struct(args, waggle_route.inbound)
    assert args.new_parts[0].dbName == "sales_remote"
    assert locate(args, METHOD_SPECS["add_partitions"].db) == "sales_remote"
    stats = idl.hive.ColumnStatistics(statsDesc=idl.hive.ColumnStatisticsDesc(isTblLevel=True, dbName="waggle_sales", tableName="t"))
    rewrite_struct(stats, waggle_route.inbound)
    assert stats.statsDesc.dbName == "sales_remote"

"""The table-name rewrite table is complete: every struct field and method argument that looks
like a table name is rewritten (or explicitly excluded), and renaming in then out is the identity."""

import copy
import re

from thriftpy2.thrift import TType

from hmsproxy.protocol import idl
from hmsproxy.routing.methods import METHOD_SPECS, locate
from hmsproxy.routing.table_rewrite import (
    NOT_TABLE_NAMES,
    TABLE_NAME_FIELDS,
    args_table_fields,
    rewrite_table_value,
    rewrite_tables,
    table_renamer,
)
from tests.contract.test_routing_tables import all_structs, as_tuple, build

TABLE_LIKE = re.compile(r"tbl|table", re.IGNORECASE)
#: Method arguments that look like table names but are not one table's name.
NOT_TABLE_ARGS = {"tbl_patterns", "tbl_types", "max_tables", "tableType", "index_table", "new_tbl", "tbl"}


def _is_name(v) -> bool:
    nested = v[2] if len(v) > 3 else None
    return v[0] == TType.STRING or (v[0] in (TType.LIST, TType.SET) and nested == TType.STRING)


def test_every_table_name_field_is_in_the_rewrite_table():
    missing = []
    for name, cls in all_structs():
        for v in cls.thrift_spec.values():
            if _is_name(v) and TABLE_LIKE.search(v[1]) and not v[1].lower().endswith(("_db", "db")):
                if v[1] not in TABLE_NAME_FIELDS.get(name, ()) and (name, v[1]) not in NOT_TABLE_NAMES:
                    missing.append(f"{name}.{v[1]}")
    assert not missing, f"table-name fields not in TABLE_NAME_FIELDS: {missing}"


def test_rewrite_table_names_real_string_fields():
    structs = dict(all_structs())
    for name, fields in TABLE_NAME_FIELDS.items():
        assert name in structs, name
        specs = {v[1]: v for v in structs[name].thrift_spec.values()}
        for f in fields:
            assert f in specs and _is_name(specs[f]), (name, f)


def test_every_table_name_argument_is_rewritten():
    missing = []
    for method in idl.HmsProxy.thrift_services:
        fields = args_table_fields(method)
        for v in getattr(idl.HmsProxy, method + "_args").thrift_spec.values():
            if _is_name(v) and TABLE_LIKE.search(v[1]) and v[1] not in fields and v[1] not in NOT_TABLE_ARGS:
                missing.append(f"{method}({v[1]})")
    assert not missing, missing


def test_table_scoped_methods_rename_the_table_they_name():
    """Wherever a routed spec locates a table name, the rewrite reaches that same field."""
    checked = 0
    for spec in METHOD_SPECS.values():
        if not spec.table:
            continue
        args = build(spec.args_cls)
        if locate(args, spec.table) != "waggle_sales":
            continue
        rewrite_tables(args, table_renamer("waggle_sales", "remote_t"))
        assert locate(args, spec.table) == "remote_t", spec.name
        checked += 1
    assert checked > 50


def test_inbound_then_outbound_is_identity():
    inbound, outbound = table_renamer("waggle_sales", "remote_t"), table_renamer("remote_t", "waggle_sales")
    checked = 0
    for name, cls in all_structs():
        original = build(cls)
        obj = copy.deepcopy(original)
        rewrite_tables(obj, inbound)
        rewrite_tables(obj, outbound)
        assert as_tuple(obj) == as_tuple(original), name
        checked += 1
    assert checked > 100


def test_nested_and_listed_table_names_are_reached():
    rename = table_renamer("orders_link", "orders")
    args = idl.HmsProxy.add_partitions_args(new_parts=[idl.hive.Partition(dbName="d", tableName="ORDERS_LINK")])
    rewrite_tables(args, rename)
    assert args.new_parts[0].tableName == "orders"
    req = idl.HmsProxy.get_table_objects_by_name_req_args(req=idl.hive.GetTablesRequest(dbName="d", tblNames=["x", "orders_link"]))
    rewrite_tables(req, rename)
    assert req.req.tblNames == ["x", "orders"]
    stats = idl.hive.ColumnStatistics(statsDesc=idl.hive.ColumnStatisticsDesc(isTblLevel=True, dbName="d", tableName="orders_link"))
    rewrite_tables(stats, rename)
    assert stats.statsDesc.tableName == "orders"
    # Outbound: a result value (list of partitions) back to the local name.
    parts = [idl.hive.Partition(dbName="d", tableName="orders")]
    rewrite_table_value(parts, METHOD_SPECS["get_partitions"].success_type, table_renamer("orders", "orders_link"))
    assert parts[0].tableName == "orders_link"
    drop = idl.HmsProxy.drop_table_args(dbname="d", name="orders_link")
    rewrite_tables(drop, rename)
    assert drop.name == "orders"
    other = idl.HmsProxy.get_table_args(dbname="d", tbl_name="other")
    rewrite_tables(other, rename)
    assert other.tbl_name == "other"

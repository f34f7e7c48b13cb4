"""The virtual catalog: databases and tables that features add to what the metastores hold.

A feature contributes by overriding ``Feature.virtual_databases`` or ``Feature.virtual_tables``
(either or both; the catalog asks every installed feature that overrides one): remote
databases and tables, dependent tables' views. This module is the one place that puts them into every
listing answer, in each of its shapes:

- database lists: ``get_all_databases``, ``get_databases``;
- table lists of one database: ``get_all_tables``, ``get_tables``, ``get_tables_by_type``,
  ``get_table_names_by_filter``, ``get_table_objects_by_name(_req)``;
- ``get_table_meta`` across databases;
- ``get_table`` / ``get_table_req`` of a virtual table nobody routes (the catalog answers it).

A virtual object shadows a real one of the same name: listings show the virtual one only.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

from hmsproxy.pipeline.call import Call
from hmsproxy.pipeline.platform import Feature
from hmsproxy.protocol import idl
from hmsproxy.routing.methods import Kind, MethodSpec
from hmsproxy.routing.naming import join_catalog, split_catalog
from hmsproxy.routing.patterns import hive_match


@dataclass(frozen=True)
class VirtualTable:
    db: str  # local names, lower case
    name: str
    #: The Table clients see (local names), or None when it can't be had now (then it is left out).
    load: Callable[[Call], object | None]
    #: True: the feature routes calls on it itself (remote tables); False: the catalog answers get_table*.
    routed: bool = False
    #: get_table_names_by_filter: whether it matches the filter; None: never listed by filter.
    matches_filter: Callable[[Call, str], bool] | None = None


@dataclass(frozen=True)
class VirtualDatabase:
    name: str
    #: get_table_meta of its tables: (call, table patterns, table types) -> TableMetas with local names.
    table_metas: Callable[[Call, str, list | None], list]


def contributes(feature: Feature) -> bool:
    """Whether `feature` adds to the virtual catalog: it overrides either of Feature's empty defaults."""
    cls = type(feature)
    return cls.virtual_databases is not Feature.virtual_databases or cls.virtual_tables is not Feature.virtual_tables


LISTINGS = frozenset(
    {
        "get_all_databases",
        "get_databases",
        "get_all_tables",
        "get_tables",
        "get_tables_by_type",
        "get_table_names_by_filter",
        "get_table_objects_by_name",
        "get_table_objects_by_name_req",
        "get_table_meta",
        "get_table",
        "get_table_req",
    }
)


class Catalog(Feature):
    name = "catalog"
    memoizable_verdict = True  # its verdicts read only the call, the caller and its records
    methods = LISTINGS

    def __init__(self, platform):
        super().__init__(platform)
        self._sources_cache: list = []
        self._answering: list = []  # the sources whose tables the catalog may have to answer get_table for
        self._sources_of = -1  # how many features were installed when the caches were made

    def _sources(self) -> list:
        # Asked on every listing and get_table: remembered until another feature is installed.
        features = list(self.platform.features)
        if self._sources_of != len(features):
            self._sources_cache = [f for f in features if f is not self and contributes(f)]
            self._answering = [f for f in self._sources_cache if not f.routes_its_tables]
            self._sources_of = len(features)
        return self._sources_cache

    def databases(self, call: Call) -> list[VirtualDatabase]:
        return [d for s in self._sources() for d in s.virtual_databases(call)]

    def tables(self, call: Call, client_db: str | None) -> dict[str, VirtualTable]:
        """The virtual tables of a database (None: every database), by (lower-case) name / (db, name)."""
        if client_db is None:
            return {(t.db, t.name): t for s in self._sources() for t in s.virtual_tables(call, None)}
        db = split_catalog(client_db)[1].lower()
        return {t.name: t for s in self._sources() for t in s.virtual_tables(call, db)}

    # -- get_table of a table only the proxy knows ---------------------------------------

    def on_request(self, call: Call):
        if not call.spec.gets_table or not call.client_db or not call.table:
            return None
        self._sources()
        db, name = split_catalog(call.client_db)[1].lower(), call.table.lower()
        found = [t for s in self._answering for t in s.virtual_tables(call, db) if t.name == name and not t.routed]
        vt = found[0] if found else None
        if vt is None:
            return None
        table = vt.load(call)
        if table is None:
            return None
        call.backend = "hmsproxy"
        return _table_answer(call.spec, table)

    # -- listings ------------------------------------------------------------------------

    def needs_result(self, call: Call) -> bool:
        spec = call.spec
        return spec.lists_databases or spec.name == "get_table_meta" or spec.lists_table_names or spec.lists_table_objects

    def on_response(self, call: Call, result) -> None:
        spec = call.spec
        if getattr(result, "success", None) is None:
            return
        if spec.lists_databases:
            self._add_databases(call, result)
        elif spec.name == "get_table_meta":
            self._add_table_metas(call, result)
        elif spec.kind is Kind.ROUTED and call.client_db:
            if spec.lists_table_names:
                self._add_table_names(call, result)
            elif spec.lists_table_objects:
                self._add_table_objects(call, result)

    def _add_databases(self, call: Call, result) -> None:
        pattern = split_catalog(call.args.pattern or "*")[1] if call.spec.name == "get_databases" else None
        have = {n.lower() for n in result.success}
        for vd in self.databases(call):
            if vd.name not in have and hive_match(pattern, vd.name):
                result.success.append(vd.name)

    def _add_table_names(self, call: Call, result) -> None:
        virtual = self.tables(call, call.client_db)
        if not virtual:
            return
        args, name = call.args, call.spec.name
        have = {t.lower() for t in result.success}
        for vt in virtual.values():
            if vt.name in have or not hive_match(getattr(args, "pattern", None), vt.name):
                continue
            if name == "get_tables_by_type" and args.tableType:
                table = vt.load(call)
                if table is None or (table.tableType or "").upper() != args.tableType.upper():
                    continue
            if name == "get_table_names_by_filter" and (vt.matches_filter is None or not vt.matches_filter(call, args.filter)):
                continue
            result.success.append(vt.name)

    def _add_table_objects(self, call: Call, result) -> None:
        virtual = self.tables(call, call.client_db)
        req = call.args.req if call.spec.name == "get_table_objects_by_name_req" else None
        names = req.tblNames if req is not None else call.args.tbl_names
        wanted = [virtual[n.lower()] for n in names or [] if n.lower() in virtual]
        if not wanted:
            return
        tables = (result.success.tables or []) if req is not None else result.success
        tables = [t for t in tables if t.tableName.lower() not in {vt.name for vt in wanted}]
        catalog = split_catalog(call.client_db)[0]
        for vt in wanted:
            table = vt.load(call)
            if table is not None:
                table.dbName = join_catalog(catalog, vt.db)
                tables.append(table)
        if req is not None:
            result.success.tables = tables
        else:
            result.success = tables

    def _add_table_metas(self, call: Call, result) -> None:
        _, db_patterns = split_catalog(call.args.db_patterns or "*")
        tbl_patterns, tbl_types = call.args.tbl_patterns or "*", call.args.tbl_types
        databases = [vd for vd in self.databases(call) if hive_match(db_patterns, vd.name)]
        shadowed = {vd.name for vd in databases}
        metas = [m for m in result.success if m.dbName.lower() not in shadowed]
        for vd in databases:
            metas += vd.table_metas(call, tbl_patterns, tbl_types)
        added = []
        for (db, name), vt in sorted(self.tables(call, None).items()):
            if db in shadowed or not hive_match(db_patterns, db) or not hive_match(tbl_patterns, name):
                continue
            table = vt.load(call)
            if table is not None and (not tbl_types or table.tableType in tbl_types):
                added.append(_meta(db, name, table))
        replaced = {(m.dbName.lower(), m.tableName.lower()) for m in added}
        result.success = [m for m in metas if (m.dbName.lower(), m.tableName.lower()) not in replaced] + added


def _meta(db: str, name: str, table) -> object:
    comment = (table.parameters or {}).get("comment")
    return idl.hive.TableMeta(dbName=db, tableName=name, tableType=table.tableType, comments=comment)


def _table_answer(spec: MethodSpec, table):
    result = spec.result_cls()
    table = copy.copy(table)
    result.success = idl.hive.GetTableResult(table=table) if spec.name == "get_table_req" else table
    return result

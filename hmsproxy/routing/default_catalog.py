"""Hive 3 catalogs, for metastores that have none.

Answers: Hive 3 and newer clients expect every Database, Table and Partition to name its
catalog (pymetastore asserts `Partition.catName` is a string); a Hive 2.3 metastore leaves
the field unset. The proxy fills in Hive's default catalog where it is missing. Database's
and Partition's fields have the same id and type in every Hive version; Table's is the
Hive 3 one (id 17, `catNameHive3` in our IDL), which 2.3 clients skip as unknown.

Requests: Hive 3 clients write "@hive#db" where a database name goes. A metastore older
than Hive 3 knows no such names, so the handler sends it "db" (`without_default_catalog`).
"""

from __future__ import annotations

import functools
import struct

from thriftpy2.thrift import TType

from hmsproxy.protocol.relay import CatalogFill
from hmsproxy.routing.naming import split_catalog

DEFAULT_CATALOG = "hive"
#: struct name -> its catalog field.
CATALOG_FIELDS = {"Database": "catalogName", "Partition": "catName", "Table": "catNameHive3"}


def without_default_catalog(name: str) -> str:
    """ "db" from "@hive#db"; any other name (another catalog, no catalog) as it is."""
    catalog, db = split_catalog(name)
    return db if catalog is not None and catalog.lower() == DEFAULT_CATALOG and db else name


_plans: dict[type, tuple | None] = {}


def _plan(cls: type) -> tuple | None:
    """(catalog field or None, [(field, container plan)]) for `cls`; None when it can hold no such struct."""
    if cls in _plans:
        return _plans[cls]
    _plans[cls] = None  # recursive structs: assume nothing while planning
    own = CATALOG_FIELDS.get(cls.__name__)
    children = []
    for spec in cls.thrift_spec.values():
        sub = _container(spec[0], spec[2] if len(spec) > 3 else None)
        if sub is not None:
            children.append((spec[1], sub))
    plan = (own, tuple(children)) if (own or children) else None
    _plans[cls] = plan
    return plan


def _container(ttype: int, nested) -> tuple | None:
    if ttype == TType.STRUCT:
        return ("struct",) if _plan(nested) is not None else None
    if ttype in (TType.LIST, TType.SET):
        inner = _container(*nested) if isinstance(nested, tuple) else None
        return ("list", inner) if inner else None
    return None  # no answer keeps these structs in maps


@functools.cache
def catalog_fill(success_type: tuple | None) -> CatalogFill | None:
    """Where an answer of this type holds Databases, Tables and Partitions, and each one's catalog
    as one encoded field: what the relay inserts as it copies an older metastore's answer
    (protocol/relay.py), by the same plan `fill_default_catalog` follows on a decoded one.
    None when the answer can hold no such struct."""
    return _fill(*success_type) if success_type is not None else None


_fills: dict[type, CatalogFill | None] = {}


def _fill(ttype: int, nested) -> CatalogFill | None:
    if ttype == TType.STRUCT:
        return _struct_fill(nested)
    if ttype in (TType.LIST, TType.SET) and isinstance(nested, tuple):
        inner = _fill(*nested)
        return CatalogFill(element=inner) if inner is not None else None
    return None  # maps: as in _container


def _struct_fill(cls: type) -> CatalogFill | None:
    if cls in _fills:
        return _fills[cls]
    _fills[cls] = None  # recursive structs: as in _plan
    plan = _plan(cls)
    fill = None
    if plan is not None:
        own, fields = plan[0], {}
        fid = next((fid for fid, spec in cls.thrift_spec.items() if spec[1] == own), 0)
        for child_fid, spec in cls.thrift_spec.items():
            sub = _fill(spec[0], spec[2] if len(spec) > 3 else None)
            if sub is not None:
                fields[child_fid] = sub
        field = struct.pack("!bhi", TType.STRING, fid, len(DEFAULT_CATALOG)) + DEFAULT_CATALOG.encode() if own else None
        fill = CatalogFill(field, fid, fields)
    _fills[cls] = fill
    return fill


def fill_default_catalog(value, success_type: tuple | None) -> None:
    """Set the default catalog on every Database and Partition in an answer that lacks one."""
    if value is None or success_type is None:
        return
    plan = _container(*success_type)
    if plan is not None:
        _visit(value, plan)


def _visit(value, plan: tuple) -> None:
    if value is None:
        return
    if plan[0] == "list":
        for item in value:
            _visit(item, plan[1])
        return
    struct_plan = _plan(type(value))
    if struct_plan is None:
        return
    own, children = struct_plan
    if own is not None and getattr(value, own) is None:
        setattr(value, own, DEFAULT_CATALOG)
    for name, sub in children:
        _visit(getattr(value, name), sub)

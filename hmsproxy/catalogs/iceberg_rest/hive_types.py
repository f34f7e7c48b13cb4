"""Iceberg's types (as table metadata JSON writes them) in Hive's type names, the way Iceberg's own
Hive catalog (HiveSchemaUtil, pyiceberg's SchemaToHiveConverter with Hive 2 compatibility) writes
a table's columns. Types Hive has no name for are mapped to what readers can at least list; the
table in docs/remotes.md is this module's mapping.
"""

from __future__ import annotations

import re

_PRIMITIVES = {
    "boolean": "boolean",
    "int": "int",
    "long": "bigint",
    "float": "float",
    "double": "double",
    "date": "date",
    "time": "string",
    "timestamp": "timestamp",
    "timestamptz": "timestamp",  # Hive 2 has no "timestamp with local time zone"
    "timestamp_ns": "timestamp",
    "timestamptz_ns": "timestamp",
    "string": "string",
    "uuid": "string",
    "binary": "binary",
    "unknown": "void",  # always null, as pyiceberg's Hive catalog writes it
    # Stored as binary (WKB; variant's metadata and value): no Hive type reads them as such.
    "variant": "binary",
}

_DECIMAL = re.compile(r"decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)")
_FIXED = re.compile(r"fixed\[\s*\d+\s*\]")
_GEO = re.compile(r"(geometry|geography)(\(.*\))?")


class UnknownIcebergType(ValueError):
    pass


def hive_type(iceberg) -> str:
    """The Hive type name of an Iceberg type: a string (primitive) or a dict (struct, list, map)."""
    if isinstance(iceberg, dict):
        kind = iceberg.get("type")
        if kind == "struct":
            return "struct<" + ",".join(f"{f['name']}:{hive_type(f['type'])}" for f in iceberg.get("fields", ())) + ">"
        if kind == "list":
            return f"array<{hive_type(iceberg['element'])}>"
        if kind == "map":
            return f"map<{hive_type(iceberg['key'])},{hive_type(iceberg['value'])}>"
        raise UnknownIcebergType(f"unknown Iceberg type {iceberg!r}")
    name = str(iceberg).strip().lower()
    if name in _PRIMITIVES:
        return _PRIMITIVES[name]
    decimal = _DECIMAL.fullmatch(name)
    if decimal:
        return f"decimal({decimal.group(1)},{decimal.group(2)})"
    if _FIXED.fullmatch(name) or _GEO.fullmatch(name):
        return "binary"
    raise UnknownIcebergType(f"unknown Iceberg type {iceberg!r}")

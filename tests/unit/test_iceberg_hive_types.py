"""Iceberg types in Hive's names (the table in docs/remotes.md)."""

from __future__ import annotations

import pytest

from hmsproxy.catalogs.iceberg_rest.hive_types import UnknownIcebergType, hive_type


@pytest.mark.parametrize(
    "iceberg, hive",
    [
        ("boolean", "boolean"),
        ("int", "int"),
        ("long", "bigint"),
        ("float", "float"),
        ("double", "double"),
        ("date", "date"),
        ("time", "string"),
        ("timestamp", "timestamp"),
        ("timestamptz", "timestamp"),
        ("timestamp_ns", "timestamp"),
        ("timestamptz_ns", "timestamp"),
        ("string", "string"),
        ("uuid", "string"),
        ("binary", "binary"),
        ("fixed[16]", "binary"),
        ("decimal(9, 2)", "decimal(9,2)"),
        ("decimal(38,0)", "decimal(38,0)"),
        ("variant", "binary"),
        ("geometry", "binary"),
        ("geography(srid:4326, spherical)", "binary"),
        ("unknown", "void"),
    ],
)
def test_primitives(iceberg, hive):
    assert hive_type(iceberg) == hive


def test_nested_types():
    address = {"type": "struct", "fields": [{"id": 2, "name": "city", "type": "string"}, {"id": 3, "name": "zip", "type": "int"}]}
    listed = {"type": "list", "element-id": 4, "element": address, "element-required": False}
    mapped = {"type": "map", "key-id": 5, "key": "string", "value-id": 6, "value": listed, "value-required": False}
    assert hive_type(mapped) == "map<string,array<struct<city:string,zip:int>>>"


@pytest.mark.parametrize("iceberg", ["interval", {"type": "union"}])
def test_unknown_types_are_named(iceberg):
    with pytest.raises(UnknownIcebergType, match="unknown Iceberg type"):
        hive_type(iceberg)

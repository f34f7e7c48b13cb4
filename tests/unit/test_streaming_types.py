"""Hive type strings to Arrow types, and values from delimited text and JSON into them."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pyarrow as pa
import pytest

from hmsproxy.streaming.types import arrow_type, json_converter, parse_type, text_converter

TS = datetime.datetime(2026, 11, 25, 12, 30, 45, 123456)


@pytest.mark.parametrize(
    ("hive", "arrow"),
    [
        ("tinyint", pa.int8()),
        ("smallint", pa.int16()),
        ("int", pa.int32()),
        ("INTEGER", pa.int32()),
        ("bigint", pa.int64()),
        ("float", pa.float32()),
        ("double", pa.float64()),
        ("decimal(10,2)", pa.decimal128(10, 2)),
        ("decimal", pa.decimal128(10, 0)),
        ("decimal(7)", pa.decimal128(7, 0)),
        ("string", pa.string()),
        ("varchar(20)", pa.string()),
        ("char(5)", pa.string()),
        ("boolean", pa.bool_()),
        ("date", pa.date32()),
        ("timestamp", pa.timestamp("us")),
        ("binary", pa.binary()),
        ("array<int>", pa.list_(pa.int32())),
        ("map<string,int>", pa.map_(pa.string(), pa.int32())),
        ("struct<a:int,B:string>", pa.struct([("a", pa.int32()), ("b", pa.string())])),
        (
            "array<struct<x : decimal(4,1), y:map<int,array<string>>>>",
            pa.list_(pa.struct([("x", pa.decimal128(4, 1)), ("y", pa.map_(pa.int32(), pa.list_(pa.string())))])),
        ),
    ],
)
def test_arrow_types(hive, arrow):
    assert arrow_type(hive) == arrow


@pytest.mark.parametrize(
    "bad", ["interval", "decimal(40,2)", "decimal(5,6)", "varchar", "int(3)", "array<int", "map<array<int>,int>", "struct<>", "int>"]
)
def test_bad_type_strings(bad):
    with pytest.raises(ValueError):
        parse_type(bad)


# ---- text (LazySimpleSerDe) -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hive", "text", "value"),
    [
        ("tinyint", "-128", -128),
        ("tinyint", "127", 127),
        ("smallint", "-32768", -32768),
        ("int", "2147483647", 2147483647),
        ("int", "+7", 7),
        ("int", "12.75", 12),  # LazyInteger truncates a well-formed fraction
        ("int", "-3.", -3),
        ("bigint", "-9223372036854775808", -(2**63)),
        ("float", "1.5", 1.5),
        ("double", "-2.5e-3", -0.0025),
        ("double", "Infinity", float("inf")),
        ("float", "-Infinity", float("-inf")),
        ("double", "1e300", 1e300),
        ("decimal(5,2)", "123.455", Decimal("123.46")),  # HiveDecimal rounds half up to the scale
        ("decimal(5,2)", "-123.445", Decimal("-123.45")),
        ("decimal(5,2)", "1e2", Decimal("100.00")),
        ("decimal", "12.5", Decimal("13")),
        ("string", "", ""),  # "" is the empty string for strings, NULL for the rest
        ("string", " spaced ", " spaced "),
        ("varchar(3)", "abcdef", "abc"),
        ("varchar(3)", "ab", "ab"),
        ("char(5)", "ab", "ab   "),
        ("char(2)", "abc", "ab"),
        ("boolean", "TRUE", True),
        ("boolean", "false", False),
        ("date", "2024-02-29", datetime.date(2024, 2, 29)),
        ("timestamp", "2026-11-25 12:30:45.123456", TS),
        ("timestamp", "2026-11-25 12:30:45.123456789", TS),  # nanoseconds: digits past micro dropped
        ("timestamp", "2026-11-25 12:30:45", TS.replace(microsecond=0)),
        ("binary", "aGVsbG8=", b"hello"),  # LazyBinary decodes what is all base64 alphabet
        ("binary", "aGVsbG8", b"hello"),  # missing padding, as commons-codec
        ("binary", "not base64!", b"not base64!"),  # and takes anything else as it is
        ("binary", "", b""),
    ],
)
def test_text_values(hive, text, value):
    got = text_converter(hive)(text)
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize(
    "hive",
    [
        "tinyint",
        "int",
        "bigint",
        "double",
        "float",
        "decimal(4,2)",
        "boolean",
        "date",
        "timestamp",
        "array<int>",
        "struct<a:int>",
    ],
)
def test_text_nulls(hive):
    convert = text_converter(hive)
    assert convert("\\N") is None
    if not hive.startswith(("array", "struct")):
        assert convert("") is None


def test_timestamp_null_text():
    assert text_converter("timestamp")("NULL") is None


def test_string_and_binary_nulls():
    for hive in ("string", "varchar(4)", "char(4)", "binary"):
        assert text_converter(hive)("\\N") is None


@pytest.mark.parametrize(
    ("hive", "text"),
    [
        ("tinyint", "128"),
        ("tinyint", "-129"),
        ("smallint", "40000"),
        ("int", "2147483648"),
        ("bigint", "9223372036854775808"),
        ("int", "abc"),
        ("int", "1_000"),
        ("int", "1.5x"),
        ("int", "NULL"),
        ("double", "1_0.5"),
        ("double", "x"),
        ("float", "1e39"),
        ("decimal(5,2)", "1000"),  # too many integer digits
        ("decimal(5,2)", "12a"),
        ("decimal(5,2)", "NaN"),
        ("boolean", "yes"),
        ("boolean", "1"),
        ("date", "2024-02-30"),
        ("date", "20240229"),
        ("date", "2024-02-29 10:00:00"),
        ("timestamp", "2024-13-01 00:00:00"),
        ("timestamp", "noon"),
        ("timestamp", "2024-01-01 00:00:00+01:00"),
    ],
)
def test_text_rejects(hive, text):
    with pytest.raises(ValueError):
        text_converter(hive)(text)


def test_text_collections_use_the_default_separators_by_level():
    assert text_converter("array<int>")("1\x022\x02\\N") == [1, 2, None]
    assert text_converter("array<string>")("") == []
    assert text_converter("map<string,int>")("a\x031\x02b\x03\\N") == {"a": 1, "b": None}
    assert text_converter("map<int,string>")("1\x03x\x021\x03y") == {1: "x"}  # first duplicate wins
    assert text_converter("map<string,int>")("") == {}
    assert text_converter("array<array<int>>")("1\x032\x023") == [[1, 2], [3]]
    assert text_converter("struct<a:int,b:array<string>,c:date>")("1\x02x\x03y") == {"a": 1, "b": ["x", "y"], "c": None}
    assert text_converter("map<string,struct<a:int,b:int>>")("k\x031\x042") == {"k": {"a": 1, "b": 2}}
    with pytest.raises(ValueError):
        text_converter("array<int>")("1\x02x")


# ---- JSON (JsonSerDe) -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hive", "value", "expected"),
    [
        ("tinyint", -5, -5),
        ("int", 7.0, 7),
        ("bigint", "123", 123),
        ("double", 3, 3.0),
        ("float", "1.5", 1.5),
        ("decimal(6,3)", 1.1, Decimal("1.100")),  # the JSON digits, not the binary double's
        ("decimal(6,3)", "2.0005", Decimal("2.001")),
        ("decimal(6,3)", 12, Decimal("12.000")),
        ("string", "x", "x"),
        ("string", "\\N", "\\N"),  # a JSON string is taken literally
        ("string", 12, "12"),
        ("string", True, "true"),
        ("varchar(2)", "abc", "ab"),
        ("char(3)", "a", "a  "),
        ("boolean", True, True),
        ("boolean", "False", False),
        ("date", "2026-11-25", datetime.date(2026, 11, 25)),
        ("timestamp", "2026-11-25 12:30:45.123456", TS),
        ("binary", "aGVsbG8=", b"hello"),
        ("array<int>", [1, None, 3], [1, None, 3]),
        ("map<int,array<string>>", {"1": ["a"], "2": []}, {1: ["a"], 2: []}),
        ("struct<a:int,b:string>", {"A": 1, "extra": 2}, {"a": 1, "b": None}),
        ("array<struct<t:timestamp>>", [{"t": "2026-11-25 12:30:45.123456"}], [{"t": TS}]),
    ],
)
def test_json_values(hive, value, expected):
    got = json_converter(hive)(value)
    assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize(
    "hive",
    [
        "int",
        "double",
        "decimal(4,2)",
        "string",
        "char(3)",
        "boolean",
        "date",
        "timestamp",
        "binary",
        "array<int>",
        "map<string,int>",
        "struct<a:int>",
    ],
)
def test_json_null(hive):
    assert json_converter(hive)(None) is None


@pytest.mark.parametrize(
    ("hive", "value"),
    [
        ("int", 2**31),
        ("int", 1.5),
        ("int", True),
        ("int", [1]),
        ("tinyint", "300"),
        ("double", {}),
        ("float", 1e39),
        ("float", -1e39),
        ("decimal(4,2)", 100),
        ("string", [1]),
        ("string", {"a": 1}),
        ("boolean", 1),
        ("date", 20240101),
        ("timestamp", 1700000000),
        ("binary", "not base64!"),
        ("binary", 5),
        ("array<int>", 1),
        ("array<int>", ["x"]),
        ("map<int,int>", {"x": 1}),
        ("map<string,int>", [1]),
        ("struct<a:int>", [1]),
    ],
)
def test_json_rejects(hive, value):
    with pytest.raises(ValueError):
        json_converter(hive)(value)


def test_converted_values_fit_their_arrow_types():
    """What the converters produce is what pyarrow takes for the column's Arrow type."""
    samples = {
        "decimal(6,3)": "1.5",
        "char(3)": "a",
        "date": "2026-11-25",
        "timestamp": "2026-11-25 12:30:45.123456",
        "binary": "aGVsbG8=",
        "array<int>": "1\x022",
        "map<string,double>": "a\x031.5",
        "struct<a:int,b:string>": "1\x02x",
    }
    for hive, text in samples.items():
        value = text_converter(hive)(text)
        assert pa.array([value, None], type=arrow_type(hive)).to_pylist(maps_as_pydicts="strict") == [value, None]

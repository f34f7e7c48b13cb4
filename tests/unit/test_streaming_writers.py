"""Record writers: records to rows in the table's column order, and SerializationError per bad record."""

from __future__ import annotations

import datetime
import json
from decimal import Decimal

import pytest

from hmsproxy.streaming.writers import DelimitedInputWriter, SerializationError, StrictJsonWriter, StrictRegexWriter

COLUMNS = [("id", "int"), ("msg", "string"), ("amount", "decimal(6,2)"), ("at", "timestamp")]
AT = datetime.datetime(2026, 11, 25, 8, 0, 1)


def bound(writer):
    writer.bind(COLUMNS)
    return writer


def test_parse_before_bind_is_a_programming_error():
    with pytest.raises(RuntimeError):
        DelimitedInputWriter(["id"], ",").parse(b"1")


# ---- delimited ------------------------------------------------------------------------------------


def test_delimited_in_table_order():
    w = bound(DelimitedInputWriter(["id", "msg", "amount", "at"], ","))
    assert w.parse(b"1,Hello streaming,12.345,2026-11-25 08:00:01") == [1, "Hello streaming", Decimal("12.35"), AT]


def test_delimited_reorders_by_name_case_insensitively_and_nulls_missing_columns():
    w = bound(DelimitedInputWriter(["MSG", "Id"], "|"))
    assert w.parse(b"hello|7") == [7, "hello", None, None]


def test_delimited_drops_unnamed_and_trailing_fields():
    w = bound(DelimitedInputWriter([None, "id", "", "msg"], ","))
    assert w.parse(b"skip,3,skip too,kept,and,more") == [3, "kept", None, None]


def test_delimited_short_record_nulls_the_rest():
    w = bound(DelimitedInputWriter(["id", "msg", "amount", "at"], ","))
    assert w.parse(b"5") == [5, None, None, None]
    assert w.parse(b"5,") == [5, "", None, None]  # an empty string field is "", not NULL


def test_delimited_nulls_and_line_ends():
    w = bound(DelimitedInputWriter(["id", "msg", "amount", "at"], "\t"))
    assert w.parse(b"\\N\t\\N\t\t\r\n") == [None, None, None, None]
    assert w.parse("9\tcaf\u00e9\n") == [9, "caf\u00e9", None, None]  # str records too
    with pytest.raises(SerializationError):
        w.parse("1\t\ud800")
    assert w.parse(bytearray(b"8\tx")) == w.parse(memoryview(b"8\tx")) == [8, "x", None, None]


def test_delimited_multi_character_delimiter_and_no_quoting():
    w = bound(DelimitedInputWriter(["id", "msg"], "::"))
    assert w.parse(b'1::"a,b"') == [1, '"a,b"', None, None]  # LazySimpleSerDe has no quoting


def test_delimited_unknown_or_repeated_field_names_fail_bind():
    writer = DelimitedInputWriter(["id", "nope"], ",")
    with pytest.raises(ValueError, match="nope"):
        writer.bind(COLUMNS)
    with pytest.raises(RuntimeError, match="not bound"):
        writer.parse(b"1,2")
    with pytest.raises(ValueError, match="twice"):
        DelimitedInputWriter(["id", "ID"], ",").bind(COLUMNS)
    with pytest.raises(ValueError):
        DelimitedInputWriter(["id"], "")


def test_delimited_bad_records_raise_serialization_error_and_the_writer_goes_on():
    w = bound(DelimitedInputWriter(["id", "msg", "amount", "at"], ","))
    for bad in (b"x,a", b"1,a,99999", b"1,a,1,yesterday", b"\xff\xfe,a", b"99999999999,a"):
        with pytest.raises(SerializationError) as err:
            w.parse(bad)
        assert err.value.record == bad
    assert w.parse(b"2,ok") == [2, "ok", None, None]


def test_delimited_complex_columns():
    w = DelimitedInputWriter(["tags", "attrs", "point"], ",")
    w.bind([("tags", "array<string>"), ("attrs", "map<string,int>"), ("point", "struct<x:double,y:double>")])
    assert w.parse(b"a\x02b,k\x031\x02j\x032,1.5\x02-2") == [["a", "b"], {"k": 1, "j": 2}, {"x": 1.5, "y": -2.0}]


# ---- JSON -----------------------------------------------------------------------------------------


def test_json_keys_match_columns_case_insensitively_unknown_ignored_missing_null():
    w = bound(StrictJsonWriter())
    assert w.parse(b'{"ID": 1, "Msg": "hi", "other": [1]}') == [1, "hi", None, None]
    assert w.parse(json.dumps({"at": "2026-11-25 08:00:01", "amount": 1.5, "id": None}).encode()) == [None, None, Decimal("1.50"), AT]


def test_json_whitespace_around_the_object():
    assert bound(StrictJsonWriter()).parse(b' \t{"id": 4} \r\n') == [4, None, None, None]


def test_json_escaped_surrogate_pair_is_one_character():
    assert bound(StrictJsonWriter()).parse(b'{"msg": "\\ud83d\\ude00"}') == [None, "\U0001f600", None, None]


def test_json_endpoint_is_accepted():
    assert StrictJsonWriter("endpoint").endpoint == "endpoint"


def test_json_complex_columns():
    w = StrictJsonWriter()
    w.bind([("tags", "array<string>"), ("attrs", "map<string,array<int>>"), ("p", "struct<x:int,when:date>"), ("raw", "binary")])
    record = {"tags": ["a"], "attrs": {"k": [1, 2]}, "p": {"X": 3, "when": "2026-01-02"}, "raw": "aGk="}
    assert w.parse(json.dumps(record).encode()) == [["a"], {"k": [1, 2]}, {"x": 3, "when": datetime.date(2026, 1, 2)}, b"hi"]


@pytest.mark.parametrize(
    "bad",
    [
        b"not json",
        b"[1, 2]",
        b'"x"',
        b'{"id": "one"}',
        b'{"id": 1, "at": 5}',
        b'{"id": 1',
        b'{"id": 1} {"id": 2}',
        b'{"msg": "\\ud800"}',
        b"\xff",
    ],
)
def test_json_bad_records(bad):
    w = bound(StrictJsonWriter())
    with pytest.raises(SerializationError) as err:
        w.parse(bad)
    assert err.value.record == bad
    assert w.parse(b'{"id": 2}') == [2, None, None, None]


# ---- regex ----------------------------------------------------------------------------------------


def test_regex_named_groups_fill_their_columns():
    w = bound(StrictRegexWriter(r"(?P<at>\S+ \S+) \[(?P<ID>\d+)\] (?P<msg>.*)"))
    assert w.parse(b"2026-11-25 08:00:01 [42] disk full\n") == [42, "disk full", None, AT]


def test_regex_plain_groups_fill_columns_in_order():
    w = bound(StrictRegexWriter(r"(\d+) (\w+)(?: (\S+))?"))
    assert w.parse(b"1 hello 2.5") == [1, "hello", Decimal("2.50"), None]
    assert w.parse(b"1 hello") == [1, "hello", None, None]  # an unmatched group is NULL


def test_regex_must_match_the_whole_record():
    w = bound(StrictRegexWriter(r"(\d+) (\w+)"))
    for bad in (b"1 hello world", b"hello", b"x1 y"):
        with pytest.raises(SerializationError, match="does not match"):
            w.parse(bad)


def test_regex_value_errors_and_unknown_groups():
    w = bound(StrictRegexWriter(r"(\S+) (\S+)"))
    with pytest.raises(SerializationError):
        w.parse(b"notanint x")
    with pytest.raises(ValueError, match="nope"):
        StrictRegexWriter(r"(?P<nope>\d+)").bind(COLUMNS)

"""Hive's partition filter language on a dependent table's published partition values."""

import pytest

from hmsproxy.protocol.partition_filter import FilterError, parse

COLUMNS = {"ds": "string", "hr": "int"}
PARTS = [{"ds": d, "hr": h} for d in ("2026-11-01", "2026-11-02", "2026-11-10") for h in ("2", "10")]


def kept(text: str) -> list[tuple[str, str]]:
    keep = parse(text, COLUMNS)
    return [(p["ds"], p["hr"]) for p in PARTS if keep(p)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", [(p["ds"], p["hr"]) for p in PARTS]),
        ('ds = "2026-11-02"', [("2026-11-02", "2"), ("2026-11-02", "10")]),
        ("'2026-11-02' < ds and hr > 5", [("2026-11-10", "10")]),  # value first; numbers as numbers
        ('(ds = "2026-11-01" or ds = "2026-11-10") and hr = 2', [("2026-11-01", "2"), ("2026-11-10", "2")]),
        ('ds like "2026-11-0.*" and hr <> 10', [("2026-11-01", "2"), ("2026-11-02", "2")]),
        ("ds between '2026-11-02' and '2026-11-09' and hr != 2", [("2026-11-02", "10")]),
        ("ds not in ('2026-11-01', \"2026-11-02\") AND hr >= 10", [("2026-11-10", "10")]),
        ("ds = DATE '2026-11-01' and hr < 3", [("2026-11-01", "2")]),
    ],
)
def test_filters_keep_what_the_metastore_would(text, expected):
    assert kept(text) == expected


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('x = "1"', "x is not a partition column (they are: ds, hr)"),
        ('hr = "two"', "hr is int: compare it with a number, not 'two'"),
        ('ds = "1" and', "the filter ends where a condition should follow"),
        ('ds = "1" )', "unexpected ')' in the filter"),
    ],
)
def test_a_filter_that_cant_be_read_says_why(text, reason):
    with pytest.raises(FilterError) as e:
        parse(text, COLUMNS)
    assert str(e.value) == reason

"""Which column changes the propagate policy carries into a dependent table (schema_change.py)."""

from __future__ import annotations

import pytest

from hmsproxy.features.dependent.model import Column
from hmsproxy.features.dependent.schema_change import propagation_refusal, widens

BEFORE = (Column("key", "string"), Column("value", "int"), Column("amount", "decimal(10,2)"))


@pytest.mark.parametrize(
    "old, new",
    [
        ("int", "int"),
        ("tinyint", "smallint"),
        ("smallint", "bigint"),
        ("int", "BIGINT"),
        ("integer", "int"),
        ("int", "double"),
        ("bigint", "decimal(19,0)"),
        ("float", "double"),
        ("decimal(10,2)", "decimal(12, 2)"),
        ("decimal(10,2)", "decimal(11,3)"),
        ("decimal", "decimal(12,2)"),
        ("varchar(5)", "varchar(10)"),
        ("varchar(5)", "string"),
        ("date", "string"),
        ("double", "string"),
    ],
)
def test_widening_hive_allows(old, new):
    assert widens(old, new)


@pytest.mark.parametrize(
    "old, new",
    [
        ("bigint", "int"),
        ("double", "float"),
        ("string", "int"),
        ("bigint", "decimal(18,0)"),
        ("decimal(10,2)", "decimal(10,3)"),
        ("decimal(10,2)", "decimal(12,1)"),
        ("varchar(10)", "varchar(5)"),
        ("int", "boolean"),
        ("array<int>", "string"),
        ("array<int>", "array<bigint>"),
        ("timestamp", "date"),
    ],
)
def test_narrowing_or_other_changes_are_not_widening(old, new):
    assert not widens(old, new)


def test_added_widened_and_commented_columns_propagate():
    after = (Column("key", "string", "the key"), Column("value", "bigint"), Column("amount", "decimal(12,2)"), Column("note", "string"))
    assert propagation_refusal("shop.events", BEFORE, after) is None


@pytest.mark.parametrize(
    "after, why",
    [
        (BEFORE[:2], "it drops column(s) amount of shop.events"),
        ((BEFORE[0], BEFORE[2]), "it drops column(s) value of shop.events"),
        ((BEFORE[0], Column("val", "int"), BEFORE[2]), "column value of shop.events would become val (a rename or a move)"),
        ((BEFORE[1], BEFORE[0], BEFORE[2]), "column key of shop.events would become value (a rename or a move)"),
        (
            (BEFORE[0], Column("value", "smallint"), BEFORE[2]),
            "column value of shop.events would change from int to smallint, which does not hold every int value",
        ),
    ],
)
def test_anything_else_is_refused_naming_the_column(after, why):
    assert propagation_refusal("shop.events", BEFORE, after) == why

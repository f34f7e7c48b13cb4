"""What a table change does to its indexes (features/indexes/structure.py) and how column lists
compare (features/columns.py): names case-insensitive, types regardless of case and spaces."""

from __future__ import annotations

from hmsproxy.features.columns import column_difference
from hmsproxy.features.identity import TableRef
from hmsproxy.features.indexes.model import IndexRecord
from hmsproxy.features.indexes.structure import covered_changes, key_changes
from hmsproxy.protocol import idl

hive = idl.hive


def cols(*pairs: tuple[str, str]) -> list:
    return [hive.FieldSchema(name=n, type=t, comment=None) for n, t in pairs]


def index_on(*columns: tuple[str, str]) -> IndexRecord:
    return IndexRecord(TableRef("primary", "default", "events"), "user_idx", "compact", True, None, tuple(columns), b"")


INDEX = index_on(("user_id", "bigint"), ("amount", "decimal(10,2)"))
BEFORE = (("user_id", "bigint"), ("amount", "decimal(10,2)"), ("action", "string"))


def test_changes_beside_the_covered_columns_are_none_of_the_index_s_business():
    assert covered_changes(INDEX, cols(*BEFORE)) == []
    assert covered_changes(INDEX, cols(*BEFORE, ("added", "int"))) == []  # ADD COLUMNS
    assert covered_changes(INDEX, cols(("user_id", "bigint"), ("amount", "decimal(10,2)"))) == []  # an unindexed column dropped
    assert covered_changes(INDEX, cols(("action", "string"), ("amount", "decimal(10,2)"), ("user_id", "bigint"))) == []  # reordered
    # As Spark and the Hive CLI spell the same columns: other case, spaces in the type.
    assert covered_changes(INDEX, cols(("USER_ID", "BIGINT"), ("Amount", "DECIMAL(10, 2)"), ("action", "string"))) == []


def test_a_covered_column_dropped_renamed_or_retyped_is_named():
    assert covered_changes(INDEX, cols(("uid", "bigint"), ("amount", "decimal(10,2)"))) == ["user_id would be dropped or renamed"]
    assert covered_changes(INDEX, cols(("user_id", "string"), ("amount", "decimal(12,2)"))) == [
        "user_id would change type from bigint to string",
        "amount would change type from decimal(10,2) to decimal(12,2)",
    ]
    assert covered_changes(INDEX, []) == ["user_id would be dropped or renamed", "amount would be dropped or renamed"]


def test_partition_keys_renamed_retyped_added_or_removed():
    ds = cols(("ds", "string"))
    assert key_changes(ds, cols(("DS", "STRING"))) == []
    assert key_changes([], []) == [] and key_changes(None, []) == []
    assert key_changes(ds, cols(("ds", "date"))) == ["partition key ds would change type from string to date"]
    assert key_changes(ds, cols(("day", "string"))) == ["its partition keys would change from (ds string) to (day string)"]
    assert key_changes(ds, cols(("ds", "string"), ("hr", "int"))) == [
        "its partition keys would change from (ds string) to (ds string, hr int)"
    ]


def test_column_lists_differ_in_words():
    index_table = cols(("user_id", "bigint"), ("_bucketname", "string"), ("_offsets", "array<bigint>"))
    assert column_difference(cols(("USER_ID", "BIGINT"), ("_bucketname", "string"), ("_offsets", "ARRAY<BIGINT>")), index_table) is None
    assert column_difference(cols(("user_id", "string"), ("_bucketname", "string"), ("_offsets", "array<bigint>")), index_table) == (
        "lacks user_id bigint; has user_id string besides"
    )
    assert column_difference(list(reversed(index_table)), index_table) == "has the same columns in another order"

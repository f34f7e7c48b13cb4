"""tests/support/bulk_partitions.py's rows, built without a database: what each partition copies
from its table, its own ids and location, Hive's partition names, COPY's text format. The rows
read back by a real metastore: tests/integration/test_bulk_partitions_seeded.py."""

from __future__ import annotations

import pytest

from tests.support.bulk_partitions import Rows, Template, copy_text, escape_path_name, part_name, partition_rows

SD = {
    "SD_ID": 7,
    "CD_ID": 3,
    "INPUT_FORMAT": "org.apache.hadoop.mapred.TextInputFormat",
    "IS_COMPRESSED": False,
    "IS_STOREDASSUBDIRECTORIES": False,
    "LOCATION": "file:/w/db.db/t",
    "NUM_BUCKETS": 4,
    "OUTPUT_FORMAT": "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
    "SERDE_ID": 9,
}
SERDE = {"SERDE_ID": 9, "NAME": None, "SLIB": "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"}


def template(**children) -> Template:
    return Template(tbl_id=5, keys=["ds", "hr"], sd=dict(SD), serde=dict(SERDE), children=children)


FIRST = {"PARTITIONS": 100, "SDS": 200, "SERDES": 300}


def test_each_partition_has_its_own_ids_location_and_key_values_the_tables_columns_and_formats():
    made = partition_rows(template(), [["2026-01-01", "0"], ["2026-01-01", "1"]], FIRST, 1_700_000_000, {"numFiles": "1"})
    assert list(made)[:3] == ["SERDES", "SDS", "PARTITIONS"]  # parents first
    assert made["PARTITIONS"].values == [
        (100, 1_700_000_000, 0, "ds=2026-01-01/hr=0", 200, 5),
        (101, 1_700_000_000, 0, "ds=2026-01-01/hr=1", 201, 5),
    ]
    sds = [dict(zip(made["SDS"].columns, row)) for row in made["SDS"].values]
    assert [(s["SD_ID"], s["SERDE_ID"], s["LOCATION"]) for s in sds] == [
        (200, 300, "file:/w/db.db/t/ds=2026-01-01/hr=0"),
        (201, 301, "file:/w/db.db/t/ds=2026-01-01/hr=1"),
    ]
    unchanged = {k: v for k, v in SD.items() if k not in ("SD_ID", "SERDE_ID", "LOCATION")}
    assert all({k: s[k] for k in unchanged} == unchanged for s in sds)  # the table's column descriptor (CD_ID) shared
    assert made["SERDES"].values == [(300, None, SERDE["SLIB"]), (301, None, SERDE["SLIB"])]
    assert made["PARTITION_KEY_VALS"].values == [(100, "2026-01-01", 0), (100, "0", 1), (101, "2026-01-01", 0), (101, "1", 1)]
    assert sorted(made["PARTITION_PARAMS"].values) == [
        (100, "numFiles", "1"),
        (100, "transient_lastDdlTime", "1700000000"),
        (101, "numFiles", "1"),
        (101, "transient_lastDdlTime", "1700000000"),
    ]


def test_the_tables_serde_parameters_and_sd_lists_are_copied_to_each_partitions_own_rows():
    made = partition_rows(
        template(
            SERDE_PARAMS=[{"SERDE_ID": 9, "PARAM_KEY": "field.delim", "PARAM_VALUE": ","}],
            BUCKETING_COLS=[{"SD_ID": 7, "BUCKET_COL_NAME": "id", "INTEGER_IDX": 0}],
            SORT_COLS=[{"SD_ID": 7, "COLUMN_NAME": "id", "ORDER": 1, "INTEGER_IDX": 0}],
            SD_PARAMS=[],
        ),
        [["a", "0"], ["b", "0"]],
        FIRST,
        1,
        {},
    )
    assert made["SERDE_PARAMS"].values == [(300, "field.delim", ","), (301, "field.delim", ",")]
    assert made["BUCKETING_COLS"].values == [(200, "id", 0), (201, "id", 0)]
    assert made["SORT_COLS"].values == [(200, "id", 1, 0), (201, "id", 1, 0)]
    assert "SD_PARAMS" not in made  # the table has none: nothing to copy


def test_partition_names_escape_what_hive_escapes():
    assert part_name(["ds", "hr"], ["2026-01-01", "0"]) == "ds=2026-01-01/hr=0"
    assert part_name(["p"], ["a/b=c:d%e#f"]) == "p=a%2Fb%3Dc%3Ad%25e%23f"
    assert escape_path_name("tab\there") == "tab%09here" and escape_path_name("ü x") == "ü x"
    with pytest.raises(ValueError, match="1 values for 2 partition keys"):
        part_name(["ds", "hr"], ["x"])


def test_copy_text_escapes_separators_and_writes_null_and_booleans():
    rows = Rows(["a", "b", "c", "d"], [(1, None, True, "x\ty\\z\nw"), (2, "", False, "plain")])
    assert copy_text(rows) == "1\t\\N\tt\tx\\ty\\\\z\\nw\n2\t\tf\tplain\n"

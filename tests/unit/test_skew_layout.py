"""The skew layout record (features/skew/layout.py) and the layout job's pure parts, without a JVM."""

from __future__ import annotations

import argparse
import json

import pytest

from hmsproxy.features.skew.layout import (
    LAYOUT_PARAMETER,
    MAX_PARAMETER_CHARS,
    Group,
    LayoutFile,
    LayoutRecord,
    from_parameter,
    from_parameters,
    matches_files,
    select_groups,
    to_parameter,
    value_text,
)
from hmsproxy.files.storage import Entry
from hmsproxy.jobs import skew_layout
from hmsproxy.jobs.cli import build_parser
from hmsproxy.jobs.errors import JobError
from hmsproxy.testing import table


def record(columns=("x", "y"), values=(("10", "a"), ("20", "c")), **kw) -> LayoutRecord:
    groups = [Group(v, (LayoutFile(f"skew-{i}-{i}.parquet", 100 + i),), 10 * (i + 1)) for i, v in enumerate(values)]
    groups.append(Group(None, (LayoutFile("skew-9-default-000.parquet", 7), LayoutFile("skew-9-default-001.parquet", 8)), 5))
    rows = sum(g.rows for g in groups)
    return LayoutRecord(tuple(columns), tuple(groups), rows, "12345", "2026-11-02T03:04:05Z", **kw)


def test_the_parameter_round_trips_and_is_compact_json():
    rec = record(subdirectories=True, format="orc")
    text = to_parameter(rec)
    assert from_parameter(text) == rec
    assert from_parameters({LAYOUT_PARAMETER: text, "numFiles": "4"}) == rec
    data = json.loads(text)
    assert data["version"] == 1 and data["columns"] == ["x", "y"] and data["rows"] == rec.rows
    assert data["groups"][-1]["values"] is None and data["groups"][0]["files"] == [["skew-0-0.parquet", 100]]
    assert " " not in text  # every character counts against the metastore's 4000


@pytest.mark.parametrize(
    "text",
    [
        None,
        "",
        "not json",
        "[]",
        '{"version": 2, "columns": ["x"], "groups": [], "rows": 0, "checksum": "0", "laid_out_at": "t"}',
        # no default group / default group not last / rows don't add up / value of the wrong arity / duplicate value
        '{"version":1,"columns":["x"],"groups":[{"values":["a"],"rows":1,"files":[]}],"rows":1,"checksum":"0","laid_out_at":"t"}',
        '{"version":1,"columns":["x"],"groups":[{"values":null,"rows":1,"files":[]},{"values":["a"],"rows":0,"files":[]}],'
        '"rows":1,"checksum":"0","laid_out_at":"t"}',
        '{"version":1,"columns":["x"],"groups":[{"values":null,"rows":1,"files":[]}],"rows":2,"checksum":"0","laid_out_at":"t"}',
        '{"version":1,"columns":["x"],"groups":[{"values":["a","b"],"rows":0,"files":[]},{"values":null,"rows":0,"files":[]}],'
        '"rows":0,"checksum":"0","laid_out_at":"t"}',
        '{"version":1,"columns":["x"],"groups":[{"values":["a"],"rows":0,"files":[]},{"values":["a"],"rows":0,"files":[]},'
        '{"values":null,"rows":0,"files":[]}],"rows":0,"checksum":"0","laid_out_at":"t"}',
        '{"version":1,"columns":["x"],"groups":[{"values":null,"rows":-1,"files":[]}],"rows":-1,"checksum":"0","laid_out_at":"t"}',
        '{"version":1,"columns":["x"],"groups":[{"values":null,"rows":1,"files":[["f", "big"]]}],"rows":1,"checksum":"0","laid_out_at":"t"}',
    ],
)
def test_missing_or_garbled_records_are_none(text):
    assert from_parameter(text) is None


def test_a_record_too_long_for_the_metastore_is_refused_not_cut():
    values = [(f"value-{i:04d}",) for i in range(300)]
    with pytest.raises(ValueError, match=str(MAX_PARAMETER_CHARS)):
        to_parameter(record(columns=("x",), values=values))


def test_the_record_holds_only_while_the_files_are_exactly_its_own():
    rec = record()
    files = [(f.name, f.size) for f in rec.files]
    assert matches_files(rec, reversed(files))
    assert not matches_files(rec, files[:-1])  # a file deleted
    assert not matches_files(rec, [*files, ("part-00000.snappy.parquet", 5)])  # a file added (INSERT INTO)
    assert not matches_files(rec, [(n, s + 1) for n, s in files])  # rewritten in place
    assert not matches_files(rec, [("part-00000-abc.snappy.parquet", 100)])  # INSERT OVERWRITE


def groups_of(rec, **equals):
    return [g.values for g in select_groups(rec, {k: value_text(v) for k, v in equals.items()})]


def test_pruning_one_column():
    rec = record(columns=("country",), values=(("US",), ("IN",)))
    assert groups_of(rec, country="US") == [("US",)]
    assert groups_of(rec, COUNTRY="IN") == [("IN",)]
    assert groups_of(rec, country="FR") == [None]  # not skewed: only the default group
    assert groups_of(rec, country=None) == [None]
    assert groups_of(rec) == [("US",), ("IN",), None]
    assert groups_of(rec, amount=3) == [("US",), ("IN",), None]  # not a skewed column: nothing pruned


def test_pruning_two_columns_all_named_and_by_prefix():
    rec = record(columns=("x", "y"), values=(("10", "a"), ("10", "b"), ("20", "c")))
    assert groups_of(rec, x=10, y="a") == [("10", "a")]
    assert groups_of(rec, x=10, y="z") == [None]
    # The seed's example: x = 10 prunes (20, 'c'); the default group may hold (10, anything else).
    assert groups_of(rec, x=10) == [("10", "a"), ("10", "b"), None]
    assert groups_of(rec, y="c") == [("20", "c"), None]
    assert groups_of(rec, x=30) == [None]


def test_value_text_matches_how_spark_casts_to_string():
    assert value_text(True) == "true" and value_text(10) == "10" and value_text("US") == "US" and value_text(None) is None


def test_file_and_directory_names():
    assert skew_layout.flat_name(0, ("US",), 0, "parquet") == "skew-0-US-000.parquet"
    assert skew_layout.flat_name(3, ("10", "a b/c"), 2, "orc") == "skew-3-10_a_b_c-002.orc"
    assert skew_layout.flat_name(4, None, 1, "parquet") == "skew-4-default-001.parquet"
    assert skew_layout.hive_directory(("X", "y"), ("10", "a=b/c")) == "x=10/y=a%3Db%2Fc"
    default = skew_layout.DEFAULT_DIRECTORY
    assert skew_layout.hive_directory(("x", "y"), None) == f"{default}/{default}"
    assert skew_layout.hive_directory(("x",), None) == default


class Tree:
    """A Storage over a dict of directories: path -> [Entry]."""

    def __init__(self, dirs):
        self.dirs = dirs

    def list(self, location):
        return self.dirs[location]


def test_list_files_walks_subdirectories_and_skips_hidden_names():
    tree = Tree(
        {
            "/p": [
                Entry("/p/a.parquet", "a.parquet", 3, False),
                Entry("/p/_SUCCESS", "_SUCCESS", 0, False),
                Entry("/p/x=1", "x=1", 0, True),
            ],
            "/p/x=1": [Entry("/p/x=1/b.parquet", "b.parquet", 4, False), Entry("/p/x=1/.b.crc", ".b.crc", 1, False)],
        }
    )
    tree.dirs["/p"].append(Entry("/p/_tmp", "_tmp", 0, True))
    assert skew_layout.list_files(tree, "/p") == [("a.parquet", 3), ("x=1/b.parquet", 4)]


def hive_table(*, skewed=None, subdirs=False, partitioned=True, **kw):
    keys = (("ds", "string"),) if partitioned else ()
    t = table("shop", "events", columns=(("id", "int"), ("country", "string"), ("x", "int")), partition_keys=keys, **kw)
    t.sd.inputFormat = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat"
    if skewed:
        t.sd.skewedInfo = skew_layout.skewed_info(skewed[0], skewed[1])
    t.sd.storedAsSubDirectories = subdirs
    return t


def args(*argv):
    return build_parser().parse_args(["skew-layout", "shop.events", *argv])


def test_a_table_stored_as_directories_is_refused_without_the_flag_naming_the_settings():
    t = hive_table(skewed=(["country"], [["US"]]), subdirs=True)
    with pytest.raises(JobError) as e:
        skew_layout.check_table(t, allow_subdirectories=False)
    for setting in ("spark.sql.hive.convertMetastoreParquet=false", "mapreduce.input.fileinputformat.input.dir.recursive=true"):
        assert setting in str(e.value)
    assert "hive.mapred.supports.subdirectories=true" in str(e.value) and "--allow-subdirectories" in str(e.value)
    assert skew_layout.check_table(t, allow_subdirectories=True) == "parquet"
    assert skew_layout.make_plan(t, args("--allow-subdirectories")).subdirectories
    flat = hive_table(skewed=(["country"], [["US"]]))
    assert not skew_layout.make_plan(flat, args("--allow-subdirectories")).subdirectories  # not STORED AS DIRECTORIES: flat


def test_the_plan_takes_declared_skew_or_detects():
    t = hive_table(skewed=(["x", "country"], [["1", "US"], ["2", "IN"]]))
    plan = skew_layout.make_plan(t, args())
    assert plan.columns == ("x", "country") and plan.values == (("1", "US"), ("2", "IN")) and not plan.detect
    plan = skew_layout.make_plan(hive_table(), args("--detect", "--columns", "Country", "--top", "3", "--min-share", "0.2"))
    assert plan.columns == ("country",) and plan.detect and plan.top == 3 and plan.min_share == 0.2
    for bad, message in [((), "no skewed columns"), (("--detect", "--columns", "ds"), "not a data column")]:
        with pytest.raises(Exception, match=message):
            skew_layout.make_plan(hive_table(), args(*bad))
    assert skew_layout.check_table(hive_table(partitioned=False), False) == "parquet"  # laid out as one piece


@pytest.mark.parametrize("bad", [["--top", "0"], ["--min-share", "0"], ["--min-share", "1.5"]])
def test_bad_options_are_usage_errors(bad, capsys):
    with pytest.raises(SystemExit) as e:
        args("--detect", *bad)
    assert e.value.code == 2


def test_the_recording_catalog_adds_the_record_to_the_swap_call():
    calls = []

    class Catalog:
        def get_partition(self, *a):
            return "p"

        def alter_partition(self, db, tbl, part):
            calls.append(part)

        def alter_table(self, db, tbl, table):  # an unpartitioned table is swapped with alter_table
            calls.append(table)

    seen = argparse.Namespace(parameters={"a": "1"})
    catalog = skew_layout.RecordingCatalog(Catalog(), lambda p: p.parameters.update({LAYOUT_PARAMETER: "{}"}))
    assert catalog.get_partition("d", "t", ["1"]) == "p"
    catalog.alter_partition("d", "t", seen)
    assert calls == [seen] and seen.parameters == {"a": "1", LAYOUT_PARAMETER: "{}"}
    table = argparse.Namespace(parameters={})
    catalog.alter_table("d", "t", table)
    assert calls == [seen, table] and table.parameters == {LAYOUT_PARAMETER: "{}"}


def test_compact_merges_each_group_into_at_most_its_own_file_count():
    from hmsproxy.jobs.compact_layout import files_per_group

    rec = record()  # two skewed groups of one file each, a default group of two (7 and 8 bytes)
    assert files_per_group(rec, 1, None) == [1, 1, 1]
    assert files_per_group(rec, 4, None) == [1, 1, 2]  # never split a group into more files than it has
    assert files_per_group(rec, 1, 1) == [1, 1, 1]  # --target-file-mb: 15 bytes make one file


def test_only_recorded_files_in_subdirectories_let_a_layout_be_redone():
    rec = record(values=(("10", "a"),))
    rec = LayoutRecord(rec.columns, (Group(("10", "a"), (LayoutFile("x=10/y=a/skew-000.parquet", 5),), 1), rec.groups[-1]), 6, "1", "t")
    recorded = [("x=10/y=a/skew-000.parquet", 5), ("skew-9-default-000.parquet", 7), ("skew-9-default-001.parquet", 8)]
    assert skew_layout.known_subdirectories(rec, recorded)
    assert skew_layout.known_subdirectories(rec, [*recorded, ("stream-7-ab.parquet", 3)])  # streamed in beside it: top level
    assert not skew_layout.known_subdirectories(rec, [*recorded, ("x=10/y=a/000000_0", 3)])  # someone else wrote in a group
    assert not skew_layout.known_subdirectories(None, recorded)

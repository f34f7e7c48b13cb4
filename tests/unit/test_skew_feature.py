"""The skew feature's rules on Thrift calls from any client, against a fake metastore.

Spark-driven scenarios (statements, Spark rewriting skewed tables) are tests/spark/test_skew_spark.py;
these pin each rule: validation of calls carrying skew, partitions inheriting the table's skew,
skew kept when a client leaves it out, and removed only when asked.
"""

from __future__ import annotations

import pytest

from hmsproxy.features.skew.rules import CHANGE_MARK, DEFAULT_DIRECTORY
from hmsproxy.protocol import idl
from hmsproxy.testing import FakeMetastore, database, partition, table
from tests.support.fake_handlers import call

hive = idl.hive
COLUMNS = (("id", "int"), ("country", "string"))
PARTITIONED = (("ds", "string"),)


def skew(columns=("country",), values=(("US",), ("IN",)), locations=None) -> hive.SkewedInfo:
    return hive.SkewedInfo(
        skewedColNames=list(columns), skewedColValues=[list(v) for v in values], skewedColValueLocationMaps=locations or {}
    )


def skewed(name: str, info=None, *, directories=False, **kw) -> hive.Table:
    t = table("shop", name, columns=COLUMNS, partition_keys=PARTITIONED, **kw)
    t.sd.skewedInfo = info or skew()
    t.sd.storedAsSubDirectories = directories
    return t


@pytest.fixture
def primary():
    fake = FakeMetastore("primary")
    fake.create_database(database("shop"))
    fake.create_table(skewed("events"))
    return fake


@pytest.mark.parametrize(
    ("info", "directories", "kw", "message"),
    [
        (skew(columns=("ds",), values=(("1",),)), False, {}, "'ds' is a partition column"),
        (skew(values=(("US", "x"),)), False, {}, r"has 2 part\(s\) for 1 skewed column\(s\)"),
        (skew(values=(("US",), ("US",))), False, {}, "listed twice"),
        (skew(locations={("FR",): "file:/fr"}), False, {}, "names 'FR', which is not a skewed value"),
        (skew(), True, {"table_type": "EXTERNAL_TABLE"}, "not allowed on an external table"),
    ],
)
def test_create_table_with_invalid_skew_is_refused_from_any_client(handler, primary, info, directories, kw, message):
    with pytest.raises(hive.InvalidObjectException, match=message):
        call(handler, "create_table", tbl=skewed("bad", info, directories=directories, **kw))
    assert "bad" not in primary.get_all_tables("shop")


def test_list_bucketing_with_bucketing_is_refused(handler):
    t = skewed("bucketed", directories=True)
    t.sd.numBuckets, t.sd.bucketCols = 4, ["id"]
    with pytest.raises(hive.InvalidObjectException, match="cannot be combined with bucketing"):
        call(handler, "create_table", tbl=t)


def test_partitions_added_without_skew_get_the_tables(handler, primary):
    call(handler, "add_partitions", new_parts=[partition("shop", "events", ["1"]), partition("shop", "events", ["2"])])
    stored = primary.get_partitions("shop", "events", -1)
    assert [p.sd.skewedInfo.skewedColNames for p in stored] == [["country"], ["country"]]
    with pytest.raises(hive.InvalidObjectException, match="list bucketing's default directory"):
        call(handler, "add_partition", new_part=partition("shop", "events", [DEFAULT_DIRECTORY]))


def test_skew_left_out_is_kept_and_removed_only_when_asked(handler, primary):
    # A client rewriting the table without its skew (as Spark does) keeps it.
    call(
        handler,
        "alter_table",
        dbname="shop",
        tbl_name="events",
        new_tbl=table("shop", "events", columns=COLUMNS, partition_keys=PARTITIONED),
    )
    assert primary.get_table("shop", "events").sd.skewedInfo.skewedColNames == ["country"]
    # So does a partition rewritten without it.
    call(handler, "add_partition", new_part=partition("shop", "events", ["1"]))
    call(handler, "alter_partition", db_name="shop", tbl_name="events", new_part=partition("shop", "events", ["1"], parameters={"k": "v"}))
    kept = primary.get_partitions("shop", "events", -1)[0]
    assert (kept.parameters, kept.sd.skewedInfo.skewedColNames) == ({"k": "v"}, ["country"])
    # A different, non-empty skew from a client replaces it.
    call(handler, "alter_table", dbname="shop", tbl_name="events", new_tbl=skewed("events", skew(values=(("BR",),))))
    assert primary.get_table("shop", "events").sd.skewedInfo.skewedColValues == [["BR"]]
    # Only the statements' mark removes it.
    marked = hive.EnvironmentContext(properties={CHANGE_MARK: "true"})
    empty = table("shop", "events", columns=COLUMNS, partition_keys=PARTITIONED)
    call(handler, "alter_table_with_environment_context", dbname="shop", tbl_name="events", new_tbl=empty, environment_context=marked)
    assert not primary.get_table("shop", "events").sd.skewedInfo


def test_a_client_that_read_the_table_and_cleared_its_skew_removes_it(handler, primary):
    """The Hive CLI's NOT SKEWED: the table as read (storedAsSubDirectories set), its SkewedInfo emptied
    (Hive leaves the location map behind), Hive's EnvironmentContext. Spark's rewrite leaves
    storedAsSubDirectories unset (test_skew_left_out_is_kept_and_removed_only_when_asked)."""
    primary.alter_table("shop", "events", skewed("events", skew(locations={("US",): "file:/us"}), directories=True))
    hive_cli = hive.EnvironmentContext(properties={"DO_NOT_UPDATE_STATS": "true"})
    # NOT STORED AS DIRECTORIES: the skew as read, the flag off.
    call(handler, "alter_table_with_environment_context", dbname="shop", tbl_name="events",
         new_tbl=skewed("events", skew(locations={("US",): "file:/us"}), directories=False), environment_context=hive_cli)  # fmt: skip
    stored = primary.get_table("shop", "events").sd
    assert (stored.skewedInfo.skewedColNames, stored.storedAsSubDirectories) == (["country"], False)
    # NOT SKEWED: columns and values emptied, the location map left as it was.
    cleared = skewed("events", hive.SkewedInfo(skewedColNames=[], skewedColValues=[], skewedColValueLocationMaps={("US",): "file:/us"}))
    call(handler, "alter_table_with_environment_context", dbname="shop", tbl_name="events", new_tbl=cleared, environment_context=hive_cli)
    info = primary.get_table("shop", "events").sd.skewedInfo
    assert (info.skewedColNames, info.skewedColValues, info.skewedColValueLocationMaps) == ([], [], {})


def test_a_skew_dropped_from_a_table_that_was_read_is_refused_naming_the_statement(handler, primary):
    t = skewed("events")
    t.sd.skewedInfo = None  # storedAsSubDirectories stays set: read from the metastore, then the skew dropped
    with pytest.raises(hive.MetaException, match=r'hmsproxy sql -e "ALTER TABLE shop.events NOT SKEWED"'):
        call(handler, "alter_table", dbname="shop", tbl_name="events", new_tbl=t)
    assert primary.get_table("shop", "events").sd.skewedInfo.skewedColNames == ["country"]


def test_show_skew_on_a_missing_partition_says_it_does_not_exist(handler, primary):
    call(handler, "add_partition", new_part=partition("shop", "events", ["1"]))
    shown = call(handler, "hmsproxy_execute", statements="SHOW SKEW ON shop.events PARTITION (ds='1')", current_database="shop")
    assert [row[0] for row in shown.rows] == ["(table)", "ds=1"]
    with pytest.raises(hive.MetaException, match=r"shop.events has no partition \(ds='9'\)"):
        call(handler, "hmsproxy_execute", statements="SHOW SKEW ON shop.events PARTITION (ds='9')", current_database="shop")

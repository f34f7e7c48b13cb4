"""The skew feature's rules on Thrift calls from any client, against a fake metastore.

Spark-driven scenarios (statements, Spark rewriting skewed tables) are tests/spark/test_skew_spark.py;
these pin each rule: validation of calls carrying skew, partitions inheriting the table's skew,
skew kept when a client leaves it out, and removed only when asked.
"""

from __future__ import annotations

import pytest

from hmsproxy.features.skew.rules import DEFAULT_DIRECTORY
from hmsproxy.features.skew.runners import CHANGE_MARK
from hmsproxy.protocol import idl
from hmsproxy.testing import FakeMetastore, database, partition, table
from tests.support.fake_handlers import call, fake_federation

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


@pytest.fixture
def handler(tmp_path, primary):
    h = fake_federation(tmp_path, primary)
    yield h
    h.close()


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

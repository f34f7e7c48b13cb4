"""The view a dependent table is served as, written from records alone, and the records' snapshot."""

from __future__ import annotations

from dataclasses import replace

from hmsproxy.features.dependent import view
from hmsproxy.features.dependent.model import Column, DependentPartition, DependentTable, TableRef
from hmsproxy.features.dependent.snapshot import DependentSnapshot
from hmsproxy.routing.router import Router
from tests.support.federation import prefixed_config

ROUTER = Router(prefixed_config("thrift://127.0.0.1:1", "thrift://127.0.0.1:2", mapped_databases=("sales",)))
DAILY = TableRef("primary", "shop", "daily")
EVENTS = TableRef("primary", "shop", "events")
REMOTE = TableRef("waggle", "sales", "events_v2")
TABLE = DependentTable(DAILY, (Column("ds", "string"),), (Column("key", "string"), Column("value", "int")), EVENTS)


def published(*specs):
    return tuple(DependentPartition(DAILY, values, target) for target, values in specs)


def test_one_select_per_table_names_each_as_clients_see_it():
    parts = published((EVENTS, ("1",)), (EVENTS, ("2",)), (REMOTE, ("11",)))
    assert view.view_text(ROUTER, TABLE, parts) == (
        "SELECT `key`, `value`, `ds` FROM `shop`.`events` WHERE `ds` IN ('1', '2')\nUNION ALL\n"
        "SELECT `key`, `value`, `ds` FROM `waggle_sales`.`events_v2` WHERE `ds` IN ('11')"
    )


def test_a_two_column_prefix_keeps_each_published_pair():
    hourly = replace(TABLE, partition_columns=(Column("ds", "string"), Column("hr", "string")))
    parts = tuple(DependentPartition(DAILY, v, EVENTS) for v in (("1", "01"), ("1", "02")))
    assert view.view_text(ROUTER, hourly, parts) == (
        "SELECT `key`, `value`, `ds`, `hr` FROM `shop`.`events` WHERE (`ds` = '1' AND `hr` = '01') OR (`ds` = '1' AND `hr` = '02')"
    )


def test_values_are_quoted_and_names_backquoted():
    odd = replace(TABLE, columns=(Column("we`ird", "string"),))
    parts = published((EVENTS, ("it's \\ here",)))
    assert view.view_text(ROUTER, odd, parts) == "SELECT `we``ird`, `ds` FROM `shop`.`events` WHERE `ds` IN ('it\\'s \\\\ here')"


def test_nothing_served_names_no_table():
    gone = (replace(published((EVENTS, ("1",)))[0], target_gone=True, problem="shop.events was dropped"),)
    expected = "SELECT CAST(NULL AS string) AS `key`, CAST(NULL AS int) AS `value`, CAST(NULL AS string) AS `ds` WHERE 1 = 0"
    assert view.view_text(ROUTER, TABLE, ()) == expected
    assert view.view_text(ROUTER, TABLE, gone) == expected
    hidden = published((TableRef("waggle", "hr", "t"), ("1",)))  # `hr` is not mapped: clients can't see it
    assert view.view_text(ROUTER, TABLE, hidden) == expected


def test_the_table_clients_get():
    table = view.as_table(ROUTER, "shop", TABLE, published((EVENTS, ("1",))))
    assert (table.tableType, table.dbName, table.tableName) == ("VIRTUAL_VIEW", "shop", "daily")
    # A partitioned view, as Hive keeps one: data columns in the storage descriptor, partition columns apart.
    assert [(c.name, c.type) for c in table.partitionKeys] == [("ds", "string")]
    assert [(c.name, c.type) for c in table.sd.cols] == [("key", "string"), ("value", "int")]
    assert table.viewOriginalText == table.viewExpandedText
    assert table.parameters["hmsproxy.dependent.depends-on"] == "shop.events"
    assert table.parameters["hmsproxy.dependent.on-change"] == "restrict"


def test_the_snapshot_indexes_dependencies_both_ways():
    parts = published((EVENTS, ("1",)), (REMOTE, ("11",)))
    gone = replace(parts[0], values=("0",), target_gone=True)
    snapshot = DependentSnapshot.build(3, [TABLE], [*parts, gone])
    assert snapshot.dependents == {EVENTS: (DAILY,), REMOTE: (DAILY,)}
    assert snapshot.by_database == {("primary", "shop"): ("daily",)}
    assert [p.values for p in snapshot.partitions[DAILY]] == [("0",), ("1",), ("11",)]
    assert [p.values for p in snapshot.partitions_on(EVENTS)] == [("1",)]


def test_the_published_parameter_names_each_partition_and_its_source():
    parts = (
        *published((EVENTS, ("1",)), (EVENTS, ("2",)), (REMOTE, ("11",))),
        replace(published((EVENTS, ("3",)))[0], problem="shop.events was dropped", target_gone=True),
    )
    assert view.published(ROUTER, TABLE, parts) == (
        "ds=1, ds=2, ds=3 (not served: shop.events was dropped) <- shop.events; ds=11 <- waggle_sales.events_v2"
    )
    assert view.published(ROUTER, TABLE, ()) == "none"


def test_the_view_is_written_once_per_records_and_router():
    snapshot = DependentSnapshot.build(1, [TABLE], list(published((EVENTS, ("1",)), (REMOTE, ("11",)))))

    class Routed:
        router = ROUTER

    (loaded,) = view.virtual_tables(snapshot, ROUTER, "shop")
    first, again = loaded.load(Routed), loaded.load(Routed)
    assert again.viewExpandedText is first.viewExpandedText  # written once, not per get_table
    assert first.parameters["hmsproxy.dependent.published"] == "ds=1 <- shop.events; ds=11 <- waggle_sales.events_v2"
    # A reload brings another router, whose names may differ: written anew for it.
    Routed.router = Router(prefixed_config("thrift://127.0.0.1:1", "thrift://127.0.0.1:2", mapped_databases=("sales",)))
    other = loaded.load(Routed)
    assert other.viewExpandedText is not first.viewExpandedText and other.viewExpandedText == first.viewExpandedText

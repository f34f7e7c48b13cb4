"""Routing and naming without a network: prefixes, aliases, mapped databases and tables, MANUAL clashes."""

import pytest

from hmsproxy.config.model import (
    AccessControlType,
    Config,
    DatabaseResolution,
    MappedTables,
    MetastoreConfig,
    ServerConfig,
)
from hmsproxy.routing.naming import join_catalog, split_catalog
from hmsproxy.routing.patterns import hive_match
from hmsproxy.routing.router import DatabaseDirectory, Router, UnknownDatabase


def make_config(resolution=DatabaseResolution.PREFIXED, **fed_kwargs):
    primary = MetastoreConfig(
        "primary", ("thrift://127.0.0.1:1",), primary=True, access_control_type=AccessControlType.READ_AND_WRITE_AND_CREATE
    )
    fed = MetastoreConfig("waggle", ("thrift://127.0.0.1:2",), database_prefix="waggle_", **fed_kwargs)
    return Config(ServerConfig(), resolution, primary, (fed,))


def test_prefixed_routes_by_prefix_and_strips_it():
    router = Router(make_config())
    route = router.route("waggle_sales")
    assert route.metastore.name == "waggle"
    assert route.backend_db == "sales"
    assert router.route("default").metastore.name == "primary"
    assert router.route("WAGGLE_Sales").backend_db == "sales"


def test_prefixed_hides_unmapped_federated_database():
    router = Router(make_config(mapped_databases=("sales", "log.*")))
    assert router.route("waggle_logs_2024").backend_db == "logs_2024"
    with pytest.raises(UnknownDatabase, match="waggle_hr"):
        router.route("waggle_hr")
    waggle = router.by_name["waggle"]
    assert router.client_name(waggle, "hr") is None
    assert router.client_name(waggle, "sales") == "waggle_sales"


def test_empty_mapped_databases_means_none():
    router = Router(make_config(mapped_databases=()))
    with pytest.raises(UnknownDatabase):
        router.route("waggle_sales")


def test_primary_never_shows_names_a_federated_prefix_claims():
    router = Router(make_config())
    assert router.client_name(router.primary, "waggle_thing") is None
    assert router.client_name(router.primary, "default") == "default"


def test_alias_then_prefix_and_back():
    router = Router(make_config(database_name_mapping={"sales": "sales_eu"}))
    route = router.route("waggle_sales_eu")
    assert route.backend_db == "sales"
    assert route.outbound("sales") == "waggle_sales_eu"
    assert route.inbound("waggle_sales_eu") == "sales"


def test_catalog_marker_is_kept_around_the_rewritten_name():
    router = Router(make_config())
    route = router.route("@hive#waggle_sales")
    assert route.backend_db == "sales" and route.catalog == "hive"
    assert route.inbound("@hive#waggle_sales") == "@hive#sales"
    assert split_catalog("@hive#!") == ("hive", "")
    assert join_catalog(None, "x") == "x"


def test_mapped_tables_visibility():
    router = Router(make_config(mapped_tables=(MappedTables("sales", ("orders.*",)),)))
    naming = router.by_name["waggle"]
    assert naming.table_visible("sales", "orders_2024")
    assert not naming.table_visible("sales", "customers")
    assert naming.table_visible("other", "anything")


def test_manual_mode_uses_mapped_databases_without_prefixes():
    config = make_config(DatabaseResolution.MANUAL, mapped_databases=("sales",))
    primary = MetastoreConfig("primary", ("thrift://127.0.0.1:1",), primary=True, mapped_databases=("default", "local_.*"))
    config = Config(config.server, config.database_resolution, primary, config.federated)
    router = Router(config)
    assert router.route("sales").metastore.name == "waggle"
    assert router.route("sales").backend_db == "sales"
    assert router.route("local_x").metastore.name == "primary"
    with pytest.raises(UnknownDatabase):
        router.route("unmapped")


def test_manual_mode_asks_backends_when_several_map_a_name(caplog):
    config = make_config(DatabaseResolution.MANUAL)  # both metastores map everything
    live = {"primary": {"default"}, "waggle": {"sales", "default"}}
    router = Router(config, DatabaseDirectory(lambda name: live[name], ttl_s=0))
    assert router.route("sales").metastore.name == "waggle"
    assert router.route("brand_new").metastore.name == "primary"
    # A database created on the federated backend later is found without a restart.
    live["waggle"].add("marketing")
    assert router.route("marketing").metastore.name == "waggle"
    # A clash is reported with both metastores named, and the first in config order wins.
    with caplog.at_level("WARNING"):
        assert router.route("default").metastore.name == "primary"
    assert "'primary'" in caplog.text and "'waggle'" in caplog.text


def test_hive_patterns():
    assert hive_match("*", "anything")
    assert hive_match("sales*|hr", "SALES_EU")
    assert hive_match("sales*|hr", "hr")
    assert not hive_match("sales*|hr", "hr2")


def test_an_aliased_database_is_listed_and_reachable_under_both_names():
    router = Router(make_config(database_name_mapping={"sales": "sales_eu"}))
    waggle = router.by_name["waggle"]
    assert router.client_names(waggle, "sales") == ["waggle_sales_eu", "waggle_sales"]
    assert router.route("waggle_sales").backend_db == "sales"


def test_catalog_marker_in_patterns_is_stripped():
    from hmsproxy.routing.naming import split_catalog

    assert split_catalog("@hive#waggle_*") == ("hive", "waggle_*")
    assert hive_match(split_catalog("@hive#waggle_*")[1], "waggle_sales")

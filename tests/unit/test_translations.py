"""Hive 4 request calls on metastores that lack them (hmsproxy/upstream/translations.py), against fakes.

The FakeMetastore knows only Hive 2.3's calls, so every `*_req` call is "Invalid method
name" to it, as to a real 2.3 metastore. The real Hive 4 client on real 2.3 metastores is
tests/integration/test_hive4_client.py; these pin the rules: when a translation is used,
what it refuses to drop, and how the answer's exceptions land.
"""

from __future__ import annotations

import pytest
from thriftpy2.thrift import TApplicationException

from hmsproxy.protocol import idl
from hmsproxy.testing import FakeMetastore, database, table
from tests.support.fake_handlers import call, fake_federation

hive = idl.hive


@pytest.fixture
def primary():
    fake = FakeMetastore("primary")
    fake.create_database(database("shop"))
    fake.create_table(table("shop", "orders", partition_keys=(("ds", "string"),)))
    return fake


def test_an_unconfigured_metastore_is_tried_once_then_translated(handler, primary):
    for _ in range(3):
        db = call(handler, "get_database_req", request=hive.GetDatabaseRequest(name="shop", catalogName="hive"))
        assert (db.name, db.catalogName) == ("shop", "hive")
    assert len(primary.calls_to("get_database_req")) == 1  # "Invalid method name" once, remembered
    assert len(primary.calls_to("get_database")) == 3


def test_a_metastore_configured_as_2_3_gets_the_old_call_at_once(tmp_path, primary):
    h = fake_federation(tmp_path, primary, hive_version="2.3")
    try:
        parts = call(h, "get_partitions_req", req=hive.PartitionsRequest(dbName="shop", tblName="orders", maxParts=-1))
        assert parts.partitions == []
        assert primary.calls_to("get_partitions_req") == []
        assert primary.calls_to("get_partitions")[0].args.max_parts == -1
    finally:
        h.close()


def test_drop_database_req_ignores_a_missing_database_only_when_asked(handler, primary):
    def drop(ignore: bool):
        return call(
            handler, "drop_database_req", req=hive.DropDatabaseRequest(name="gone", ignoreUnknownDb=ignore, deleteData=False, cascade=False)
        )

    drop(ignore=True)
    with pytest.raises(hive.NoSuchObjectException):
        drop(ignore=False)


def test_a_request_naming_another_catalog_never_acts_on_the_default_catalogs_object(handler, primary):
    """An older call has no catalog: sent as is, dropping spark's `shop` would drop hive's (the fuzz found it)."""
    request = hive.DropDatabaseRequest(name="shop", catalogName="spark", ignoreUnknownDb=False, deleteData=False, cascade=False)
    with pytest.raises(hive.NoSuchObjectException, match="catalog spark not found"):
        call(handler, "drop_database_req", req=request)
    assert primary.get_database("shop").name == "shop"
    with pytest.raises(hive.NoSuchObjectException, match="catalog spark not found"):
        call(handler, "get_partitions_req", req=hive.PartitionsRequest(catName="spark", dbName="shop", tblName="t"))


def test_what_2_3_cannot_store_fails_the_call_instead_of_vanishing(handler, primary):
    unique = hive.SQLUniqueConstraint(table_db="shop", table_name="strict", column_name="id", uk_name="uk")
    request = hive.CreateTableRequest(table=table("shop", "strict"), uniqueConstraints=[unique])
    with pytest.raises(hive.InvalidObjectException, match="cannot store uniqueConstraints"):
        call(handler, "create_table_req", request=request)
    assert "strict" not in primary.get_all_tables("shop")
    # Primary and foreign keys 2.3 can keep: they go to create_table_with_constraints.
    pk = hive.SQLPrimaryKey(table_db="shop", table_name="keyed", column_name="id", key_seq=1, pk_name="pk")
    with pytest.raises(TApplicationException, match="create_table_with_constraints"):  # the fake lacks it: the call was made
        call(handler, "create_table_req", request=hive.CreateTableRequest(table=table("shop", "keyed"), primaryKeys=[pk]))
    with pytest.raises(hive.InvalidOperationException, match="needs a Hive 4 metastore"):
        call(
            handler,
            "alter_table_req",
            req=hive.AlterTableRequest(dbName="shop", tableName="orders", table=table("shop", "orders"), expectedParameterKey="k"),
        )


def test_catalogs_on_a_metastore_without_them(handler, primary):
    assert call(handler, "get_catalogs").names == ["hive"]
    catalog = call(handler, "get_catalog", catName=hive.GetCatalogRequest(name="hive")).catalog
    assert (catalog.name, catalog.locationUri) == ("hive", primary.get_database("default").locationUri)
    with pytest.raises(hive.NoSuchObjectException, match="catalog spark not found"):
        call(handler, "get_catalog", catName=hive.GetCatalogRequest(name="spark"))


@pytest.mark.parametrize(("hive_version", "sent"), [("2.3", "shop"), ("3.1", "@hive#shop"), (None, "shop")])
def test_hive_3_catalog_names_reach_only_metastores_that_know_them(tmp_path, primary, hive_version, sent):
    h = fake_federation(tmp_path, primary, hive_version=hive_version)
    try:
        call(h, "get_all_tables", db_name="@hive#shop")
        assert primary.calls_to("get_all_tables")[-1].args.db_name == sent
        # Unconfigured: asked get_catalogs once (2.3 has none), then remembered.
        call(h, "get_all_tables", db_name="@hive#shop")
        assert len(primary.calls_to("get_catalogs")) == (1 if hive_version is None else 0)
    finally:
        h.close()


def test_answers_name_the_default_catalog_in_hive_3s_table_field(handler):
    t = call(handler, "get_table_req", req=hive.GetTableRequest(dbName="shop", tblName="orders")).table
    assert t.catNameHive3 == "hive"

"""A link can be dropped whatever the state of its metastore (features/remotes/records.py).

A real handler and SQLite store; the primary and the remote metastore are hmsproxy.testing fakes,
the remote found by its URI, so it can go down and come back. The clients' calls are the ones
Spark and the Hive CLI send around a DROP (tests/spark/test_remote_drops_spark.py runs Spark itself).
"""

from __future__ import annotations

import dataclasses
import logging

import pytest

from hmsproxy.app import build_handler
from hmsproxy.config.model import StoreConfig
from hmsproxy.features.remotes.records import STAND_IN_PARTITION, UNAVAILABLE_PARAMETER
from hmsproxy.protocol import idl
from hmsproxy.testing import FakeMetastore, args, database, fake_connect, table, unwrap
from hmsproxy.upstream.session import Session
from tests.support.federation import prefixed_config

hive = idl.hive
EU = "thrift://hms-eu:9083"


def link(**more) -> dict[str, str]:
    return {"hmsproxy.remote.uris": EU, "hmsproxy.remote.database": "sales", **more}


@pytest.fixture
def eu():
    m = FakeMetastore("eu", databases=())
    m.create_database(database("sales", description="sales in the EU", locationUri="file:/eu/sales.db"))
    m.create_table(table("sales", "orders", columns=(("id", "int"), ("amount", "int")), partition_keys=(("ds", "string"),)))
    return m


@pytest.fixture
def handler(tmp_path, eu):
    config = prefixed_config("thrift://127.0.0.1:1", "thrift://127.0.0.1:2")
    config = dataclasses.replace(config, store=StoreConfig(f"sqlite:///{tmp_path / 'hmsproxy.db'}"))
    primary = FakeMetastore("primary")
    primary.create_database(database("shop"))
    primary.create_table(table("shop", "events"))
    h = build_handler(config, connect=fake_connect({"primary": primary, "waggle": FakeMetastore("waggle"), EU: eu}))
    yield h
    h.close()


@pytest.fixture
def client(handler):
    """call(method, **args): a client's call through the handler, its answer unwrapped (declared exceptions raised)."""
    sessions = []

    def new():
        s = Session(handler.backends, "test")
        s.set_ugi("erin", [])
        sessions.append(s)
        return lambda method, **kw: unwrap(handler.dispatch(s, method, args(method, **kw)))

    call = new()
    call.new_session = new
    yield call
    for s in sessions:
        s.close()


@pytest.fixture
def repo(handler):
    return handler.features.get("remotes").repo


def make_links(client, **more) -> None:
    """shop.orders_eu -> sales.orders and sales_eu -> sales, as Spark's CREATE TABLE / DATABASE make them."""
    client("create_table", tbl=table("shop", "orders_eu", parameters=link(**{"hmsproxy.remote.table": "orders"}, **more)))
    client("create_database", database=database("sales_eu", parameters=link(**more)))


def test_a_down_remotes_fetch_is_answered_from_its_record_and_its_drop_unlinks_only(client, repo, eu):
    make_links(client)
    assert repo.recorded("table", "shop.orders_eu") is not None and repo.recorded("database", "sales_eu") is not None
    eu.go_down()

    t = client("get_table", dbname="shop", tbl_name="orders_eu")
    assert (t.dbName, t.tableName, t.tableType) == ("shop", "orders_eu", "EXTERNAL_TABLE")
    assert [c.name for c in t.sd.cols] == ["id", "amount"] and [k.name for k in t.partitionKeys] == ["ds"]
    note = t.parameters[UNAVAILABLE_PARAMETER]
    assert "is unavailable" in note and "as recorded on" in note
    assert 'DROP TABLE shop.orders_eu (or hmsproxy sql -e "DROP REMOTE TABLE shop.orders_eu") removes the link' in note
    assert t.parameters["hmsproxy.remote.table"] == "orders"
    d = client("get_database", name="sales_eu")
    assert (d.name, d.description, d.locationUri) == ("sales_eu", "sales in the EU", "file:/eu/sales.db")
    assert "DROP DATABASE sales_eu" in d.parameters[UNAVAILABLE_PARAMETER]

    # What the records can't answer fails, naming the way out.
    with pytest.raises(hive.MetaException) as err:
        client("get_partition_names", db_name="shop", tbl_name="orders_eu", max_parts=-1)
    assert err.value.message.startswith("hmsproxy: remote table shop.orders_eu: metastore 'remote:thrift://hms-eu:9083'")
    assert err.value.message.endswith(
        'is unavailable: connection refused; DROP TABLE shop.orders_eu (or hmsproxy sql -e "DROP REMOTE TABLE shop.orders_eu") removes the link'
    )

    client("drop_table_with_environment_context", dbname="shop", name="orders_eu", deleteData=True, environment_context=None)
    client("drop_database", name="sales_eu", deleteData=True, cascade=False)
    assert repo.list_tables() == [] and repo.list_databases() == []
    assert repo.recorded("table", "shop.orders_eu") is None and repo.recorded("database", "sales_eu") is None
    eu.come_up()
    assert eu.get_table("sales", "orders").tableName == "orders"  # nothing remote was touched
    assert [c for c in eu.methods_called if c.startswith("drop")] == []
    assert client("get_table", dbname="shop", tbl_name="events").tableName == "events"
    with pytest.raises(hive.NoSuchObjectException):
        client("get_table", dbname="shop", tbl_name="orders_eu")


def test_a_link_made_while_its_metastore_was_down_answers_with_a_stand_in(client, repo, eu):
    eu.go_down()
    for make in (
        lambda: client("create_table", tbl=table("shop", "orders_eu", parameters=link(**{"hmsproxy.remote.table": "orders"}))),
        lambda: client("create_database", database=database("sales_eu", parameters=link())),
    ):
        with pytest.raises(
            hive.MetaException,
            match=r"can't create remote .*: metastore 'remote:thrift://hms-eu:9083' .* is unavailable.*'hmsproxy.remote.check' = 'false'",
        ):
            make()  # checked when made: refused while out of reach ...
    assert repo.list_tables(None) == [] and repo.list_databases() == []
    make_links(client, **{"hmsproxy.remote.check": "false"})  # ... unless the statement says not to check
    assert repo.recorded("table", "shop.orders_eu") is None
    assert "hmsproxy.remote.check" not in repo.get_table("shop", "orders_eu").properties

    t = client("get_table", dbname="shop", tbl_name="orders_eu")
    assert (t.dbName, t.tableName, t.sd.cols, t.sd.location) == ("shop", "orders_eu", [], None)
    assert [k.name for k in t.partitionKeys] == [STAND_IN_PARTITION]  # a reader asks for partitions, and gets the error
    assert t.sd.skewedInfo is not None and t.sd.serdeInfo.serializationLib  # Hive's client reads both
    assert "nothing was recorded" in t.parameters[UNAVAILABLE_PARAMETER]
    req = client("get_table_req", req=hive.GetTableRequest(dbName="shop", tblName="orders_eu"))
    assert req.table.tableName == "orders_eu"
    d = client("get_database", name="sales_eu")
    assert d.locationUri == "hmsproxy-remote:/sales" and "DROP DATABASE sales_eu" in d.description


def test_a_down_remote_databases_tables_list_empty_only_after_its_fetch(client, eu):
    make_links(client)
    eu.go_down()
    # A client that lists without fetching the database first learns the metastore is down ...
    with pytest.raises(hive.MetaException, match="DROP DATABASE sales_eu"):
        client("get_all_tables", db_name="sales_eu")
    # ... the way Spark and Hive drop a database CASCADE (fetch, list, drop) goes through.
    client("get_database", name="sales_eu")
    assert client("get_tables", db_name="sales_eu", pattern="*") == []
    assert client("get_all_tables", db_name="sales_eu") == []
    client("drop_database", name="sales_eu", deleteData=True, cascade=True)
    with pytest.raises(hive.NoSuchObjectException):
        client("get_database", name="sales_eu")


def test_a_remote_object_gone_over_there_is_answered_from_its_record(client, repo, eu):
    make_links(client)
    eu.drop_table("sales", "orders", True)
    t = client("get_table", dbname="shop", tbl_name="orders_eu")
    assert [c.name for c in t.sd.cols] == ["id", "amount"]
    assert "has no table sales.orders" in t.parameters[UNAVAILABLE_PARAMETER]
    client("drop_table", dbname="shop", name="orders_eu", deleteData=True)
    assert repo.list_tables() == []


def test_cascade_drop_of_a_reachable_remote_database_goes_past_its_tables(client, repo, eu):
    make_links(client)
    # A Hive client's DROP DATABASE ... CASCADE: get_all_tables, then each table, then the database.
    assert client("get_all_tables", db_name="sales_eu") == ["orders"]
    with pytest.raises(hive.NoSuchObjectException, match="sales_eu.orders is not dropped: it is a table of remote database sales_eu"):
        client("drop_table", dbname="sales_eu", name="orders", deleteData=True)
    # Another client, which listed nothing, is refused as before.
    other = client.new_session()
    with pytest.raises(hive.MetaException, match="remote database sales_eu is read-only"):
        other("drop_table", dbname="sales_eu", name="orders", deleteData=True)
    client("drop_database", name="sales_eu", deleteData=True, cascade=True)
    assert repo.list_databases() == []
    assert eu.get_table("sales", "orders").tableName == "orders"


def test_property_made_remotes_are_logged_as_the_statements_they_mean(client, caplog):
    caplog.set_level(logging.INFO, logger="hmsproxy.features.statements")
    client(
        "create_table",
        tbl=table("shop", "orders_eu", parameters=link(**{"hmsproxy.remote.table": "orders", "ssh.tunnel.password": "s3cret"})),
    )
    client("drop_table", dbname="shop", name="orders_eu", deleteData=True)
    lines = [r.getMessage() for r in caplog.records]
    assert (
        "user erin: CREATE REMOTE TABLE shop.orders_eu CONNECTED TO sales.orders WITH TBLPROPERTIES "
        "('hive.metastore.uris'='thrift://hms-eu:9083', 'ssh.tunnel.password'='***') "
        "(a client's CREATE with hmsproxy.remote.* properties)"
    ) in lines
    assert "user erin: DROP REMOTE TABLE shop.orders_eu" in lines
    assert not any("s3cret" in line or "CreateRemoteTable(" in line for line in lines)


def test_a_link_to_nothing_is_refused_when_made(client, repo, eu):
    """A typo in CONNECTED TO makes no link: the catalog is asked first (the design: the target 'should exist')."""
    with pytest.raises(hive.NoSuchObjectException, match=r"thrift://hms-eu:9083 has no table 'sales.ordrs'"):
        client("create_table", tbl=table("shop", "orders_eu", parameters=link(**{"hmsproxy.remote.table": "ordrs"})))
    with pytest.raises(hive.MetaException, match=r"has no database 'sales_typo'"):  # create_database declares no NoSuchObject
        client("create_database", database=database("sales_eu", parameters=link(**{"hmsproxy.remote.database": "sales_typo"})))
    with pytest.raises(hive.InvalidObjectException, match=r"'hmsproxy.remote.check' is 'true' or 'false', not 'maybe'"):
        client("create_database", database=database("sales_eu", parameters=link(**{"hmsproxy.remote.check": "maybe"})))
    assert repo.list_tables(None) == [] and repo.list_databases() == []
    make_links(client)  # the right names: made, and recorded from the same answer
    assert repo.recorded("table", "shop.orders_eu") is not None and repo.recorded("database", "sales_eu") is not None


def test_a_kerberized_remote_needs_the_proxys_own_login(client, repo):
    """Hive's keys make a remote Kerberized; without server.sasl the proxy can't reach it, and says so."""
    kerberized = {"hive.metastore.sasl.enabled": "true", "hive.metastore.kerberos.principal": "hive/_HOST@EXAMPLE.COM"}
    with pytest.raises(hive.MetaException, match=r"is Kerberized \(hive.metastore.sasl.enabled\).*set server.sasl's principal and keytab"):
        client("create_database", database=database("sales_eu", parameters=link(**kerberized)))
    no_principal = {"hive.metastore.sasl.enabled": "true"}
    with pytest.raises(
        hive.InvalidObjectException, match=r"'hive.metastore.kerberos.principal' is required with 'hive.metastore.sasl.enabled'"
    ):
        client("create_database", database=database("sales_eu", parameters=link(**no_principal)))
    assert repo.list_databases() == []

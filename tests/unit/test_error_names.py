"""Metastore error messages in the client's names: the rewrite on the messages Hive writes, and the
handler applying it to declared exceptions (fake metastores; the real ones: test_error_names_versions.py)."""

from __future__ import annotations

import dataclasses
from contextlib import closing

import pytest
import thriftpy2.rpc

from hmsproxy.pipeline.call import Call
from hmsproxy.pipeline.error_names import ClientNames, names_of
from hmsproxy.protocol import idl
from hmsproxy.routing.methods import METHOD_SPECS
from hmsproxy.routing.router import Route
from hmsproxy.testing import FakeMetastore, args, database, table
from tests.support.fake_handlers import call, fake_federation
from tests.support.served import served

hive = idl.hive

#: sales is fed1_sales to the client; items (in sales) is the remote table's local name loc_items.
NAMES = ClientNames({"sales": "fed1_sales"}, {("sales", "items"): "loc_items"}, frozenset({"hive"}))


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # What Hive 2.3, 3.1 and 4.0 metastores answer (recorded from real ones: docs/errors.md).
        ("sales.nosuch table not found", "fed1_sales.nosuch table not found"),
        ("hive.sales.nosuch table not found", "hive.fed1_sales.nosuch table not found"),
        ("Table hive.sales.orders already exists", "Table hive.fed1_sales.orders already exists"),
        (
            "Unable to get partition because hive.sales.nosuch does not exist",
            "Unable to get partition because hive.fed1_sales.nosuch does not exist",
        ),
        ("database hive.sales", "database hive.fed1_sales"),
        ("sales", "fed1_sales"),
        ("Database sales already exists", "Database fed1_sales already exists"),
        ("Database sales is not empty. One or more tables exist.", "Database fed1_sales is not empty. One or more tables exist."),
        ("NoSuchObjectException(message:sales)", "NoSuchObjectException(message:fed1_sales)"),
        ("NoSuchObjectException(message:hive.sales.t table not found)", "NoSuchObjectException(message:hive.fed1_sales.t table not found)"),
        ("There is no database named sales", "There is no database named fed1_sales"),
        ("no such database: 'sales'", "no such database: 'fed1_sales'"),
        ("Table(tableName:t, dbName:sales, owner:u)", "Table(tableName:t, dbName:fed1_sales, owner:u)"),
        ("Unable to find database @hive#sales", "Unable to find database @hive#fed1_sales"),
        ("@hive#salesman", "@hive#salesman"),
        # A renamed table, dotted or where a table name stands.
        ("sales.items table not found", "fed1_sales.loc_items table not found"),
        ("hive.sales.items table not found", "hive.fed1_sales.loc_items table not found"),
        ("Table items already exists", "Table loc_items already exists"),
        # Left alone: not a whole identifier, not in a name's place, inside a path, a Java class.
        ("salesman.t table not found", "salesman.t table not found"),
        ("fed1_sales.t table not found", "fed1_sales.t table not found"),
        ("the sales figures", "the sales figures"),
        ("other.items table not found", "other.items table not found"),
        ("the items were", "the items were"),
        ("location file:/tmp/warehouse/sales.db/t is not empty", "location file:/tmp/warehouse/sales.db/t is not empty"),
        ("hdfs://nn:8020/wh/sales", "hdfs://nn:8020/wh/sales"),
        ("org.sales.hive.Thing failed", "org.sales.hive.Thing failed"),
        ("Invalid partition key & values; keys [], values [1, ]", "Invalid partition key & values; keys [], values [1, ]"),
    ],
)
def test_messages_name_what_the_client_named(message, expected):
    assert NAMES.rewrite(message) == expected


def test_a_database_called_like_the_catalog_or_a_common_word():
    hive_db = ClientNames({"hive": "fed1_hive"}, {}, frozenset({"hive"}))
    assert hive_db.rewrite("database hive.hive") == "database hive.fed1_hive"  # 4.0: catalog, then database
    assert hive_db.rewrite("hive.hive.t table not found") == "hive.fed1_hive.t table not found"
    assert hive_db.rewrite("hive.t table not found") == "fed1_hive.t table not found"  # 2.3: database.table
    default = ClientNames({"default": "fed1_default"}, {}, frozenset({"hive"}))
    assert default.rewrite("Can not drop default database") == "Can not drop fed1_default database"
    assert default.rewrite("no defaults in the default catalog") == "no defaults in the default catalog"


@pytest.fixture
def metastores():
    primary, fed = FakeMetastore("primary"), FakeMetastore("waggle")
    for m in (primary, fed):
        m.create_database(database("sales"))
        m.create_table(table("sales", "orders"))
    return primary, fed


def error_message(handler, method: str, **fields) -> str:
    """The message of the declared exception the call ends with."""
    with pytest.raises(hive.NoSuchObjectException) as raised:
        call(handler, method, **fields)
    return raised.value.message


def test_the_handler_names_a_federated_metastores_errors_as_the_client_did(tmp_path, metastores):
    handler = fake_federation(tmp_path, *metastores)
    try:
        assert error_message(handler, "get_table", dbname="waggle_sales", tbl_name="nosuch") == "waggle_sales.nosuch table not found"
        assert error_message(handler, "get_database", name="waggle_nodb") == "waggle_nodb"
        # The primary's names are the client's: its messages are as the metastore wrote them.
        assert error_message(handler, "get_table", dbname="sales", tbl_name="nosuch") == "sales.nosuch table not found"
    finally:
        handler.close()


def test_an_alias_is_named_as_the_client_spelled_it(tmp_path, metastores):
    handler = fake_federation(tmp_path, *metastores)
    try:
        config = handler.config
        fed = dataclasses.replace(config.federated[0], database_name_mapping={"sales": "shop"})
        handler.apply_config(dataclasses.replace(config, federated=(fed,)))
        assert error_message(handler, "get_table", dbname="waggle_shop", tbl_name="nosuch") == "waggle_shop.nosuch table not found"
        # Waggle Dance serves an aliased database under its own name too: the client's spelling comes back.
        assert error_message(handler, "get_table", dbname="WAGGLE_SALES", tbl_name="nosuch") == "waggle_sales.nosuch table not found"
    finally:
        handler.close()


def test_errors_of_a_renamed_database_are_never_relayed(tmp_path, metastores):
    """The relay copies answers undecoded: it would pass the metastore's names on. It declines every
    call whose route renames the database (fastpath.RENAMED), so those errors take the full path."""
    handler = fake_federation(tmp_path, *metastores)
    with served(handler) as server, closing(thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", server.port, timeout=10_000)) as client:
        for _ in range(3):  # the first answer teaches the proxy the metastore has get_table: relayable from then on
            with pytest.raises(hive.NoSuchObjectException) as primary:
                client.get_table("sales", "nosuch")
            with pytest.raises(hive.NoSuchObjectException) as federated:
                client.get_table("waggle_sales", "nosuch")
            assert (primary.value.message, federated.value.message) == (
                "sales.nosuch table not found",
                "waggle_sales.nosuch table not found",
            )
        assert handler.backends.state("primary").relayed > 0  # the relay is on, for names that need no change
        assert handler.backends.state("waggle").relayed == 0


def test_a_route_naming_no_database_renames_nothing_in_its_messages(tmp_path, metastores):
    """A feature routing by id (transactions' send_to) names no database: the call's arguments keep the
    client's names (nothing rewrote them), so none of them is taken for a metastore's name."""
    handler = fake_federation(tmp_path, *metastores)
    try:
        router = handler.router
        components = [hive.LockComponent(type=3, level=3, dbname="waggle_sales", tablename="t")] * 2
        lock = Call(None, METHOD_SPECS["lock"], args("lock", rqst=hive.LockRequest(component=components, user="u", hostname="h")), router)
        lock.route = Route(router.by_name["waggle"], "")
        assert names_of(lock) is None
        lock.route = router.route("waggle_sales")  # routed by its database: the arguments went out renamed
        lock.client_db = "waggle_sales"
        for c in components:
            c.dbname = "sales"
        assert names_of(lock).databases == {"sales": "waggle_sales"}
    finally:
        handler.close()

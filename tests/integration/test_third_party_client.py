"""A third-party Python metastore client (the `hmsclient` package, built on Apache Thrift) through the proxy."""

import pytest
from hmsclient import hmsclient
from hmsclient.genthrift.hive_metastore import ttypes


@pytest.fixture
def hms(proxy):
    with hmsclient.HMSClient(host="127.0.0.1", port=proxy.port) as client:
        yield client


def make_table(db, name):
    sd = ttypes.StorageDescriptor(
        cols=hmsclient.HMSClient.make_schema(["id:int", "name"]),
        inputFormat="org.apache.hadoop.mapred.TextInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
        serdeInfo=ttypes.SerDeInfo(serializationLib="org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe", parameters={}),
        parameters={},
        bucketCols=[],
        sortCols=[],
        numBuckets=-1,
        compressed=False,
    )
    keys = [ttypes.FieldSchema(name="ds", type="string", comment="")]
    return ttypes.Table(tableName=name, dbName=db, owner="hmsclient", sd=sd, partitionKeys=keys, parameters={}, tableType="MANAGED_TABLE")


def test_databases_tables_and_partitions(hms, federated_dbs, tmp_path):
    hms.create_database(
        ttypes.Database(name="thirdparty", description="via hmsclient", locationUri=(tmp_path / "thirdparty.db").as_uri(), parameters={})
    )
    try:
        assert "thirdparty" in hms.get_all_databases()
        assert "waggle_sales" in hms.get_databases("waggle_*")
        assert hms.get_database("thirdparty").description == "via hmsclient"

        hms.create_table(make_table("thirdparty", "visits"))
        table = hms.get_table("thirdparty", "visits")
        assert [c.name for c in table.sd.cols] == ["id", "name"]
        assert hms.get_all_tables("thirdparty") == ["visits"]

        for day in ("2026-11-01", "2026-11-02"):
            hms.add_partition(table, [day])
        assert hms.get_partition_names("thirdparty", "visits", -1) == ["ds=2026-11-01", "ds=2026-11-02"]
        parts = hms.get_partitions_by_filter("thirdparty", "visits", "ds = '2026-11-02'", -1)
        assert [p.values for p in parts] == [["2026-11-02"]]
        assert hms.drop_partition("thirdparty", "visits", ["2026-11-01"], True)
        assert hms.get_partition_names("thirdparty", "visits", -1) == ["ds=2026-11-02"]
    finally:
        hms.drop_database("thirdparty", True, True)
    assert "thirdparty" not in hms.get_all_databases()


def test_federated_table_read_through_hmsclient(hms, federated_orders):
    table = hms.get_table("waggle_sales", "orders")
    assert table.dbName == "waggle_sales"
    names = hms.get_partition_names("waggle_sales", "orders", -1)
    assert names == ["ds=2026-11-01", "ds=2026-11-02"]
    parts = hms.get_partitions("waggle_sales", "orders", -1)
    assert {p.dbName for p in parts} == {"waggle_sales"}


# -- a Hive 3/4-era client (pymetastore) on the Hive 2.3 backends ----------------------


def test_pymetastore_reads_databases_tables_and_partitions_from_a_2_3_backend(proxy, hms, federated_orders):
    """pymetastore's generated code is Hive 3's and it asserts what Hive 3 sets: Partition.catName among them."""
    from pymetastore.hive_metastore.ttypes import GetTableRequest
    from pymetastore.metastore import HMS

    with HMS.create(host="127.0.0.1", port=proxy.port) as client:
        assert {"default", "waggle_sales"} <= set(client.list_databases())
        db = client.get_database("waggle_sales")
        assert db.name == "waggle_sales"
        assert client.client.get_database("waggle_sales").catalogName == "hive"
        assert "orders" in client.list_tables("waggle_sales")
        table = client.get_table("waggle_sales", "orders")
        assert (table.database_name, table.name) == ("waggle_sales", "orders")
        assert [c.name for c in table.partition_columns] == ["ds"]
        assert client.list_partitions("waggle_sales", "orders") == ["ds=2026-11-01", "ds=2026-11-02"]
        partitions = client.get_partitions("waggle_sales", "orders")
        assert [(p.database_name, p.table_name, p.values, p.cat_name) for p in partitions] == [
            ("waggle_sales", "orders", ["2026-11-01"], "hive"),
            ("waggle_sales", "orders", ["2026-11-02"], "hive"),
        ]
        # get_table_req, Hive 3's way, with the catalog named the Hive 3 way.
        answer = client.client.get_table_req(GetTableRequest(dbName="waggle_sales", tblName="orders", catName="hive"))
        assert (answer.table.dbName, answer.table.tableName) == ("waggle_sales", "orders")
    # hmsclient's older generated code has no catName: it skips the field and reads the rest.
    older = hms.get_partitions("waggle_sales", "orders", -1)
    assert [p.values for p in older] == [["2026-11-01"], ["2026-11-02"]] and not hasattr(older[0], "catName")

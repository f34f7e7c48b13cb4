"""The worked example of a catalog factory (tests/example_catalog, docs/remotes.md "Writing a catalog
factory"), loaded by its dotted path through the real proxy: a catalog kept in one JSON file reads
like a metastore, refuses what it must, and picks up the file's changes on a new connection."""

from __future__ import annotations

import json

import pytest
import thriftpy2.rpc

from hmsproxy.clients.proxy import HmsProxyClient, HmsProxyError
from hmsproxy.protocol import idl

hive = idl.hive
FACTORY = "tests.example_catalog.factory:JsonFileFactory"


@pytest.fixture
def catalog_file(tmp_path):
    path = tmp_path / "catalog.json"
    tables = {"orders": {"location": f"file:{tmp_path}/orders", "columns": [["id", "bigint"], ["customer", "string"]]}}
    path.write_text(json.dumps({"databases": {"sales": {"location": f"file:{tmp_path}", "tables": tables}}}))
    return path


@pytest.fixture
def uri(proxy):
    return f"thrift://127.0.0.1:{proxy.port}"


@pytest.fixture
def files_db(uri, catalog_file):
    with HmsProxyClient(uri) as c:
        c.execute(f"CREATE REMOTE DATABASE files CONNECTED TO sales VIA '{FACTORY}' WITH DBPROPERTIES ('path' = '{catalog_file}')")
    yield "files"
    with HmsProxyClient(uri) as c:
        c.execute("DROP REMOTE DATABASE files")


def new_client(proxy):
    return thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", proxy.port, timeout=60_000)


def test_a_json_file_catalog_reads_like_a_metastore(files_db, proxy, catalog_file):
    client = new_client(proxy)
    try:
        assert client.get_all_tables("files") == ["orders"]
        table = client.get_table("files", "orders")
        assert (table.dbName, table.tableName, table.tableType) == ("files", "orders", "EXTERNAL_TABLE")
        assert [(c.name, c.type) for c in table.sd.cols] == [("id", "bigint"), ("customer", "string")]
        assert table.sd.serdeInfo.serializationLib.endswith("ParquetHiveSerDe")
        # The message names the table as the client does (pipeline/error_names.py), not as the file does.
        with pytest.raises(hive.NoSuchObjectException, match="has no table 'files.nope'"):
            client.get_table("files", "nope")
        table.parameters["x"] = "y"
        with pytest.raises(hive.MetaException, match="remote database files is read-only"):
            client.alter_table("files", "orders", table)
    finally:
        client.close()
    data = json.loads(catalog_file.read_text())
    data["databases"]["sales"]["tables"]["returns"] = {"columns": [["id", "bigint"]]}
    catalog_file.write_text(json.dumps(data))
    client = new_client(proxy)  # a new connection opens the file again
    try:
        assert client.get_all_tables("files") == ["orders", "returns"]
    finally:
        client.close()


def test_bad_links_are_refused_by_the_factory(uri, catalog_file):
    with HmsProxyClient(uri) as c:
        with pytest.raises(HmsProxyError, match="property 'path' is required"):
            c.execute(f"CREATE REMOTE DATABASE files_x CONNECTED TO sales VIA '{FACTORY}'")
        with pytest.raises(HmsProxyError, match=f"JSON catalog {catalog_file} has no table 'sales.ordrs'"):
            c.execute(
                f"CREATE REMOTE TABLE files_t CONNECTED TO sales.ordrs VIA '{FACTORY}' WITH TBLPROPERTIES ('path' = '{catalog_file}')"
            )
        with pytest.raises(HmsProxyError, match="can't be loaded"):
            c.execute("CREATE REMOTE DATABASE files_x CONNECTED TO sales VIA 'tests.example_catalog.factory:NoSuchFactory'")

"""Skewed tables' location maps (a Thrift map keyed by lists) through the proxy, both ways.

Before hmsproxy/protocol/codec.py the proxy could not decode such a message: the Hive CLI's
`ALTER TABLE … SET SKEWED LOCATION` closed its connection, and every statement after it failed.
"""

from __future__ import annotations

import uuid
from dataclasses import replace

import pytest

from hmsproxy.protocol import idl
from hmsproxy.testing import table
from hmsproxy.upstream.wire import ThriftConnection
from tests.support.served import served

hive = idl.hive


def connect(uri: str, transport: str = "buffered") -> ThriftConnection:
    return ThriftConnection("test", (uri,), call_timeout_s=60, transport=transport)


def skewed_table(db: str, name: str, location_map: dict, location: str) -> hive.Table:
    # Managed: list bucketing is refused on external tables (features/skew/rules.py).
    t = table(db, name, columns=(("x", "string"), ("y", "int")))
    t.sd.location = location
    t.sd.skewedInfo = hive.SkewedInfo(
        skewedColNames=["x", "y"], skewedColValues=[["a", "1"], ["b", "2"]], skewedColValueLocationMaps=location_map
    )
    t.sd.storedAsSubDirectories = True
    return t


@pytest.fixture(params=["buffered", "framed"])
def proxy_uri(request, proxy, default_config):
    """The session proxy's URI, or (framed) a proxy of the same config speaking the framed transport."""
    if request.param == "buffered":
        yield proxy.uri, "buffered"
        return
    with served(replace(default_config, server=replace(default_config.server, transport="framed")), transport="framed") as server:
        yield server.uri, "framed"


def test_a_location_map_goes_through_the_proxy_and_comes_back(proxy_uri, metastores, tmp_path):
    name = f"sk_{uuid.uuid4().hex[:8]}"
    location_map = {("a", "1"): (tmp_path / "x=a" / "y=1").as_uri(), ("b", "2"): (tmp_path / "x=b" / "y=2").as_uri()}
    client, direct = connect(*proxy_uri), connect(metastores[0].uri)
    try:
        client.call("create_table", idl.HmsProxy.create_table_args(tbl=skewed_table("default", name, {}, tmp_path.as_uri())))
        update = skewed_table("default", name, location_map, tmp_path.as_uri())
        answer = client.call("alter_table", idl.HmsProxy.alter_table_args(dbname="default", tbl_name=name, new_tbl=update))
        assert answer.o1 is None and answer.o2 is None
        # Stored by the metastore as sent, and read back through the proxy as stored.
        stored = direct.call("get_table", idl.HmsProxy.get_table_args(dbname="default", tbl_name=name)).success
        assert stored.sd.skewedInfo.skewedColValueLocationMaps == location_map
        back = client.call("get_table", idl.HmsProxy.get_table_args(dbname="default", tbl_name=name)).success
        assert back.sd.skewedInfo.skewedColValueLocationMaps == location_map
        # The same connection goes on working after a message the fast decoder could not read.
        assert name in client.call("get_all_tables", idl.HmsProxy.get_all_tables_args(db_name="default")).success
    finally:
        client.call("drop_table", idl.HmsProxy.drop_table_args(dbname="default", name=name, deleteData=False))
        client.close()
        direct.close()


def test_hive_cli_sets_skewed_locations_through_the_proxy(hive_cli, proxy, metastores, tmp_path):
    db = f"skcli_{uuid.uuid4().hex[:8]}"
    where = (tmp_path / "x1").as_uri()
    script = f"""
CREATE DATABASE {db} LOCATION '{(tmp_path / db).as_uri()}';
CREATE TABLE {db}.sk (x STRING, y INT) SKEWED BY (x) ON ('x1', 'x2') STORED AS DIRECTORIES;
ALTER TABLE {db}.sk SET SKEWED LOCATION ('x1'='{where}');
DESCRIBE FORMATTED {db}.sk;
SHOW TABLES IN {db};
DROP DATABASE {db} CASCADE;
"""
    result = hive_cli(proxy.uri, script)
    assert result.returncode == 0, f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-3000:]}"
    assert "Skewed Value to Path" in result.stdout and where.removeprefix("file:") in result.stdout
    assert any(line.strip() == "sk" for line in result.stdout.splitlines())  # SHOW TABLES, after the ALTER

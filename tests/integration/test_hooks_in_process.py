"""A hook that reads a metastore (skew: the table a client alters) does it in process, over the
client's own backend connection: a real proxy in front of a real metastore behind a forwarder that
counts the connections it carries, and none is opened for the hook."""

from __future__ import annotations

import uuid

import pytest
import thriftpy2.rpc

from hmsproxy.protocol import idl
from hmsproxy.testing import partition, table
from hmsproxy.upstream.wire import parse_uri
from tests.support.dropping_forwarder import DroppingForwarder, proxy_behind_forwarder

hive = idl.hive
COLUMNS = (("id", "int"), ("country", "string"))
PARTITIONED = (("ds", "string"),)


@pytest.fixture
def counted(metastores):
    """(proxy, forwarder): the proxy's primary is metastores[0] behind a forwarder counting connections."""
    with proxy_behind_forwarder(metastores) as pair:
        yield pair


def skewed(name: str):
    t = table("default", name, columns=COLUMNS, partition_keys=PARTITIONED)
    t.sd.skewedInfo = hive.SkewedInfo(skewedColNames=["country"], skewedColValues=[["US"]], skewedColValueLocationMaps={})
    return t


def test_skews_alter_checks_make_no_new_backend_connection(counted):
    server, forwarder = counted
    listener = DroppingForwarder("127.0.0.1", server.port)  # counts the connections the proxy's listener gets
    client = thriftpy2.rpc.make_client(idl.HmsProxy, *parse_uri(listener.uri), timeout=60000)
    plain, skew = f"plain_{uuid.uuid4().hex[:8]}", f"skewed_{uuid.uuid4().hex[:8]}"
    try:
        client.set_ugi("alice", [])
        client.create_table(table("default", plain, columns=COLUMNS, partition_keys=PARTITIONED))
        client.create_table(skewed(skew))
        for name in (plain, skew):
            client.add_partition(partition("default", name, ["1"]))
            client.get_table("default", name)  # the client's backend connection exists
        opened = forwarder.accepted

        for name in (plain, skew):
            # rewritten without skew, as Spark does (an empty SkewedInfo, storedAsSubDirectories unset):
            # skew reads the table (and partitions) first to keep theirs
            t = client.get_table("default", name)
            t.parameters["k"], t.sd.skewedInfo, t.sd.storedAsSubDirectories = "v", hive.SkewedInfo([], [], {}), None
            client.alter_table("default", name, t)
            p = client.get_partition("default", name, ["1"])
            p.parameters["k"], p.sd.skewedInfo = "v", None
            client.alter_partition("default", name, p)
            p.parameters["k"] = "w"
            client.alter_partitions("default", name, [p])

        assert forwarder.accepted == opened  # the hooks' reads went over the client's own connection
        assert listener.accepted == 1  # and never re-entered the proxy over TCP
        assert client.get_table("default", plain).parameters["k"] == "v"
        kept = client.get_table("default", skew)  # the hook did read it: the skew left out is kept
        assert kept.parameters["k"] == "v" and kept.sd.skewedInfo.skewedColNames == ["country"]
        assert client.get_partition("default", plain, ["1"]).parameters["k"] == "w"
    finally:
        for name in (plain, skew):
            try:
                client.drop_table("default", name, True)
            except hive.NoSuchObjectException:
                pass
        client.close()
        listener.stop()

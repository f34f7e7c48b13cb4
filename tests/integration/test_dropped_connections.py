"""A backend connection dropped while idle (a firewall, a load balancer, a metastore restart) costs
a read nothing: it goes again on a new connection. A write is never sent twice: it goes on a new
connection when the kept one is seen closed before it is sent, and fails when its answer is lost."""

from __future__ import annotations

import uuid

import pytest
import thriftpy2.rpc

from hmsproxy.protocol import idl
from tests.support.dropping_forwarder import proxy_behind_forwarder

hive = idl.hive


@pytest.fixture
def dropping(metastores):
    """(proxy, forwarder): the proxy's primary is metastores[0] behind a forwarder that can drop connections."""
    with proxy_behind_forwarder(metastores) as pair:
        yield pair


@pytest.fixture
def client(dropping):
    """A client of the proxy that has called once already: its backend connection is open and kept."""
    client = thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", dropping[0].port, timeout=30000)
    try:
        assert client.get_database("default").name == "default"  # the full path
        yield client
    finally:
        client.close()


def database(name: str):
    return hive.Database(name=name, description=None, locationUri=None, parameters={})


def test_a_read_on_a_dropped_idle_connection_goes_again_on_a_new_one(dropping, client):
    server, forwarder = dropping
    assert client.get_table_meta("default", "*", None) is not None  # and a relayed read
    opened = forwarder.accepted

    forwarder.drop_all()
    assert client.get_database("default").name == "default"
    forwarder.drop_all()
    assert isinstance(client.get_all_tables("default"), list)

    assert forwarder.accepted == opened + 2  # one new connection each time, nothing else
    assert server.handler.backends.state("primary").up is True  # never reported down


def test_a_write_on_a_connection_dropped_while_idle_goes_on_a_new_one(dropping, client):
    forwarder, name = dropping[1], f"dropped_{uuid.uuid4().hex[:8]}"
    opened = forwarder.accepted
    forwarder.drop_all()
    client.create_database(database(name))
    assert forwarder.accepted == opened + 1  # seen closed before it was sent: one new connection
    assert client.get_database(name).name == name
    client.drop_database(name, True, True)


def test_a_write_whose_answer_is_lost_fails_and_is_not_sent_again(dropping, client, metastores):
    forwarder, name = dropping[1], f"lost_{uuid.uuid4().hex[:8]}"
    opened = forwarder.accepted
    forwarder.lose_next_answer()
    with pytest.raises(hive.MetaException, match="metastore 'primary' .* is unavailable"):
        client.create_database(database(name))
    assert forwarder.accepted == opened  # not sent again on a new connection
    direct = metastores[0].client()
    try:
        assert name in direct.get_all_databases()  # it reached the metastore, once
    finally:
        direct.close()
    client.drop_database(name, True, True)

"""Real metastores record their events, so get_next_notification returns them (directly and through the proxy).

Hive 2.3 and 3.1 run hcatalog's DbNotificationListener (fetched with Maven once, see
hmsproxy.dev.versions); Hive 4.0.1 has no listener to run, so it records nothing. When the
jars cannot be fetched these tests skip with the reason, except in CI (CI=true), where they fail.
"""

from __future__ import annotations

import copy
import json
import logging
import shutil

import pytest
import thriftpy2.rpc

from hmsproxy.dev import maven
from hmsproxy.dev.metastore import LocalMetastore
from hmsproxy.dev.ports import free_port
from hmsproxy.dev.versions import hive_version
from hmsproxy.protocol import idl
from tests.integration.test_hive_versions import get_table, partitioned_table
from tests.support.federation import prefixed_config
from tests.support.required import unavailable
from tests.support.served import served

hive = idl.hive

#: Upper bound of get_next_notification pages read in one test (each page up to 100 events).
MAX_PAGES = 20


@pytest.fixture(scope="module")
def metastores(tmp_path_factory):
    """``metastores(version)``: one started metastore per Hive version, shared by the module's tests."""
    started: dict[str, LocalMetastore] = {}

    def get(version: str) -> LocalMetastore:
        if version not in started:
            try:
                hive_version(version).prepare()
            except maven.FetchError as exc:
                unavailable(f"cannot fetch Hive {version} with Maven: {exc}")
            ms = LocalMetastore(free_port(), tmp_path_factory.mktemp(f"events-{version}"), hive_version=version, name=f"events-{version}")
            started[version] = ms  # stopped below even if start fails half-way
            ms.start()
        return started[version]

    try:
        yield get
    finally:
        for ms in started.values():
            ms.stop()


def with_notifications(metastores, version: str) -> LocalMetastore:
    ms = metastores(version)
    if not ms.notifications_enabled:
        unavailable(f"Hive {version} metastore runs without notifications: {ms.notifications_unavailable}")
    return ms


def connect(host: str, port: int):
    return thriftpy2.rpc.make_client(idl.HmsProxy, host, port, timeout=60000)


def make_changes(client, version: str, db: str) -> None:
    """CREATE_DATABASE db, CREATE_TABLE db.orders, ADD_PARTITION db.orders/ds=2026-11-01."""
    client.create_database(hive.Database(name=db, description="notifications", locationUri=None, parameters={}))
    client.create_table(partitioned_table(db, "orders"))
    table = get_table(client, version, db, "orders")
    sd = copy.deepcopy(table.sd)
    sd.location = f"{table.sd.location}/ds=2026-11-01"
    client.add_partition(hive.Partition(values=["2026-11-01"], dbName=db, tableName="orders", sd=sd, parameters={}))


def events_after(client, last_event: int) -> list:
    events = []
    for _ in range(MAX_PAGES):
        page = client.get_next_notification(hive.NotificationEventRequest(lastEvent=last_event, maxEvents=100)).events
        if not page:
            return events
        events += page
        last_event = page[-1].eventId
    raise AssertionError(f"more than {MAX_PAGES} pages of events")


def summary(events) -> list[tuple[str, str, str | None]]:
    """(type, database, table) of each event; its JSON message names the same database and table."""
    out = []
    for e in events:
        message = json.loads(e.message)
        assert (message["db"], message.get("table")) == (e.dbName, e.tableName), e
        out.append((e.eventType, e.dbName, e.tableName))
    return out


def expected(db: str) -> list[tuple[str, str, str | None]]:
    return [("CREATE_DATABASE", db, None), ("CREATE_TABLE", db, "orders"), ("ADD_PARTITION", db, "orders")]


@pytest.mark.parametrize("version", ["2.3", "3.1"])
def test_changes_come_back_as_events(metastores, version):
    ms = with_notifications(metastores, version)
    db = f"events_{version.replace('.', '_')}"
    client = connect(ms.host, ms.port)
    try:
        before = client.get_current_notificationEventId().eventId
        make_changes(client, version, db)
        after = client.get_current_notificationEventId().eventId
        events = events_after(client, before)
    finally:
        client.close()

    assert summary(events) == expected(db)
    assert [e.eventId for e in events] == list(range(before + 1, after + 1))
    partition_message = json.loads(events[-1].message)
    assert partition_message["table"] == "orders" and partition_message["partitions"] == [{"ds": "2026-11-01"}]


def test_hive_4_0_records_no_events(metastores):
    ms = metastores("4.0")
    assert not ms.notifications_enabled
    assert "no notification listener" in ms.notifications_unavailable
    client = connect(ms.host, ms.port)
    try:
        before = client.get_current_notificationEventId().eventId
        make_changes(client, "4.0", "events_4_0")
        assert client.get_current_notificationEventId().eventId == before
        assert events_after(client, before) == []
    finally:
        client.close()


def test_without_the_listener_jars_it_starts_without_events(tmp_path, monkeypatch, caplog):
    # An empty jar cache and no Maven: what an offline machine sees on its first start.
    monkeypatch.setenv(maven.CACHE_ENV, str(tmp_path / "cache"))
    which = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name, *a, **kw: None if name == "mvn" else which(name, *a, **kw))
    ms = LocalMetastore(free_port(), tmp_path / "state", log=lambda _msg: None)
    with caplog.at_level(logging.WARNING, logger="hmsproxy.dev.versions"), ms:
        assert not ms.notifications_enabled
        assert "no 'mvn' on PATH" in ms.notifications_unavailable
        assert "DbNotificationListener" not in " ".join(ms.command())
        client = ms.client()
        try:
            client.create_database(hive.Database(name="unrecorded", description="", locationUri=None, parameters={}))
            assert client.get_current_notificationEventId().eventId == 0
        finally:
            client.close()
    assert "no metastore notifications" in caplog.text


def test_events_through_the_proxy_are_the_primarys(metastores):
    """Notification calls name no database: they go to the primary, whose events come back as they are."""
    primary = with_notifications(metastores, "2.3")
    federated = with_notifications(metastores, "3.1")
    with served(prefixed_config(primary.uri, federated.uri)) as server:
        proxy = connect("127.0.0.1", server.port)
        direct = connect(primary.host, primary.port)
        fed = connect(federated.host, federated.port)
        try:
            before = proxy.get_current_notificationEventId().eventId
            assert before == direct.get_current_notificationEventId().eventId
            make_changes(proxy, "2.3", "proxied_events")
            # A change on the federated metastore is its own event, never seen through the proxy.
            fed.create_database(hive.Database(name="federated_events", description="", locationUri=None, parameters={}))
            through_proxy = events_after(proxy, before)
            assert through_proxy == events_after(direct, before)
            assert proxy.get_current_notificationEventId() == direct.get_current_notificationEventId()
        finally:
            for client in (proxy, direct, fed):
                client.close()

    assert summary(through_proxy) == expected("proxied_events")


@pytest.mark.parametrize("version", ["2.3"])
def test_an_event_larger_than_derbys_long_varchar_is_recorded(metastores, version):
    """300 partitions in one add_partitions: a 250,000-character message. With the schema DataNucleus
    makes by itself (MESSAGE as LONG VARCHAR, 32,700 at most) the call itself failed. 2.3 only: 3.1
    passes no datanucleus.mapping to DataNucleus (HIVE-17788), so its local metastores keep the limit."""
    ms = with_notifications(metastores, version)
    db = f"big_events_{version.replace('.', '_')}"
    client = connect(ms.host, ms.port)
    try:
        client.create_database(hive.Database(name=db, description="big events", locationUri=None, parameters={}))
        client.create_table(partitioned_table(db, "orders"))
        table = get_table(client, version, db, "orders")
        before = client.get_current_notificationEventId().eventId
        parts = []
        for i in range(300):
            sd = copy.deepcopy(table.sd)
            sd.location = f"{table.sd.location}/ds={i:05d}"
            parts.append(hive.Partition(values=[f"{i:05d}"], dbName=db, tableName="orders", sd=sd, parameters={}))
        assert client.add_partitions(parts) == 300
        (event,) = events_after(client, before)
        assert event.eventType == "ADD_PARTITION" and len(event.message) > 32_700
        assert len(json.loads(event.message)["partitions"]) == 300
    finally:
        client.drop_database(db, True, True)
        client.close()

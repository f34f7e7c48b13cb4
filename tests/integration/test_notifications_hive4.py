"""The merged notification log with a real Hive 4 member (docs/notifications.md, "Formats"): a Hive 4.2.0
metastore (hmsproxy.dev.versions "4.2", on Java 21+) records events with hcatalog's DbNotificationListener
in Hive 4's default format, gzip(json-2.0). Federated under a Hive 2.3 primary, its events made through
the proxy reach an Impala-style follower once each, with dense proxy ids, still gzip, and with the
federation's database name inside the decoded messages, where the member's own log names its database;
Hive 3.1's Java HiveMetaStoreClient reads the same events with its missing-event check on.
"""

from __future__ import annotations

import base64
import contextlib
import gzip

import pytest
import thriftpy2.rpc

from hmsproxy.features.notifications.config import NotificationsConfig
from hmsproxy.protocol import idl
from tests.integration.test_notifications_federated import add_partition, partitioned, summary
from tests.support.federation import prefixed_config, stored_in
from tests.support.hive_java_client import HiveJavaReader
from tests.support.impala_follower import ImpalaStyleFollower
from tests.support.notification_names import assert_named_as_the_federation_shows
from tests.support.notifying_metastores import start_notifying
from tests.support.served import served

hive = idl.hive

GZIP_JSON = "gzip(json-2.0)"
#: The member's database, shown as waggle_sales.
SHOWN = "sales"


def connect(host: str, port: int):
    return thriftpy2.rpc.make_client(idl.HmsProxy, host, port, timeout=120_000)


@pytest.fixture(scope="module")
def metastores(tmp_path_factory):
    """(2.3 primary, 4.2 member), both recording events; the member has `sales`."""
    started: list = []
    try:
        primary = start_notifying("2.3", tmp_path_factory, started, tag="notif4")
        member = start_notifying("4.2", tmp_path_factory, started, tag="notif4")
        with contextlib.closing(connect(member.host, member.port)) as direct:
            direct.create_database(hive.Database(name=SHOWN, description="", locationUri=None, parameters={}))
        yield primary, member
    finally:
        for ms in started:
            ms.stop()


def plain(message: str) -> str:
    """A gzip(json-2.0) message as its JSON text (base64 of gzip)."""
    return gzip.decompress(base64.b64decode(message)).decode("utf-8")


def test_a_hive4_members_gzip_events_reach_a_follower_once_with_federation_names(metastores, tmp_path_factory):
    primary, member = metastores
    config = prefixed_config(primary.uri, member.uri, mapped_databases=(SHOWN,))
    config = stored_in(config, tmp_path_factory.mktemp("notif4-store")).with_section("notifications", NotificationsConfig(federate=True))
    with served(config) as server, contextlib.closing(connect(member.host, member.port)) as direct:
        client, follower = connect("127.0.0.1", server.port), ImpalaStyleFollower(connect("127.0.0.1", server.port))
        try:
            follower.poll()  # where it starts, as Impala does
            start, member_start = follower.last_synced, direct.get_current_notificationEventId().eventId
            own, fed = "notif4_own", "waggle_sales"
            client.create_database(hive.Database(name=own, description="", locationUri=None, parameters={}))
            client.create_table(partitioned(fed, "orders"))
            add_partition(client, fed, "orders", "2026-11-29")
            altered = client.get_table(fed, "orders")
            altered.parameters = {**(altered.parameters or {}), "touched": "yes"}
            client.alter_table(fed, "orders", altered)
            client.drop_table(fed, "orders", True)
            client.drop_database(own, True, True)
            events = follower.poll()
            assert follower.poll() == []  # nothing seen twice
            # Hive 3.1's HiveMetaStoreClient, whose getNextNotification throws on a missing event id.
            java = HiveJavaReader("3.1", tmp_path_factory.mktemp("notif4-java")).read(f"thrift://127.0.0.1:{server.port}", start)
            recorded = direct.get_next_notification(hive.NotificationEventRequest(lastEvent=member_start)).events
        finally:
            client.close()
            follower.client.close()

    member_events = [
        ("CREATE_TABLE", fed, "orders"),
        ("ADD_PARTITION", fed, "orders"),
        ("ALTER_TABLE", fed, "orders"),
        ("DROP_TABLE", fed, "orders"),
    ]
    # One pull after all the changes: the primary's events first (order of arrival), each metastore's in order.
    assert summary(events) == [("CREATE_DATABASE", own, None), ("DROP_DATABASE", own, None), *member_events]
    assert [e.eventId for e in events] == list(range(start + 1, start + 1 + len(events)))
    # What the member itself recorded: gzip, its own name for the database.
    assert [(e.eventType, e.dbName, e.messageFormat) for e in recorded] == [(t, SHOWN, GZIP_JSON) for t, _, _ in member_events]
    assert all(f'"db":"{SHOWN}"' in plain(e.message) for e in recorded)
    assert java.current == events[-1].eventId
    assert [(j.id, j.type, j.db, j.table, j.format, j.message) for j in java.events] == [
        (e.eventId, e.eventType, e.dbName, e.tableName, e.messageFormat, e.message) for e in events
    ]
    for event in events:
        if event.dbName == fed:  # the member's: still gzip, renamed inside
            assert event.messageFormat == GZIP_JSON
            assert_named_as_the_federation_shows(event.eventType, event.dbName, event.tableName, plain(event.message))
        else:  # the 2.3 primary's
            assert event.messageFormat == "json-0.2"
            assert_named_as_the_federation_shows(event.eventType, event.dbName, event.tableName, event.message)

"""The merged notification log (docs/notifications.md) with Spark as the client making the changes and
Hive's own Java HiveMetaStoreClient reading them: a Hive 2.3 primary and a Hive 3.1 member `fed1`
(prefix fed1_), both recording events with DbNotificationListener. Spark, through the proxy, creates,
inserts into (with hive.metastore.dml.events on in its Hive client), alters and drops on both; the
Java client of Hive 2.3.10 and of Hive 3.1.3 and the Impala-style follower then read the merged log
and see every event the two metastores recorded, once each, in each metastore's order, with dense
ids and the federation's names in the events and inside their messages.
"""

from __future__ import annotations

import dataclasses
from contextlib import contextmanager

import pytest

from hmsproxy.features.notifications.config import NotificationsConfig
from hmsproxy.protocol import idl
from tests.support.hive_java_client import HiveJavaReader
from tests.support.impala_follower import ImpalaStyleFollower
from tests.support.mixed_versions import metastore_config
from tests.support.notification_names import assert_named_as_the_federation_shows
from tests.support.required import unavailable

pytestmark = pytest.mark.spark
hive = idl.hive

OWN, MEMBER_DB, FED = "notif_spark", "mixed_sales", "fed1_mixed_sales"
#: The settings Impala's event processor checks (EventProcessorConfigValidator) and the batch size and
#: message factory Hive's REPL reads.
CONFIG_KEYS = (
    "hive.metastore.notifications.add.thrift.objects",
    "hive.metastore.alter.notifications.basic",
    "hive.metastore.dml.events",
    "hive.metastore.batch.retrieve.max",
    "hive.metastore.event.message.factory",
)
#: Bounds reading a metastore's log directly.
MAX_PAGES = 100


@pytest.fixture(scope="module")
def pair(metastores_by_version):
    primary, member = metastores_by_version["2.3"], metastores_by_version["3.1"]
    for version, ms in (("2.3", primary), ("3.1", member)):
        if not ms.notifications_enabled:
            unavailable(f"the Hive {version} metastore runs without notifications: {ms.notifications_unavailable}")
    return primary, member


def notifying_federation(base, primary, member):
    config = dataclasses.replace(
        base, primary=metastore_config("n23", primary, "2.3", primary=True), federated=(metastore_config("fed1", member, "3.1"),)
    )
    return config.with_section("notifications", NotificationsConfig(federate=True))


@contextmanager
def dml_events(spark):
    """hive.metastore.dml.events on in Spark's Hive client: Hive.loadTable/loadPartition then call
    fire_listener_event (an INSERT event). The setting is the client's, read from its HiveConf at each
    load; the session is shared by the process's Spark tests, so it is put back after."""
    conf = spark._jsparkSession.sharedState().externalCatalog().unwrapped().client().conf()
    before = conf.get("hive.metastore.dml.events")
    conf.set("hive.metastore.dml.events", "true")
    try:
        yield
    finally:
        conf.set("hive.metastore.dml.events", before or "false")


def spark_changes(spark) -> None:
    spark.sql(f"CREATE DATABASE {OWN}")
    spark.sql(f"CREATE TABLE {OWN}.t_plain (id INT) STORED AS TEXTFILE")
    spark.sql(f"INSERT INTO {OWN}.t_plain VALUES (1), (2)")
    spark.sql(f"ALTER TABLE {OWN}.t_plain SET TBLPROPERTIES ('owner_team'='notif')")
    spark.sql(f"CREATE TABLE {FED}.t_notif (id INT) PARTITIONED BY (ds STRING) STORED AS TEXTFILE")
    spark.sql(f"INSERT INTO {FED}.t_notif PARTITION (ds='1') VALUES (1)")
    spark.sql(f"INSERT INTO {FED}.t_notif PARTITION (ds='1') VALUES (2)")
    spark.sql(f"ALTER TABLE {FED}.t_notif ADD COLUMNS (v STRING)")
    assert spark.sql(f"SELECT count(1) FROM {FED}.t_notif").collect()[0][0] == 2
    spark.sql(f"DROP TABLE {FED}.t_notif")
    spark.sql(f"DROP DATABASE {OWN} CASCADE")


def current_id(ms) -> int:
    client = ms.client()
    try:
        return client.get_current_notificationEventId().eventId
    finally:
        client.close()


def recorded(ms, after: int) -> list:
    """The events `ms` recorded after its id `after`, read from it directly."""
    client = ms.client()
    try:
        out = []
        for _ in range(MAX_PAGES):
            page = client.get_next_notification(hive.NotificationEventRequest(lastEvent=after, maxEvents=1000)).events or []
            if not page:
                return out
            out += page
            after = page[-1].eventId
        raise AssertionError(f"more than {MAX_PAGES} pages of events")
    finally:
        client.close()


def test_hive_java_client_and_a_follower_read_every_event_spark_made_on_both_metastores(
    spark, proxy, proxy_config, proxy_client, pair, tmp_path_factory
):
    primary, member = pair
    readers = [HiveJavaReader(version, tmp_path_factory.mktemp("java")) for version in ("2.3", "3.1")]
    with proxy_config(lambda base: notifying_federation(base, primary, member)):
        start = proxy_client.get_current_notificationEventId().eventId  # the first pull sets each metastore's mark
        marks = {"n23": current_id(primary), "fed1": current_id(member)}
        try:
            with dml_events(spark):
                spark_changes(spark)
        finally:
            spark.sql(f"DROP TABLE IF EXISTS {FED}.t_notif")
            spark.sql(f"DROP DATABASE IF EXISTS {OWN} CASCADE")
        # What each metastore recorded, named as the federation shows it.
        expected = {
            "n23": [(e.eventType, e.dbName, e.tableName) for e in recorded(primary, marks["n23"])],
            "fed1": [(e.eventType, "fed1_" + e.dbName, e.tableName) for e in recorded(member, marks["fed1"])],
        }
        reads = {r.version: r.read(proxy.uri, start) for r in readers}
        # What consumers ask before following the log (Impala's config check): the primary's answer.
        direct = primary.client()
        try:
            for key in CONFIG_KEYS:
                assert proxy_client.get_config_value(key, "unset") == direct.get_config_value(key, "unset"), key
        finally:
            direct.close()
        follower = ImpalaStyleFollower(proxy_client, last_synced=start)
        follower.poll()

    # Spark's statements as each metastore logged them (docs/notifications.md): Hive 2.3's load fires
    # INSERT for a table and for an existing partition, not for a new one; the member's INSERT came
    # through fire_listener_event in Hive 3's layout (insert_event_layout.py).
    plain, part = (OWN, "t_plain"), (FED, "t_notif")
    assert expected["n23"] == [
        ("CREATE_DATABASE", OWN, None),
        ("CREATE_TABLE", *plain),
        ("ALTER_TABLE", *plain),
        ("INSERT", *plain),
        ("ALTER_TABLE", *plain),
        ("DROP_TABLE", *plain),
        ("DROP_DATABASE", OWN, None),
    ]
    kinds = ["CREATE_TABLE", "ADD_PARTITION", "INSERT", "ALTER_PARTITION", "ALTER_TABLE", "DROP_TABLE"]
    assert expected["fed1"] == [(kind, *part) for kind in kinds]
    total = len(expected["n23"]) + len(expected["fed1"])
    for version, read in reads.items():
        seen = [(e.type, e.db, e.table) for e in read.events]
        assert read.current == start + total, version
        assert [e.id for e in read.events] == list(range(start + 1, start + 1 + total)), version
        assert sorted(seen) == sorted(expected["n23"] + expected["fed1"]), version  # every event, once
        for db, name in ((OWN, "n23"), (FED, "fed1")):  # each metastore's own order
            assert [s for s in seen if s[1] == db] == expected[name], version
        for e in read.events:
            assert_named_as_the_federation_shows(e.type, e.db, e.table, e.message)
    java = [(e.id, e.type, e.db, e.table, e.message) for e in reads["3.1"].events]
    assert [(e.eventId, e.eventType, e.dbName, e.tableName, e.message) for e in follower.seen] == java
    assert java == [(e.id, e.type, e.db, e.table, e.message) for e in reads["2.3"].events]

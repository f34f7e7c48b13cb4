"""The merged notification log (docs/notifications.md) of ONE federation of three real metastores, each
recording events with hcatalog's DbNotificationListener: the session's Hive 2.3 primary, its Hive 3.1
member `n31` and a Hive 4.2.0 member `n42` (Java 21+, Hive 4's default gzip(json-2.0) messages; no Hive
4.0.x metastore can record events here, see "A Hive 4 member"). Spark, through the proxy, makes DDL and
DML on all three (create, insert with hive.metastore.dml.events on, add partition, alter, drop); the
Java HiveMetaStoreClient of Hive 2.3.10 and of Hive 3.1.3 (missing-event check on) and the Impala-style
follower then read the merged log and see every event the three metastores recorded, once each, in each
metastore's order, with dense ids and the federation's names in the events and inside their messages,
the 4.2 member's still gzip.

The 4.2 member starts once for this module (~45 s cold on an idle machine); the 2.3 and 3.1 are the
session's, shared with the other tests that mix versions.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import gzip
from contextlib import contextmanager

import pytest

from hmsproxy.features.notifications.config import NotificationsConfig
from hmsproxy.protocol import idl
from tests.support.hive_java_client import HiveJavaReader
from tests.support.impala_follower import ImpalaStyleFollower
from tests.support.mixed_versions import metastore_config
from tests.support.notification_names import assert_named_as_the_federation_shows
from tests.support.notifying_metastores import start_notifying
from tests.support.required import unavailable

pytestmark = pytest.mark.spark
hive = idl.hive

#: The database each member shows (as n31_mixed_sales, n42_mixed_sales) and the primary's own one.
MEMBER_DB, OWN = "mixed_sales", "notif_spark"
#: Metastore name -> its Hive version; members are prefixed with their name.
VERSIONS = {"n23": "2.3", "n31": "3.1", "n42": "4.2"}
MEMBERS = ("n31", "n42")
GZIP_JSON = "gzip(json-2.0)"
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


def fed(member: str) -> str:
    return f"{member}_{MEMBER_DB}"


@pytest.fixture(scope="module")
def hive42(tmp_path_factory):
    """A Hive 4.2.0 metastore recording events, with `mixed_sales` (federated members can't create databases)."""
    started: list = []
    try:
        ms = start_notifying("4.2", tmp_path_factory, started, tag="notif3")
        location = (tmp_path_factory.mktemp("notif3-warehouse") / "sales_42.db").as_uri()
        with contextlib.closing(ms.client()) as direct:
            direct.create_database(hive.Database(name=MEMBER_DB, description=None, locationUri=location, parameters={}))
        yield ms
    finally:
        for ms in started:
            ms.stop()


@pytest.fixture(scope="module")
def three(metastores_by_version, hive42):
    """Metastore name -> the running metastore, all three recording events."""
    found = {"n23": metastores_by_version["2.3"], "n31": metastores_by_version["3.1"], "n42": hive42}
    for name, ms in found.items():
        if not ms.notifications_enabled:
            unavailable(f"the Hive {VERSIONS[name]} metastore runs without notifications: {ms.notifications_unavailable}")
    return found


def notifying_federation(base, three):
    primary = metastore_config("n23", three["n23"], "2.3", primary=True)
    members = tuple(metastore_config(name, three[name], VERSIONS[name]) for name in MEMBERS)
    config = dataclasses.replace(base, primary=primary, federated=members)
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


def primary_changes(spark) -> None:
    spark.sql(f"CREATE DATABASE {OWN}")
    spark.sql(f"CREATE TABLE {OWN}.t_plain (id INT) STORED AS TEXTFILE")
    spark.sql(f"INSERT INTO {OWN}.t_plain VALUES (1), (2)")
    spark.sql(f"ALTER TABLE {OWN}.t_plain SET TBLPROPERTIES ('owner_team'='notif')")
    spark.sql(f"DROP DATABASE {OWN} CASCADE")


def member_changes(spark, db: str) -> None:
    spark.sql(f"CREATE TABLE {db}.t_notif (id INT) PARTITIONED BY (ds STRING) STORED AS TEXTFILE")
    spark.sql(f"INSERT INTO {db}.t_notif PARTITION (ds='1') VALUES (1)")
    spark.sql(f"INSERT INTO {db}.t_notif PARTITION (ds='1') VALUES (2)")
    spark.sql(f"ALTER TABLE {db}.t_notif ADD PARTITION (ds='2')")
    spark.sql(f"ALTER TABLE {db}.t_notif ADD COLUMNS (v STRING)")
    assert spark.sql(f"SELECT count(1) FROM {db}.t_notif").collect()[0][0] == 2
    spark.sql(f"DROP TABLE {db}.t_notif")


def clean_up(spark) -> None:
    for member in MEMBERS:
        spark.sql(f"DROP TABLE IF EXISTS {fed(member)}.t_notif")
    spark.sql(f"DROP DATABASE IF EXISTS {OWN} CASCADE")


def current_id(ms) -> int:
    with contextlib.closing(ms.client()) as client:
        return client.get_current_notificationEventId().eventId


def recorded(ms, after: int) -> list:
    """The events `ms` recorded after its id `after`, read from it directly."""
    with contextlib.closing(ms.client()) as client:
        out = []
        for _ in range(MAX_PAGES):
            page = client.get_next_notification(hive.NotificationEventRequest(lastEvent=after, maxEvents=1000)).events or []
            if not page:
                return out
            out += page
            after = page[-1].eventId
        raise AssertionError(f"more than {MAX_PAGES} pages of events")


def plain(message_format: str | None, message: str) -> str:
    """An event's JSON text: gzip(json-2.0) is base64 of gzip."""
    return gzip.decompress(base64.b64decode(message)).decode("utf-8") if message_format == GZIP_JSON else message


def client_db(name: str, db: str) -> str:
    return db if name == "n23" else f"{name}_{db}"


def test_java_clients_and_a_follower_read_every_event_spark_made_on_three_versions(
    spark, proxy, proxy_config, proxy_client, three, tmp_path_factory
):
    readers = [HiveJavaReader(version, tmp_path_factory.mktemp("java")) for version in ("2.3", "3.1")]
    with proxy_config(lambda base: notifying_federation(base, three)):
        start = proxy_client.get_current_notificationEventId().eventId  # the first pull sets each metastore's mark
        marks = {name: current_id(ms) for name, ms in three.items()}
        try:
            with dml_events(spark):
                primary_changes(spark)
                for member in MEMBERS:
                    member_changes(spark, fed(member))
        finally:
            clean_up(spark)
        raw = {name: recorded(ms, marks[name]) for name, ms in three.items()}
        reads = {r.version: r.read(proxy.uri, start) for r in readers}
        # What consumers ask before following the log (Impala's config check): the primary's answer.
        with contextlib.closing(three["n23"].client()) as direct:
            for key in CONFIG_KEYS:
                assert proxy_client.get_config_value(key, "unset") == direct.get_config_value(key, "unset"), key
        follower = ImpalaStyleFollower(proxy_client, last_synced=start)
        follower.poll()
        assert follower.poll() == []  # nothing seen twice

    # What each metastore recorded, named as the federation shows it.
    expected = {name: [(e.eventType, client_db(name, e.dbName), e.tableName) for e in events] for name, events in raw.items()}
    # Spark's statements as each metastore logged them (docs/notifications.md): Hive 2.3's load fires
    # INSERT for a table and for an existing partition, not for a new one; the members' INSERT came
    # through fire_listener_event in Hive 3's layout (insert_event_layout.py).
    plain_t = (OWN, "t_plain")
    assert expected["n23"] == [
        ("CREATE_DATABASE", OWN, None),
        ("CREATE_TABLE", *plain_t),
        ("ALTER_TABLE", *plain_t),
        ("INSERT", *plain_t),
        ("ALTER_TABLE", *plain_t),
        ("DROP_TABLE", *plain_t),
        ("DROP_DATABASE", OWN, None),
    ]
    kinds = ["CREATE_TABLE", "ADD_PARTITION", "INSERT", "ALTER_PARTITION", "ADD_PARTITION", "ALTER_TABLE", "DROP_TABLE"]
    for member in MEMBERS:
        assert expected[member] == [(kind, fed(member), "t_notif") for kind in kinds], member
    # The 4.2 member's own log: gzip, its own name for the database inside.
    assert {e.messageFormat for e in raw["n42"]} == {GZIP_JSON}
    assert all(f'"db":"{MEMBER_DB}"' in plain(e.messageFormat, e.message) for e in raw["n42"])

    total = sum(len(events) for events in expected.values())
    for version, read in reads.items():
        seen = [(e.type, e.db, e.table) for e in read.events]
        assert read.current == start + total, version
        assert [e.id for e in read.events] == list(range(start + 1, start + 1 + total)), version
        assert sorted(seen) == sorted(sum(expected.values(), [])), version  # every event, once
        for name, events in expected.items():  # each metastore's own order
            db_of = {db for _, db, _ in events}
            assert [s for s in seen if s[1] in db_of] == events, (version, name)
        for e in read.events:
            assert e.format == (GZIP_JSON if e.db == fed("n42") else "json-0.2"), (version, e)
            assert_named_as_the_federation_shows(e.type, e.db, e.table, plain(e.format, e.message))
    java = [(e.id, e.type, e.db, e.table, e.format, e.message) for e in reads["3.1"].events]
    assert [(e.eventId, e.eventType, e.dbName, e.tableName, e.messageFormat, e.message) for e in follower.seen] == java
    assert java == [(e.id, e.type, e.db, e.table, e.format, e.message) for e in reads["2.3"].events]

"""One notification log for the federation (features/notifications, docs/notifications.md), with real
metastores: a PREFIXED federation of a Hive 2.3 primary and a Hive 3.1 member, both recording events
with hcatalog's DbNotificationListener. Changes made through the proxy by a Python client come back to
an Impala-style follower once each, with dense proxy ids and the federation's database names in the
events and inside their JSON messages; two proxies on one PostgreSQL store hand out the same ids; a
proxy restarted mid-stream loses and repeats nothing.
"""

from __future__ import annotations

import copy
import json
import threading
from dataclasses import replace

import pytest
import thriftpy2.rpc

from hmsproxy.config.model import StoreConfig
from hmsproxy.dev.metastore import LocalMetastore
from hmsproxy.dev.ports import free_port
from hmsproxy.features.notifications.config import NotificationsConfig
from hmsproxy.protocol import idl
from hmsproxy.testing import table
from tests.support.federation import prefixed_config, stored_in
from tests.support.impala_follower import ImpalaStyleFollower
from tests.support.notification_names import assert_named_as_the_federation_shows
from tests.support.notifying_metastores import start_notifying
from tests.support.served import served

hive = idl.hive

#: The member's databases: `sales` is shown (as waggle_sales) and writable, `hr` is not shown at all.
SHOWN, HIDDEN = "sales", "hr"


@pytest.fixture(scope="module")
def metastores(tmp_path_factory):
    """(2.3 primary, 3.1 member), both recording events; the member has `sales` and `hr`."""
    started: list[LocalMetastore] = []
    try:
        primary = start_notifying("2.3", tmp_path_factory, started)
        member = start_notifying("3.1", tmp_path_factory, started)
        direct = connect(member.host, member.port)
        try:
            for db in (SHOWN, HIDDEN):
                direct.create_database(hive.Database(name=db, description="", locationUri=None, parameters={}))
        finally:
            direct.close()
        yield primary, member
    finally:
        for ms in started:
            ms.stop()


def federation(metastores, store_dir=None, store_url=None):
    primary, member = metastores
    config = prefixed_config(primary.uri, member.uri, mapped_databases=(SHOWN,))
    config = stored_in(config, store_dir) if store_dir is not None else config
    if store_url is not None:
        config = replace(config, store=StoreConfig(store_url))
    return config.with_section("notifications", NotificationsConfig(federate=True))


def connect(host: str, port: int):
    return thriftpy2.rpc.make_client(idl.HmsProxy, host, port, timeout=120_000)


def proxy_client(server):
    return connect("127.0.0.1", server.port)


def add_partition(client, db: str, name: str, value: str) -> None:
    t = client.get_table(db, name)
    sd = copy.deepcopy(t.sd)
    sd.location = f"{t.sd.location}/ds={value}"
    client.add_partition(hive.Partition(values=[value], dbName=db, tableName=name, sd=sd, parameters={}))


def partitioned(db: str, name: str):
    return table(db, name, partition_keys=(("ds", "string"),), parameters={}, owner="tester")


def changes(client, tag: str, after_each=lambda: None) -> list[tuple[str, str, str | None]]:
    """DDL through the proxy on both metastores; `after_each` runs after every change (Impala reads the
    current id right after its own DDL). Returns the (type, client db, table) of the events expected."""
    own, fed = f"notif_{tag}", "waggle_sales"
    expected = []

    def did(kind, db, tbl=None):
        expected.append((kind, db, tbl))
        after_each()

    client.create_database(hive.Database(name=own, description="", locationUri=None, parameters={}))
    did("CREATE_DATABASE", own)
    client.create_table(partitioned(own, "orders"))
    did("CREATE_TABLE", own, "orders")
    client.create_table(partitioned(fed, f"orders_{tag}"))
    did("CREATE_TABLE", fed, f"orders_{tag}")
    add_partition(client, own, "orders", "2026-11-01")
    did("ADD_PARTITION", own, "orders")
    add_partition(client, fed, f"orders_{tag}", "2026-11-02")
    did("ADD_PARTITION", fed, f"orders_{tag}")
    client.drop_table(fed, f"orders_{tag}", True)
    did("DROP_TABLE", fed, f"orders_{tag}")
    client.drop_database(own, True, True)
    expected.append(("DROP_TABLE", own, "orders"))  # a cascade drops the table first, its own event
    did("DROP_DATABASE", own)
    return expected


def hidden_change(metastores, tag: str) -> None:
    """A table made straight on the member in a database the federation does not show."""
    _, member = metastores
    direct = connect(member.host, member.port)
    try:
        direct.create_table(partitioned(HIDDEN, f"secret_{tag}"))
    finally:
        direct.close()


def summary(events) -> list[tuple[str, str, str | None]]:
    return [(e.eventType, e.dbName, e.tableName) for e in events]


@pytest.fixture(scope="module")
def proxy(metastores, tmp_path_factory):
    with served(federation(metastores, store_dir=tmp_path_factory.mktemp("notif-store"))) as server:
        yield server


def test_a_follower_sees_every_event_of_both_metastores_once_with_federation_names(metastores, proxy):
    client = proxy_client(proxy)
    follower = ImpalaStyleFollower(proxy_client(proxy))
    try:
        follower.poll()  # where it starts, as Impala does
        start = follower.last_synced
        ids_after_own_ddl = []

        def read_current():  # what Impala does right after its own DDL: that DDL's event is in it
            current = client.get_current_notificationEventId().eventId
            (event,) = client.get_next_notification(hive.NotificationEventRequest(lastEvent=current - 1, maxEvents=1)).events
            ids_after_own_ddl.append((current, event.eventType, event.dbName, event.tableName))

        hidden_change(metastores, "a")
        expected = changes(client, "a", after_each=read_current)
        events = follower.poll()
        assert follower.poll() == []  # nothing seen twice
    finally:
        client.close()
        follower.client.close()

    assert summary(events) == expected
    assert [e.eventId for e in events] == list(range(start + 1, start + 1 + len(expected)))
    by_id = {e.eventId: (e.eventId, *s) for e, s in zip(events, summary(events), strict=True)}
    assert len(ids_after_own_ddl) == len(expected) - 1  # the cascade's DROP_TABLE came with DROP_DATABASE
    assert ids_after_own_ddl == [by_id[current] for current, *_ in ids_after_own_ddl]
    assert ids_after_own_ddl[-1][1] == "DROP_DATABASE"
    for event in events:
        assert_named_as_the_federation_shows(event.eventType, event.dbName, event.tableName, event.message)


def test_hive4_filters_and_counts_over_the_merged_log(metastores, proxy):
    """Hive 4's request filters and get_notification_events_count (Hive 3.0+) answered by the proxy
    over both metastores' events, in the federation's names and the proxy's ids, though neither the
    2.3 primary nor the 3.1 member knows the filters."""
    client = proxy_client(proxy)
    try:
        start = client.get_current_notificationEventId().eventId
        hidden_change(metastores, "f")
        expected = changes(client, "f")
        everything = client.get_next_notification(hive.NotificationEventRequest(lastEvent=start)).events

        def filtered(**filters):
            return client.get_next_notification(hive.NotificationEventRequest(lastEvent=start, **filters)).events

        def count(**fields):
            return client.get_notification_events_count(hive.NotificationEventsCountRequest(fromEventId=start, **fields)).eventsCount

        fed = [e for e in everything if e.dbName == "waggle_sales"]
        by_db = filtered(dbName="waggle_sales")
        no_partitions = filtered(eventTypeSkipList=["ADD_PARTITION"])
        one_table = filtered(dbName="notif_f", tableNames=["ORDERS"])
        first_two = filtered(dbName="waggle_sales", maxEvents=2)
        counts = (
            count(dbName="waggle_sales"),
            count(dbName="notif_f"),
            count(dbName="waggle_sales", limit=1),
            count(dbName="waggle_sales", toEventId=fed[0].eventId),
            count(dbName="waggle_hr"),
        )
    finally:
        client.close()

    # No pull between the changes: the primary's come first (order of arrival), each metastore's in order.
    assert sorted(summary(everything)) == sorted(expected)
    assert [e.eventId for e in everything] == list(range(start + 1, start + 1 + len(expected)))
    assert [(e.eventId, e.message) for e in by_db] == [(e.eventId, e.message) for e in fed] and len(fed) == 3
    assert [e.eventId for e in first_two] == [e.eventId for e in fed[:2]]
    assert [e.eventId for e in no_partitions] == [e.eventId for e in everything if e.eventType != "ADD_PARTITION"]
    assert summary(one_table) == [s for s in expected if s[1:] == ("notif_f", "orders")]
    own = [s for s in expected if s[1] == "notif_f"]
    assert counts == (3, len(own), 1, 1, 0)


def test_two_proxies_on_one_postgres_store_hand_out_the_same_ids(metastores, pg_url):
    config = federation(metastores, store_url=pg_url)
    with served(config) as one, served(config) as two:
        clients = [proxy_client(one), proxy_client(two)]
        try:
            start = clients[0].get_current_notificationEventId().eventId
            stop = threading.Event()
            errors: list[BaseException] = []

            def keep_pulling(c):  # both proxies merge while the changes are made: they race for each batch
                try:
                    for _ in range(500):
                        if stop.is_set():
                            return
                        c.get_current_notificationEventId()
                except BaseException as e:  # reported below
                    errors.append(e)

            pullers = [connect("127.0.0.1", s.port) for s in (one, two)]
            threads = [threading.Thread(target=keep_pulling, args=(p,)) for p in pullers]
            for t in threads:
                t.start()
            try:
                expected = changes(clients[0], "pg") + changes(clients[1], "pg2")
            finally:
                stop.set()
                for t in threads:
                    t.join(timeout=120)
                for p in pullers:
                    p.close()
            assert not errors and not any(t.is_alive() for t in threads)
            seen = []
            for c in clients:
                follower = ImpalaStyleFollower(c, last_synced=start)
                follower.poll()
                seen.append([(e.eventId, e.eventType, e.dbName, e.tableName, e.message) for e in follower.seen])
        finally:
            for c in clients:
                c.close()

    assert seen[0] == seen[1]
    # Each metastore's events keep their order; across the two, the order of arrival.
    for db in ("notif_pg", "notif_pg2", "waggle_sales"):
        assert [s[1:4] for s in seen[0] if s[2] == db] == [e for e in expected if e[1] == db]
    assert sorted(s[1:4] for s in seen[0]) == sorted(expected)


def test_a_proxy_restarted_mid_stream_loses_and_repeats_nothing(metastores, tmp_path):
    config = federation(metastores, store_dir=tmp_path)
    primary, member = metastores
    with served(config) as first:
        follower = ImpalaStyleFollower(proxy_client(first))
        follower.poll()
        start = follower.last_synced
        client = proxy_client(first)
        try:
            expected = changes(client, "r1", after_each=client.get_current_notificationEventId)
        finally:
            client.close()
        # The follower reads one event, then the proxy goes away.
        follower.client.get_current_notificationEventId()
        request = hive.NotificationEventRequest(lastEvent=follower.last_synced, maxEvents=1)
        (one,) = follower.client.get_next_notification(request).events
        follower.last_synced = one.eventId
        follower.seen.append(one)
        follower.client.close()
    # While no proxy runs, clients change the metastores directly: the next proxy merges those too.
    direct = connect(primary.host, primary.port)
    try:
        direct.create_database(hive.Database(name="notif_between", description="", locationUri=None, parameters={}))
    finally:
        direct.close()
    expected.append(("CREATE_DATABASE", "notif_between", None))
    with served(config) as second:
        follower.client = proxy_client(second)
        try:
            follower.poll()
        finally:
            follower.client.close()
    assert summary(follower.seen) == expected
    assert [e.eventId for e in follower.seen] == list(range(start + 1, start + 1 + len(expected)))


def test_a_members_transactions_show_with_the_ids_clients_hold(metastores, proxy):
    """ACID events of the 3.1 member (the 2.3 primary records none): a client's transactions through the
    proxy appear under the primary's ids it holds (not the member's real ones), their duplicate OPEN_TXN
    on the member is passed over, and a transaction opened on the member directly appears under the
    encoded id the proxy's merged views show for it; write ids pass as they are."""
    _, member = metastores
    client, direct = proxy_client(proxy), connect(member.host, member.port)
    acid = table("waggle_sales", "acid_t", parameters={"transactional": "true", "transactional_properties": "insert_only"}, owner="t")

    def opened(c) -> int:
        return c.open_txns(hive.OpenTxnRequest(num_txns=1, user="tester", hostname="test-host")).txn_ids[0]

    def write_ids(txn: int) -> list[tuple[int, int]]:
        rqst = hive.AllocateTableWriteIdsRequest(dbName="waggle_sales", tableName="acid_t", txnIds=[txn])
        return [(p.txnId, p.writeId) for p in client.allocate_table_write_ids(rqst).txnToWriteIds]

    try:
        client.create_table(acid)
        # The member's ids run ahead of the primary's, so an id left untranslated can't pass for the client's.
        ahead = direct.open_txns(hive.OpenTxnRequest(num_txns=5, user="tester", hostname="test-host")).txn_ids
        direct.abort_txns(hive.AbortTxnsRequest(txn_ids=ahead))
        start = client.get_current_notificationEventId().eventId
        member_start = direct.get_current_notificationEventId().eventId
        committed = opened(client)
        first = write_ids(committed)
        client.commit_txn(hive.CommitTxnRequest(txnid=committed))
        aborted = opened(client)
        second = write_ids(aborted)
        client.abort_txn(hive.AbortTxnRequest(txnid=aborted))
        real = opened(direct)  # a transaction the proxy did not open: merged views show it encoded
        before = {t.id for t in client.get_open_txns_info().open_txns}
        direct.abort_txn(hive.AbortTxnRequest(txnid=real))
        events = client.get_next_notification(hive.NotificationEventRequest(lastEvent=start)).events
        raw = direct.get_next_notification(hive.NotificationEventRequest(lastEvent=member_start)).events
        again = client.get_next_notification(hive.NotificationEventRequest(lastEvent=start)).events
    finally:
        client.close()
        direct.close()

    (shown_real,) = [t for t in before if t & ((1 << 44) - 1) == real and t != real]
    assert first == [(committed, 1)] and second == [(aborted, 2)]
    # As the member wrote them: its own ids, and an OPEN_TXN of each transaction the proxy opened there.
    raw_ids = [(e.eventType, json.loads(e.message).get("txnid")) for e in raw]
    assert [kind for kind, _ in raw_ids] == [
        "OPEN_TXN",
        "ALLOC_WRITE_ID_EVENT",
        "COMMIT_TXN",
        "OPEN_TXN",
        "ALLOC_WRITE_ID_EVENT",
        "ABORT_TXN",
        "OPEN_TXN",
        "ABORT_TXN",
    ]
    assert raw_ids[2][1] not in (committed, aborted) and raw_ids[5][1] not in (committed, aborted)
    messages = [(e.eventType, e.dbName, e.tableName, json.loads(e.message)) for e in events]
    # Hive 3.1's listener records these with table " " and the databaseless ones with database "null".
    assert [m[:3] for m in messages] == [
        ("ALLOC_WRITE_ID_EVENT", "waggle_sales", " "),
        ("COMMIT_TXN", "null", " "),
        ("ALLOC_WRITE_ID_EVENT", "waggle_sales", " "),
        ("ABORT_TXN", "null", " "),
        ("OPEN_TXN", "null", " "),
        ("ABORT_TXN", "null", " "),
    ]
    assert bodies_table(messages) == ["acid_t", "acid_t"]
    bodies = [m[3] for m in messages]
    assert (bodies[0]["dbName"], bodies[0]["txnIdList"], bodies[0]["writeIdList"]) == ("waggle_sales", [committed], [1])
    assert bodies[1]["txnid"] == committed
    assert (bodies[2]["txnIdList"], bodies[2]["writeIdList"]) == ([aborted], [2])
    assert bodies[3]["txnid"] == aborted
    assert (bodies[4]["fromTxnId"], bodies[4]["toTxnId"]) == (shown_real, shown_real)
    assert bodies[5]["txnid"] == shown_real
    assert [e.eventId for e in events] == list(range(start + 1, start + 7))
    assert [(e.eventId, e.message) for e in again] == [(e.eventId, e.message) for e in events]  # read the same again


def test_status_names_a_member_whose_notification_settings_disagree_with_the_primarys(metastores, tmp_path):
    """`hmsproxy status` (hmsproxy_describe): a third metastore, a 2.3 set up with another batch size and
    dml events on, is named with each key that differs from what the proxy answers get_config_value
    with (the primary's); the 3.1 member, set up alike, is not."""
    odd_conf = {"hive.metastore.batch.retrieve.max": "100", "hive.metastore.dml.events": "true"}
    odd = LocalMetastore(free_port(), tmp_path / "odd", hive_conf=odd_conf, name="notif-odd", notifications=False)
    try:
        odd.start()
        config = federation(metastores, store_dir=tmp_path / "store")
        other = replace(config.federated[0], name="odd", uris=(odd.uri,), database_prefix="odd_")
        config = replace(config, federated=(*config.federated, other))
        with served(config) as server:
            client = proxy_client(server)
            try:
                status = client.hmsproxy_describe()
                asked = client.get_config_value("hive.metastore.batch.retrieve.max", "")
            finally:
                client.close()
    finally:
        odd.stop()
    warnings = [line for line in status.splitlines() if line.startswith("notifications: ")]
    assert asked == "300"
    assert warnings == [
        "notifications: metastore 'odd' has hive.metastore.dml.events=true, but the proxy answers get_config_value "
        "with the primary's false: set it alike on every metastore",
        "notifications: metastore 'odd' has hive.metastore.batch.retrieve.max=100, but the proxy answers get_config_value "
        "with the primary's 300: set it alike on every metastore",
    ]


def bodies_table(messages) -> list[str]:
    return [body["tableName"] for *_, body in messages if "tableName" in body]


def test_a_member_killed_and_restarted_loses_and_repeats_nothing(metastores, tmp_path):
    """Last in the module: it kills the shared member (SIGKILL) and starts it again on its own database."""
    _, member = metastores
    with served(federation(metastores, store_dir=tmp_path)) as server:
        client, follower = proxy_client(server), ImpalaStyleFollower(proxy_client(server))
        try:
            follower.poll()
            start = follower.last_synced
            client.create_table(partitioned("waggle_sales", "before_kill"))
            assert summary(follower.poll()) == [("CREATE_TABLE", "waggle_sales", "before_kill")]
            member.stop(grace_s=0)  # no grace: SIGKILL at once
            client.create_database(hive.Database(name="notif_while_down", description="", locationUri=None, parameters={}))
            # The merged log goes on without the member.
            assert summary(follower.poll()) == [("CREATE_DATABASE", "notif_while_down", None)]
            member.start()
            # The session's write connection to the member died with it: the write is seen to need a
            # new one before it is sent (a write is never sent twice, so it must not meet a dead one).
            client.create_table(partitioned("waggle_sales", "after_restart"))
            client.drop_database("notif_while_down", True, True)
            follower.poll()
            assert follower.poll() == []
        finally:
            client.close()
            follower.client.close()
    assert summary(follower.seen) == [
        ("CREATE_TABLE", "waggle_sales", "before_kill"),
        ("CREATE_DATABASE", "notif_while_down", None),
        ("DROP_DATABASE", "notif_while_down", None),
        ("CREATE_TABLE", "waggle_sales", "after_restart"),
    ]
    assert [e.eventId for e in follower.seen] == list(range(start + 1, start + 5))

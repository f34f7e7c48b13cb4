"""The merged notification log (features/notifications) against in-memory metastore logs: merging in
batches, what is passed over, a metastore that is down, two logs racing on one store, serving by id
with the federation's names, and the section's parsing. The real metastores' side is
tests/integration/test_notifications_federated.py."""

from __future__ import annotations

import base64
import gzip
import json

import pytest

from hmsproxy.app import config_sections
from hmsproxy.config import ConfigError, load_config
from hmsproxy.features.notifications.config import NotificationsConfig
from hmsproxy.features.notifications.filters import of_count_request, of_events_request
from hmsproxy.features.notifications.labelling import Labeller
from hmsproxy.features.notifications.merging import Merger
from hmsproxy.features.notifications.messages import rewrite_message
from hmsproxy.features.notifications.model import BATCH, Label, Pulled
from hmsproxy.features.notifications.serving import next_events
from hmsproxy.features.notifications.store import NOTIFICATIONS_SCHEMA, NotificationLog, log_table
from hmsproxy.protocol import idl
from hmsproxy.routing.router import Router
from hmsproxy.store.db import Store
from hmsproxy.store.schema import StoreSchema
from hmsproxy.upstream.wire import BackendUnavailable
from tests.support.federation import manual_config, prefixed_config

hive = idl.hive
P = idl.HmsProxy


class Logs:
    """Each metastore's notification log, answered as a metastore answers (a fake session's `call`)."""

    def __init__(self):
        self.events: dict[str, list] = {"primary": [], "waggle": []}
        self.down: set[str] = set()
        self.asked: list[tuple[str, str, int | None]] = []

    def add(self, metastore: str, kind: str, db: str | None, table: str | None = None, message: dict | None = None):
        events = self.events[metastore]
        body = json.dumps(message if message is not None else {"db": db, "table": table})
        events.append(hive.NotificationEvent(len(events) + 1, 0, kind, db, table, body, "json-0.2"))

    def call(self, metastore, method: str, args, read_only: bool = False):
        if metastore.name in self.down:
            raise BackendUnavailable(metastore.name, metastore.uris[0], "connection refused")
        events = self.events[metastore.name]
        if method == "get_current_notificationEventId":
            return P.get_current_notificationEventId_result(success=hive.CurrentNotificationEventId(eventId=len(events)))
        rqst = args.rqst
        self.asked.append((metastore.name, method, rqst.maxEvents))
        after = [e for e in events if e.eventId > rqst.lastEvent][: rqst.maxEvents]
        return P.get_next_notification_result(success=hive.NotificationEventResponse(events=after))


@pytest.fixture
def store(tmp_path):
    s = Store(f"sqlite:///{tmp_path / 'store.db'}", [NOTIFICATIONS_SCHEMA])
    s.migrate()
    yield s
    s.close()


@pytest.fixture
def router():
    return Router(prefixed_config("thrift://primary:1", "thrift://waggle:1", mapped_databases=("sales",)))


def merged(log: NotificationLog) -> list[tuple[int, str, int]]:
    return [(m.proxy_id, m.metastore, m.backend_id) for m in log.after(0, 100_000)]


def test_the_first_pull_starts_the_log_at_each_metastores_current_id(store, router):
    logs, log = Logs(), NotificationLog(store)
    logs.add("primary", "CREATE_DATABASE", "before")
    Merger(log).pull(logs, router)
    assert (log.mark("primary"), log.mark("waggle"), log.current()) == (1, 0, 0)
    logs.add("primary", "CREATE_DATABASE", "after")
    Merger(log).pull(logs, router)
    assert merged(log) == [(1, "primary", 2)]


def test_hidden_databases_and_member_transactions_are_passed_over_and_ids_stay_dense(store, router):
    logs, log = Logs(), NotificationLog(store)
    merger = Merger(log)
    merger.pull(logs, router)
    logs.add("waggle", "CREATE_TABLE", "hr", "secret")  # not in mapped-databases
    logs.add("waggle", "OPEN_TXN", None)  # a member's transaction ids mean nothing to clients yet
    logs.add("waggle", "ALLOC_WRITE_ID", "sales", "t")
    logs.add("waggle", "CREATE_TABLE", "sales", "t")
    logs.add("primary", "OPEN_TXN", None)  # the primary's are the client's own
    logs.add("primary", "CREATE_DATABASE", "waggle_x")  # a name the member's prefix claims: hidden
    merger.pull(logs, router)
    assert merged(log) == [(1, "primary", 1), (2, "waggle", 4)]
    assert (log.mark("primary"), log.mark("waggle")) == (2, 4)


class Bound:
    """The transactions feature's answers about bindings (what merging asks it): primary id 7 is bound
    to the member's real transaction 40; other member ids are encoded as merged views show them."""

    def __init__(self):
        self.bindings = {7: ("waggle", 40)}

    def event_txn_ids(self, metastore, reals, primary):
        bound = {real: proxy for proxy, (m, real) in self.bindings.items() if m == metastore and real in reals}
        return {r: bound.get(r, (1 << 44) | r) for r in reals}, frozenset(bound)

    def bound_elsewhere(self, primary_txns, primary):
        return frozenset(t for t in primary_txns if t in self.bindings)


def test_member_transaction_events_carry_the_ids_clients_hold_and_twins_are_passed_over(store, router):
    logs, log = Logs(), NotificationLog(store)
    merger, transactions = Merger(log), Bound()
    merger.pull(logs, router, transactions)
    logs.add("primary", "OPEN_TXN", None, message={"fromTxnId": 7, "toTxnId": 7, "txnIds": None})  # the client's open
    logs.add("waggle", "OPEN_TXN", None, message={"fromTxnId": 40, "toTxnId": 40, "txnIds": None})  # the proxy's, bound: over
    logs.add("primary", "COMMIT_TXN", None, message={"txnid": 7})  # the empty twin's commit: over
    logs.add("waggle", "ALLOC_WRITE_ID_EVENT", "sales", "t", message={"dbName": "sales", "txnIdList": [40], "writeIdList": [3]})
    logs.add("waggle", "COMMIT_TXN", None, message={"txnid": 40})
    logs.add("waggle", "OPEN_TXN", None, message={"fromTxnId": 41, "toTxnId": 42, "txnIds": None})  # not through the proxy
    logs.add("waggle", "ALLOC_WRITE_ID_EVENT", "hr", "t", message={"dbName": "hr", "txnIdList": [41], "writeIdList": [1]})  # hidden db
    merger.pull(logs, router, transactions)
    served = [(e.eventType, e.dbName, json.loads(e.message)) for e in next_events(log, logs, router, 0, None)]
    assert served == [
        ("OPEN_TXN", None, {"fromTxnId": 7, "toTxnId": 7, "txnIds": None}),
        ("ALLOC_WRITE_ID_EVENT", "waggle_sales", {"dbName": "waggle_sales", "txnIdList": [7], "writeIdList": [3]}),
        ("COMMIT_TXN", None, {"txnid": 7}),
        ("OPEN_TXN", None, {"fromTxnId": (1 << 44) | 41, "toTxnId": (1 << 44) | 42, "txnIds": None}),
    ]
    transactions.bindings = {}  # bindings swept later: the events read as merged
    assert [(e.eventType, e.dbName, json.loads(e.message)) for e in next_events(log, logs, router, 0, None)] == served


def test_without_the_transactions_feature_member_transaction_events_stay_passed_over(store, router):
    logs, log = Logs(), NotificationLog(store)
    Merger(log).pull(logs, router)
    logs.add("waggle", "COMMIT_TXN", "null", message={"txnid": 40})
    logs.add("primary", "COMMIT_TXN", "null", message={"txnid": 7})
    Merger(log).pull(logs, router)
    assert [(e.eventType, e.dbName, e.message) for e in next_events(log, logs, router, 0, None)] == [("COMMIT_TXN", "null", '{"txnid": 7}')]


def test_a_long_log_is_read_and_appended_in_batches_of_at_most_1000(store, router):
    logs, log = Logs(), NotificationLog(store)
    Merger(log).pull(logs, router)
    for i in range(2500):
        logs.add("primary", "ADD_PARTITION", "shop", f"t{i}")
    Merger(log).pull(logs, router)
    assert log.current() == 2500 and merged(log)[-1] == (2500, "primary", 2500)
    assert [m for _, method, m in logs.asked if method == "get_next_notification"] == [BATCH] * 3


def test_a_metastore_that_is_down_is_caught_up_when_it_answers_nothing_lost(store, router):
    logs, log = Logs(), NotificationLog(store)
    merger = Merger(log)
    merger.pull(logs, router)
    logs.add("waggle", "CREATE_TABLE", "sales", "a")
    logs.down.add("waggle")
    logs.add("primary", "CREATE_DATABASE", "p1")
    merger.pull(logs, router)
    assert merged(log) == [(1, "primary", 1)]  # the log moved on without it
    logs.down.clear()
    logs.add("waggle", "CREATE_TABLE", "sales", "b")
    merger.pull(logs, router)
    assert merged(log) == [(1, "primary", 1), (2, "waggle", 1), (3, "waggle", 2)]


def test_an_append_from_a_stale_mark_writes_nothing(store, router, tmp_path):
    one, two = NotificationLog(store), NotificationLog(store)
    one.start("waggle", 10)
    page = Pulled((Label(11, "CREATE_TABLE", "sales", "t"), Label(12, "DROP_TABLE", "sales", "t")), 12)
    assert one.append("waggle", 10, page)
    assert not two.append("waggle", 10, page)  # it read the mark before the first appended
    assert merged(one) == [(1, "waggle", 11), (2, "waggle", 12)] and one.mark("waggle") == 12
    two.start("waggle", 99)  # a second start changes nothing
    assert two.mark("waggle") == 12


def test_events_are_served_by_their_own_ids_with_proxy_ids_and_federation_names(store, router):
    logs, log = Logs(), NotificationLog(store)
    merger = Merger(log)
    merger.pull(logs, router)
    table_json = json.dumps({"1": {"str": "t"}, "2": {"str": "sales"}})
    logs.add("waggle", "CREATE_TABLE", "sales", "t", {"db": "sales", "table": "t", "tableObjJson": table_json})
    logs.add("primary", "CREATE_DATABASE", "p")
    logs.add("waggle", "CREATE_TABLE", "hr", "hidden")
    logs.add("waggle", "DROP_TABLE", "sales", "t")
    merger.pull(logs, router)
    served = next_events(log, logs, router, 0, None)
    assert [(e.eventId, e.eventType, e.dbName) for e in served] == [
        (1, "CREATE_DATABASE", "p"),
        (2, "CREATE_TABLE", "waggle_sales"),
        (3, "DROP_TABLE", "waggle_sales"),
    ]
    message = json.loads(served[1].message)
    assert message["db"] == "waggle_sales" and json.loads(message["tableObjJson"])["2"] == {"str": "waggle_sales"}
    assert served[0].message == logs.events["primary"][0].message  # the unprefixed primary's: passed on untouched
    assert [e.eventId for e in next_events(log, logs, router, 1, 1)] == [2]
    # The member is down: the answer stops before its first event, no hole; the rest comes later.
    logs.down.add("waggle")
    assert [e.eventId for e in next_events(log, logs, router, 0, None)] == [1]
    logs.down.clear()
    # The member's own retention deleted event 1: the client sees the hole, as behind Hive.
    del logs.events["waggle"][0]
    assert [e.eventId for e in next_events(log, logs, router, 0, None)] == [1, 3]


def test_messages_keep_their_format_gzip_included():
    rename = {"sales": "waggle_sales"}.get
    partition = json.dumps({"1": {"lst": ["str", 1, "x"]}, "2": {"str": "sales"}, "3": {"str": "t"}})
    body = {"db": "sales", "table": "t", "partitionListJson": [partition], "partitions": [{"ds": "x"}]}
    plain = json.loads(rewrite_message(json.dumps(body), "json-0.2", rename))
    assert plain["db"] == "waggle_sales" and json.loads(plain["partitionListJson"][0])["2"] == {"str": "waggle_sales"}
    assert plain["partitions"] == [{"ds": "x"}]
    zipped = base64.b64encode(gzip.compress(json.dumps(body).encode())).decode()
    again = rewrite_message(zipped, "gzip(json-2.0)", rename)
    assert json.loads(gzip.decompress(base64.b64decode(again)))["db"] == "waggle_sales"
    assert base64.b64decode(again)[4:8] == bytes(4)  # no time in gzip's header: the same bytes at every fetch
    assert rewrite_message("not json", "json-0.2", rename) == "not json"


def _read(tmp_path, text: str):
    path = tmp_path / "hmsproxy.yml"
    path.write_text("primary-meta-store: {name: primary, remote-meta-store-uris: 'thrift://h:1'}\n" + text)
    return load_config(path, config_sections())


def test_the_section_is_off_by_default_and_refuses_what_is_not_a_bool(tmp_path):
    assert _read(tmp_path, "").sections.get("notifications", NotificationsConfig()) == NotificationsConfig(federate=False)
    assert _read(tmp_path, "notifications: {federate: true}\n").sections["notifications"] == NotificationsConfig(federate=True)
    with pytest.raises(ConfigError, match=r"notifications\.federate"):
        _read(tmp_path, "notifications: {federate: sometimes}\n")


def test_a_manual_federation_names_events_by_the_alias(store):
    config = manual_config(prefixed_config("thrift://primary:1", "thrift://waggle:1"), database_name_mapping={"sales": "shop"})
    router, logs, log = Router(config), Logs(), NotificationLog(store)
    merger = Merger(log)
    merger.pull(logs, router)
    table_json = json.dumps({"1": {"str": "t"}, "2": {"str": "sales"}})
    logs.add("waggle", "CREATE_TABLE", "sales", "t", {"db": "sales", "table": "t", "tableObjJson": table_json})
    merger.pull(logs, router)
    (event,) = next_events(log, logs, router, 0, None)
    message = json.loads(event.message)
    assert (event.dbName, message["db"], json.loads(message["tableObjJson"])["2"]["str"]) == ("shop", "shop", "shop")


def _filled(store, router):
    """A merged log of both metastores (a pull takes the primary's first): ids 1-3 the primary's `p`,
    4-6 the member's `sales` (its hidden `hr` passed over)."""
    logs, log = Logs(), NotificationLog(store)
    merger = Merger(log)
    merger.pull(logs, router)
    logs.add("primary", "CREATE_DATABASE", "p")
    logs.add("primary", "CREATE_TABLE", "p", "a")
    logs.add("waggle", "CREATE_TABLE", "sales", "t")
    logs.add("waggle", "CREATE_TABLE", "hr", "secret")
    logs.add("waggle", "ALTER_TABLE", "sales", "t")
    logs.add("waggle", "CREATE_TABLE", "sales", "u")
    logs.add("primary", "DROP_TABLE", "p", "a")
    merger.pull(logs, router)
    return logs, log


def _request(**filters):
    return hive.NotificationEventRequest(lastEvent=filters.pop("lastEvent", 0), maxEvents=filters.pop("maxEvents", None), **filters)


def _count(router, log, **fields):
    rqst = hive.NotificationEventsCountRequest(**fields)
    where = of_count_request(router, rqst)
    return 0 if where is None else log.count(rqst.fromEventId, where)


def test_hive4_filters_apply_to_the_merged_log_and_ids_stay_the_proxys(store, router):
    logs, log = _filled(store, router)
    assert [(m.proxy_id, m.metastore, m.backend_id) for m in log.after(0, 100)] == [
        (1, "primary", 1), (2, "primary", 2), (3, "primary", 3), (4, "waggle", 1), (5, "waggle", 3), (6, "waggle", 4),
    ]  # fmt: skip

    def served(**filters):
        where = of_events_request(router, _request(**filters))
        if where is None:
            return []
        rqst = _request(**filters)
        return [
            (e.eventId, e.eventType, e.dbName, e.tableName) for e in next_events(log, logs, router, rqst.lastEvent, rqst.maxEvents, where)
        ]

    assert served(dbName="waggle_sales") == [
        (4, "CREATE_TABLE", "waggle_sales", "t"), (5, "ALTER_TABLE", "waggle_sales", "t"), (6, "CREATE_TABLE", "waggle_sales", "u"),
    ]  # fmt: skip
    assert served(dbName="WAGGLE_SALES", tableNames=["T"]) == [
        (4, "CREATE_TABLE", "waggle_sales", "t"),
        (5, "ALTER_TABLE", "waggle_sales", "t"),
    ]
    assert [e[0] for e in served(eventTypeSkipList=["CREATE_TABLE", "ALTER_TABLE"])] == [1, 3]
    # maxEvents counts what the filter keeps, as in Hive; after lastEvent, the next of them.
    assert served(dbName="waggle_sales", maxEvents=1, lastEvent=4) == [(5, "ALTER_TABLE", "waggle_sales", "t")]
    # A filtered batch may be empty (Hive's REPL then moves on by its batch size).
    assert served(dbName="p", lastEvent=2, maxEvents=3) == [(3, "DROP_TABLE", "p", "a")]
    assert served(dbName="p", lastEvent=3) == [] and served(dbName="waggle_sales", lastEvent=6) == []
    # What the federation does not show, or another catalog: nothing.
    assert served(dbName="waggle_hr") == [] and served(dbName="nowhere_x") == []
    assert served(catName="spark") == [] and len(served(catName="HIVE")) == 6
    assert len(served()) == 6 and len(served(tableNames=[], eventTypeSkipList=[])) == 6  # no filter: the whole log


def test_counts_are_over_the_merged_log_in_the_federations_names(store, router):
    _, log = _filled(store, router)
    assert _count(router, log, fromEventId=0, dbName="waggle_sales") == 3
    assert _count(router, log, fromEventId=4, dbName="waggle_sales") == 2  # after 4, as Hive's eventId > fromEventId
    assert _count(router, log, fromEventId=0, dbName="p") == 3
    assert _count(router, log, fromEventId=0, dbName="waggle_sales", toEventId=5) == 2  # Hive 4: up to toEventId
    assert _count(router, log, fromEventId=0, dbName="waggle_sales", tableNames=["u"]) == 1
    assert _count(router, log, fromEventId=0, dbName="waggle_hr") == 0
    assert _count(router, log, fromEventId=0, dbName="p", catName="other") == 0


def test_events_merged_before_labels_are_labelled_from_their_metastores(tmp_path, router):
    """A log written by store version 1 (no labels): the labeller fetches each event once; one the
    metastore no longer has is never counted; a metastore that is down leaves its events for later."""
    url = f"sqlite:///{tmp_path / 'old.db'}"
    old = Store(url, [StoreSchema(NOTIFICATIONS_SCHEMA.component, NOTIFICATIONS_SCHEMA.migrations[:1])])
    old.migrate()
    with old.writing() as conn:
        conn.execute(log_table.insert(), [
            {"proxy_id": 1, "metastore": "primary", "backend_id": 1},
            {"proxy_id": 2, "metastore": "waggle", "backend_id": 1},
            {"proxy_id": 3, "metastore": "waggle", "backend_id": 2},
            {"proxy_id": 4, "metastore": "primary", "backend_id": 2},
        ])  # fmt: skip
    old.close()
    store = Store(url, [NOTIFICATIONS_SCHEMA])
    store.migrate()
    try:
        logs, log = Logs(), NotificationLog(store)
        logs.add("primary", "CREATE_TABLE", "p", "a")
        logs.add("primary", "DROP_TABLE", "p", "a")
        logs.add("waggle", "CREATE_TABLE", "sales", "t")
        logs.add("waggle", "DROP_TABLE", "sales", "t")
        del logs.events["primary"][1]  # its retention deleted primary's event 2
        labeller = Labeller(log)
        logs.down.add("waggle")
        labeller.catch_up(logs, router)
        assert not labeller.done and _count(router, log, fromEventId=0, dbName="p") == 1
        assert _count(router, log, fromEventId=0, dbName="waggle_sales") == 0  # not labelled yet
        # A filtered request still tests such events when it fetches them (here: the member is back).
        logs.down.clear()
        where = of_events_request(router, _request(dbName="waggle_sales"))
        assert [e.eventId for e in next_events(log, logs, router, 0, None, where)] == [2, 3]
        labeller.catch_up(logs, router)
        assert labeller.done and log.unlabelled(10) == []
        assert _count(router, log, fromEventId=0, dbName="waggle_sales") == 2
        assert _count(router, log, fromEventId=0, dbName="p") == 1  # the deleted one is not counted
    finally:
        store.close()

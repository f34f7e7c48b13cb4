"""Limits (hmsproxy/features/limits/, upstream/slots.py) over fake metastores: the config section, the
buckets' arithmetic, the method classes, the refusal a client gets, reloads, metrics and audit, and
the metastores' concurrency caps. The same through a real proxy and metastore: tests/integration/test_limits_real_proxy.py."""

from __future__ import annotations

import json
import threading
import time

import pytest

from hmsproxy.app import config_sections
from hmsproxy.config import ConfigError, load_config
from hmsproxy.config.description import describe
from hmsproxy.config.model import AuditConfig
from hmsproxy.features.limits.buckets import Bucket, Limiter, Verdict
from hmsproxy.features.limits.classes import CLASS_OF
from hmsproxy.features.limits.config import LimitsConfig, Rate
from hmsproxy.features.limits.feature import Limits
from hmsproxy.protocol import idl
from hmsproxy.routing.methods import METHOD_SPECS
from hmsproxy.upstream.session import Session
from hmsproxy.upstream.slots import BackendBusy, BackendSlots, SlotRule
from tests.support.fake_handlers import fake_federation, shop_metastore

PRIMARY = "primary-meta-store: {name: primary, remote-meta-store-uris: 'thrift://h:1'}\n"


def read(tmp_path, text: str):
    path = tmp_path / "hmsproxy.yml"
    path.write_text(PRIMARY + text)
    return load_config(path, config_sections())


def test_the_section_is_read_with_every_key(tmp_path):
    config = read(
        tmp_path,
        "limits:\n  queue-s: 0.5\n  users: {'*': 20, etl: {rate: 200, burst: 400}}\n  addresses: {'*': 2.5}\n"
        "  method-classes: {listings: 100}\n  metastore-concurrency: {'*': 16, primary: 32}\n",
    )
    assert config.sections["limits"] == LimitsConfig(
        queue_s=0.5,
        users=(("*", Rate(20, 20)), ("etl", Rate(200, 400))),
        addresses=(("*", Rate(2.5, 3)),),
        classes=(("listings", Rate(100, 100)),),
        concurrency=(("*", 16), ("primary", 32)),
    )
    text = describe(config, config_sections())
    assert "every user not named: 20 calls/s (bursts of 20)" in text
    assert "user etl: 200 calls/s (bursts of 400)" in text
    assert "metastore primary: 32 concurrent calls" in text
    assert "waits up to 0.5 s" in text


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("limits: {method-classes: {scans: 5}}", "limits.method-classes.scans"),
        ("limits: {users: {bob: {rate: 5, burst: 0.5}}}", "limits.users.bob.burst"),
        ("limits: {users: {bob: {burst: 5}}}", "limits.users.bob.rate"),
        ("limits: {users: {bob: -1}}", "limits.users.bob"),
        ("limits: {metastore-concurrency: {primary: 0}}", "limits.metastore-concurrency.primary"),
        ("limits: {queue: 1}", "limits.queue"),
    ],
)
def test_bad_values_name_their_key(tmp_path, text, key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        read(tmp_path, text + "\n")


def test_without_the_section_nothing_is_limited(tmp_path):
    config = read(tmp_path, "")
    assert config.sections.get("limits", LimitsConfig()) == LimitsConfig()
    assert "Limits: none" in describe(config, config_sections())


def test_method_classes():
    assert CLASS_OF["get_partitions"] == CLASS_OF["get_partition_names"] == CLASS_OF["get_all_tables"] == "listings"
    assert CLASS_OF["get_table_meta"] == CLASS_OF["get_partitions_by_names"] == "listings"
    assert CLASS_OF["get_table"] == CLASS_OF["get_database"] == CLASS_OF["getVersion"] == "reads"
    assert CLASS_OF["create_table"] == CLASS_OF["add_partitions"] == CLASS_OF["open_txns"] == CLASS_OF["lock"] == "writes"
    assert CLASS_OF["hmsproxy_execute"] == CLASS_OF["hmsproxy_execute_script"] == "statements"


def test_a_bucket_lets_a_burst_through_then_its_rate():
    bucket = Bucket(Rate(10, 3), now=0.0)
    assert [bucket.take(0.0, 0.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.take(0.0, 0.0) == pytest.approx(-0.1)  # refused: a token in 0.1 s
    assert bucket.take(0.1, 0.0) == 0.0  # refilled at 10/s
    assert bucket.take(0.1, 0.0) < 0.0


def test_with_a_queue_time_a_call_reserves_the_next_token_and_waits():
    bucket = Bucket(Rate(10, 1), now=0.0)
    assert bucket.take(0.0, 0.25) == 0.0
    assert bucket.take(0.0, 0.25) == pytest.approx(0.1)  # reserved
    assert bucket.take(0.0, 0.25) == pytest.approx(0.2)  # after the one reserved before it
    assert bucket.take(0.0, 0.25) == pytest.approx(-0.3)  # beyond the queue time: refused, nothing taken
    assert bucket.take(0.0, 0.35) == pytest.approx(0.3)


def test_a_refusal_gives_back_the_tokens_other_buckets_gave():
    limiter = Limiter(LimitsConfig(users=(("*", Rate(100, 100)),), classes=(("listings", Rate(1, 1)),)))
    assert limiter.admit("alice", "10.0.0.1", "listings") == (0.0, None)
    verdict = limiter.admit("alice", "10.0.0.1", "listings")
    assert isinstance(verdict, Verdict) and (verdict.limit, verdict.label) == ("class listings: 1 calls/s", "class:listings")
    user_bucket = limiter.users.bucket("alice", 0.0)[0]
    assert user_bucket.tokens == pytest.approx(99, abs=0.5)  # one call passed; the refused one's token came back
    assert limiter.admit("alice", "10.0.0.1", "reads") == (0.0, None)  # no rule for reads


# -- through a handler -------------------------------------------------------------------------


@pytest.fixture
def primary():
    return shop_metastore()


@pytest.fixture
def handler(tmp_path, primary):
    h = fake_federation(tmp_path, primary, audit=AuditConfig(enabled=True, file=str(tmp_path / "audit.jsonl")))
    yield h
    h.close()


def limited(handler, settings: LimitsConfig) -> None:
    handler.apply_config(handler.config.with_section("limits", settings))


def session_of(handler, user: str, address: str = "10.0.0.1:5000") -> Session:
    session = Session(handler.backends, address)
    session.set_ugi(user, [])
    return session


def get_table(handler, session):
    return handler.dispatch(session, "get_table", idl.HmsProxy.get_table_args(dbname="shop", tbl_name="orders"))


def test_a_user_over_the_rate_gets_a_meta_exception_naming_the_limit_and_others_go_on(handler, tmp_path):
    limited(handler, LimitsConfig(users=(("*", Rate(0.01, 2)),)))
    alice, bob = session_of(handler, "alice"), session_of(handler, "bob")
    assert [get_table(handler, alice).success.tableName for _ in range(2)] == ["orders", "orders"]
    refused = get_table(handler, alice).o1
    assert isinstance(refused, idl.hive.MetaException)
    assert refused.message.startswith("hmsproxy: limit 'user alice: 0.01 calls/s' reached; retry in ")
    assert float(refused.message.split("retry in ")[1].split(" s")[0]) > 90  # 1 token at 0.01/s
    assert get_table(handler, bob).success.tableName == "orders"
    metrics = handler.features.get("metrics").render()[0].decode()
    assert 'hmsproxy_limited_total{limit="user:*"} 1.0' in metrics
    assert 'outcome="limited"' in metrics
    lines = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    marked = [line for line in lines if line["outcome"] == "limited"]
    assert len(marked) == 1 and marked[0]["user"] == "alice" and "user alice" in marked[0]["error"]


def test_a_reload_applies_to_sessions_already_open(handler):
    alice = session_of(handler, "alice")
    assert get_table(handler, alice).success is not None
    limited(handler, LimitsConfig(users=(("alice", Rate(0.01, 1)),)))
    assert get_table(handler, alice).success is not None
    assert get_table(handler, alice).o1 is not None  # the same session, now limited
    limited(handler, LimitsConfig(users=(("alice", Rate(0.01, 1)),)))  # unchanged: the bucket stays empty
    assert get_table(handler, alice).o1 is not None
    limited(handler, LimitsConfig())
    assert [get_table(handler, alice).success is not None for _ in range(5)] == [True] * 5


def test_without_rates_calls_skip_the_limits_hook_and_a_reload_brings_it_back(handler):
    """Unconfigured limits cost a call nothing: on_arrival is not among its hooks (the registry leaves
    an idle hook out), and a reload that sets a rate puts it back for the sessions already open."""
    spec = METHOD_SPECS["get_table"]
    alice = session_of(handler, "alice")
    assert handler.features.hooks("on_arrival", spec) == ()
    limited(handler, LimitsConfig(concurrency=(("*", 2),)))  # a cap only: no bucket to take from
    assert handler.features.hooks("on_arrival", spec) == ()
    limited(handler, LimitsConfig(users=(("alice", Rate(0.01, 1)),)))
    assert [h.__self__.name for h in handler.features.hooks("on_arrival", spec)] == ["limits"]
    assert get_table(handler, alice).success is not None
    assert get_table(handler, alice).o1 is not None
    limited(handler, LimitsConfig())
    assert handler.features.hooks("on_arrival", spec) == ()
    assert get_table(handler, alice).success is not None


def test_set_ugi_counts_for_the_user_it_names(handler):
    limited(handler, LimitsConfig(users=(("*", Rate(0.01, 1)),)))
    for user in ("alice", "bob", "carol"):  # new connections: none has a user yet
        session = Session(handler.backends, "10.0.0.1:1")
        set_ugi = handler.dispatch(session, "set_ugi", idl.HmsProxy.set_ugi_args(user_name=user, group_names=[]))
        assert set_ugi.o1 is None, set_ugi.o1
    assert "limit 'user bob: 0.01 calls/s'" in get_table(handler, session_of(handler, "bob")).o1.message


def test_addresses_and_classes(handler):
    limited(handler, LimitsConfig(addresses=(("10.0.0.9", Rate(0.01, 1)),), classes=(("writes", Rate(0.01, 1)),)))
    far, near = session_of(handler, "alice", "10.0.0.9:1"), session_of(handler, "alice", "10.0.0.1:1")
    assert get_table(handler, far).success is not None
    assert "limit 'address 10.0.0.9: 0.01 calls/s'" in get_table(handler, far).o1.message
    assert get_table(handler, near).success is not None
    drop = idl.HmsProxy.drop_table_args(dbname="shop", name="nope", deleteData=False)
    assert handler.dispatch(near, "drop_table", drop).o1 is not None  # NoSuchObject from the metastore: it went
    refused = handler.dispatch(near, "drop_table", drop)
    assert "limit 'class writes: 0.01 calls/s'" in refused.o3.message  # drop_table's MetaException


def test_the_proxys_own_calls_for_a_client_are_not_counted_again(handler):
    limited(handler, LimitsConfig(users=(("*", Rate(0.01, 1)),)))
    internal = handler.internal_client("alice")
    try:
        for _ in range(3):
            assert internal.call("get_table", dbname="shop", tbl_name="orders").tableName == "orders"
    finally:
        internal.close()


def test_a_waiting_call_goes_once_its_token_comes(handler):
    limited(handler, LimitsConfig(queue_s=5.0, users=(("*", Rate(2, 1)),)))
    alice = session_of(handler, "alice")
    start = time.monotonic()
    assert [get_table(handler, alice).success is not None for _ in range(3)] == [True] * 3  # none refused
    assert time.monotonic() - start >= 0.9  # a token every 0.5 s
    metrics = handler.features.get("metrics").render()[0].decode()
    waits = [line for line in metrics.splitlines() if line.startswith('hmsproxy_limit_waits_total{limit="user:*"}')]
    assert waits and float(waits[0].rsplit(" ", 1)[1]) >= 1


# -- the metastores' concurrency caps (upstream/slots.py) -------------------------------------------


def test_a_capped_metastore_refuses_a_call_beyond_its_slots_and_counts_it():
    slots = BackendSlots()
    assert slots.taken("primary").__class__.__name__ == "nullcontext"
    slots.configure({"primary": SlotRule(1, 0.0)})
    with slots.taken("primary"):
        with pytest.raises(BackendBusy, match=r"limit 'metastore primary: 1 concurrent calls' reached; retry in 0\.1 s"):
            with slots.taken("primary"):
                pass
        assert slots.counts() == [("primary", 1, 1, 1, 0)]
    with slots.taken("primary"):
        pass
    assert slots.counts() == [("primary", 1, 0, 1, 0)]


def test_a_call_waits_up_to_the_queue_time_for_a_slot():
    slots = BackendSlots()
    slots.configure({"primary": SlotRule(1, 30.0)})
    holding, release, done = threading.Event(), threading.Event(), threading.Event()

    def hold():
        with slots.taken("primary"):
            holding.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    assert holding.wait(30)

    def wait_for_slot():
        with slots.taken("primary"):
            done.set()

    waiter = threading.Thread(target=wait_for_slot)
    waiter.start()
    assert not done.wait(0.2)  # still held
    release.set()
    assert done.wait(30)
    holder.join(30)
    waiter.join(30)
    assert slots.counts() == [("primary", 1, 0, 0, 1)]


def test_a_reload_keeps_an_unchanged_cap_and_replaces_a_changed_one(handler):
    feature: Limits = handler.features.get("limits")
    assert feature is not None and handler.backends.slots.counts() == []
    limited(handler, LimitsConfig(concurrency=(("*", 2), ("waggle", 5))))
    assert sorted(row[:2] for row in handler.backends.slots.counts()) == [("primary", 2), ("waggle", 5)]
    before = handler.backends.slots.taken("primary")
    limited(handler, LimitsConfig(concurrency=(("*", 2),)))
    assert handler.backends.slots.taken("primary") is before
    assert sorted(row[:2] for row in handler.backends.slots.counts()) == [("primary", 2), ("waggle", 2)]
    limited(handler, LimitsConfig())
    assert handler.backends.slots.taken("primary").__class__.__name__ == "nullcontext"


def test_a_busy_metastore_answers_the_clients_call_with_the_limit(handler):
    limited(handler, LimitsConfig(concurrency=(("primary", 1),)))
    with handler.backends.slots.taken("primary"):  # another call holds the only slot
        refused = get_table(handler, session_of(handler, "alice")).o1
    assert refused.message == "hmsproxy: limit 'metastore primary: 1 concurrent calls' reached; retry in 0.1 s"
    assert 'hmsproxy_limited_total{limit="metastore:primary"} 1.0' in handler.features.get("metrics").render()[0].decode()

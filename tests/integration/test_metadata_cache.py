"""The metadata cache in front of real metastores: answered from the cache, and each way it learns
an answer is stale — a write through the proxy, a write made straight on the metastore (its
notification log), the TTL, a gap in the log — and serving stale answers while a metastore is down."""

from __future__ import annotations

import json
import os
import re
import threading
import time
from contextlib import ExitStack
from dataclasses import replace

import pytest
import thriftpy2.rpc

from hmsproxy.config.model import AuditConfig, CacheConfig, MetastoreConfig
from hmsproxy.downstream.server import ProxyServer
from hmsproxy.protocol import idl
from hmsproxy.testing import partition, table
from tests.integration.test_breaker_real_clients import poll
from tests.support.federation import prefixed_config
from tests.support.required import unavailable
from tests.support.served import served
from tests.support.stopped import Stopper


def client_for(server: ProxyServer, timeout_ms: int = 60_000):
    return thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", server.port, timeout=timeout_ms)


@pytest.fixture
def caching_proxy(metastores):
    """serve(**cache settings) -> a proxy whose primary (metastores[0]) has a cache; stopped afterwards."""

    def serve(config=None, **cache):
        base = config or prefixed_config(metastores[0].uri, metastores[1].uri)
        return stack.enter_context(served(replace(base, primary=replace(base.primary, cache=CacheConfig(**cache)))))

    with ExitStack() as stack:
        yield serve


@pytest.fixture
def tbl(metastores):
    """default.mc_<id>, partitioned by ds; dropped afterwards (straight on the metastore)."""
    name = f"mc_{os.urandom(4).hex()}"
    direct = metastores[0].client()
    direct.create_table(table("default", name, partition_keys=(("ds", "string"),), parameters={"k": "v0"}))
    yield name
    direct.drop_table("default", name, True)
    direct.close()


def test_answers_come_from_the_cache_and_writes_through_the_proxy_refresh_them(caching_proxy, tbl):
    server = caching_proxy(ttl_s=600, follow_notifications=False)
    cache = server.handler.backends.caches["primary"]
    client = client_for(server)
    try:
        assert client.get_table("default", tbl).parameters["k"] == "v0"
        hits = cache.hits
        assert client.get_table("default", tbl).parameters["k"] == "v0"
        assert cache.hits == hits + 1
        changed = client.get_table("default", tbl)
        changed.parameters["k"] = "v1"
        client.alter_table("default", tbl, changed)
        assert client.get_table("default", tbl).parameters["k"] == "v1"  # no wait: invalidated before the write answered
        assert client.get_partition_names("default", tbl, -1) == []
        client.add_partitions([partition("default", tbl, ["1"])])
        assert client.get_partition_names("default", tbl, -1) == ["ds=1"]
        assert cache.invalidations["write"] == 2
        assert re.search(r"\n    cache: \d+ entries, [\d,]+ bytes, \d+ hits \(\d+%\); fresh by TTL 600s only\n", server.handler.describe())
    finally:
        client.close()


def test_writes_made_straight_on_the_metastore_arrive_through_its_notification_log(caching_proxy, metastores, tbl):
    if not metastores[0].notifications_enabled:
        unavailable(f"the session metastore records no events: {metastores[0].notifications_unavailable}")
    server = caching_proxy(ttl_s=600, poll_interval_s=0.2)
    cache = server.handler.backends.caches["primary"]
    client, direct = client_for(server), metastores[0].client()
    try:
        assert client.get_table("default", tbl).parameters["k"] == "v0"
        assert client.get_partition_names("default", tbl, -1) == []
        poll(lambda: server.handler.backends.follower("primary").last_event is not None, 10)
        changed = direct.get_table("default", tbl)
        changed.parameters["k"] = "direct"
        direct.alter_table("default", tbl, changed)
        direct.add_partitions([partition("default", tbl, ["9"])])
        seconds = poll(lambda: client.get_table("default", tbl).parameters["k"] == "direct", 10)
        poll(lambda: client.get_partition_names("default", tbl, -1) == ["ds=9"], 10)
        # Caught from the log, event by event or (when an id shows up before a lower one is committed) as a gap:
        # not through the proxy, and not by the TTL (600 s).
        assert cache.invalidations["notification"] + cache.invalidations["gap"] >= 1 and "write" not in cache.invalidations
        print(f"a direct write reached the cache after {seconds:.2f} s")
    finally:
        client.close()
        direct.close()


def test_without_events_the_ttl_bounds_staleness(caching_proxy, metastores, tbl):
    server = caching_proxy(ttl_s=1.5, follow_notifications=False)
    client, direct = client_for(server), metastores[0].client()
    try:
        assert client.get_table("default", tbl).parameters["k"] == "v0"
        changed = direct.get_table("default", tbl)
        changed.parameters["k"] = "direct"
        direct.alter_table("default", tbl, changed)
        assert client.get_table("default", tbl).parameters["k"] == "v0"  # stale: nothing told the cache
        poll(lambda: client.get_table("default", tbl).parameters["k"] == "direct", 10)
    finally:
        client.close()
        direct.close()


def test_a_gap_in_the_notification_log_drops_every_entry(caching_proxy, metastores, tbl):
    if not metastores[0].notifications_enabled:
        unavailable(f"the session metastore records no events: {metastores[0].notifications_unavailable}")
    server = caching_proxy(ttl_s=600, poll_interval_s=3600)  # polled by hand below
    cache, follower = server.handler.backends.caches["primary"], server.handler.backends.follower("primary")
    client = client_for(server)
    try:
        poll(lambda: follower.last_event is not None, 10)
        client.get_table("default", tbl)
        assert cache.entries == 1
        # As after a metastore restarted on a new database: its event ids start below the last one seen.
        follower.last_event += 1000
        follower.poll()
        assert cache.entries == 0 and cache.invalidations["gap"] == 1
    finally:
        client.close()


def test_serve_stale_answers_while_a_metastore_is_down(metastores, private_metastore, tmp_path):
    ms = private_metastore
    direct = ms.client()
    direct.create_table(table("default", "kept"))
    direct.close()
    base = prefixed_config(metastores[0].uri, metastores[1].uri)
    frozen = MetastoreConfig(
        "frozen", (ms.uri,), database_prefix="frozen_", cache=CacheConfig(ttl_s=0.5, follow_notifications=False, serve_stale=True)
    )
    audit = tmp_path / "audit.log"
    config = replace(
        base,
        federated=(*base.federated, frozen),
        server=replace(base.server, probe_after_s=2.0, backend_timeout_s=30),
        audit=AuditConfig(enabled=True, file=str(audit)),
    )
    with served(config) as server:
        client, stuck = client_for(server), client_for(server)
        with Stopper(ms.pid) as stopper:
            try:
                assert client.get_table("frozen_default", "kept").tableName == "kept"
                stopper.stop()  # returns once every thread has stopped (tests/support/stopped.py)
                hung = threading.Thread(target=lambda: _ignore(lambda: stuck.get_database("frozen_default")), daemon=True)
                hung.start()
                poll(lambda: server.handler.backends.state("frozen").up is False, 20)  # the breaker tripped it
                time.sleep(0.6)  # the entry is past its TTL: only serve-stale may answer from it now
                assert client.get_table("frozen_default", "kept").tableName == "kept"
                cache = server.handler.backends.caches["frozen"]
                assert cache.stale_served == 1
                lines = [json.loads(line) for line in audit.read_text().splitlines()]
                assert [line["method"] for line in lines if line.get("stale")] == ["get_table"]
                with pytest.raises(Exception, match="frozen"):
                    client.get_table("frozen_default", "never_cached")
            finally:
                client.close()
                stuck.close()


def _ignore(fn) -> None:
    try:
        fn()
    except Exception:  # the hung call's outcome is not what this test is about
        pass

"""The metadata cache's rules with fakes: what is cached, what a write makes stale, LRU, TTL,
the epoch guard against a read racing a write, serve-stale."""

from __future__ import annotations

import re

import pytest

from hmsproxy.config.model import CacheConfig
from hmsproxy.protocol import idl
from hmsproxy.routing.methods import METHOD_SPECS
from hmsproxy.testing import table
from hmsproxy.upstream.cache.calls import through_cache
from hmsproxy.upstream.cache.metadata import MetadataCache
from hmsproxy.upstream.cache.rules import EVERYTHING, Scope, event_scope, read_scope, write_scopes
from hmsproxy.upstream.wire import BackendUnavailable

A = idl.HmsProxy


def scope_of(method: str, **kwargs):
    return read_scope(METHOD_SPECS[method], getattr(A, method + "_args")(**kwargs))


def writes_of(method: str, **kwargs):
    return write_scopes(METHOD_SPECS[method], getattr(A, method + "_args")(**kwargs))


def test_what_is_cached_and_what_it_is_about():
    assert scope_of("get_table", dbname="Shop", tbl_name="Orders") == Scope("shop", "orders")
    assert scope_of("get_table_req", req=idl.hive.GetTableRequest(dbName="@hive#shop", tblName="t")) == Scope("shop", "t")
    assert scope_of("get_partitions", db_name="shop", tbl_name="t", max_parts=-1) == Scope("shop", "t")
    assert scope_of("get_database", name="shop") == Scope("shop")
    assert scope_of("get_all_tables", db_name="shop") == Scope("shop")
    assert (
        scope_of("get_partitions_ps_with_auth", db_name="shop", tbl_name="t", part_vals=["1"], max_parts=-1, user_name="u", group_names=[])
        is None
    )
    assert scope_of("get_all_databases") is None


def test_what_a_write_makes_stale():
    renamed = table("shop", "orders_old")
    assert writes_of("alter_table", dbname="shop", tbl_name="orders", new_tbl=renamed) == [
        Scope("shop", "orders"),
        Scope("shop", "orders_old"),
    ]
    assert writes_of("drop_partition", db_name="shop", tbl_name="t", part_vals=["1"], deleteData=True) == [Scope("shop", "t")]
    assert writes_of("drop_database", name="shop", deleteData=True, cascade=True) == [Scope("shop")]
    assert writes_of("create_table", tbl=table("shop", "new")) == [Scope("shop", "new")]
    assert writes_of("open_txns", rqst=idl.hive.OpenTxnRequest(num_txns=1, user="u", hostname="h")) == [EVERYTHING]
    assert (
        event_scope("Shop", "T") == Scope("shop", "t")
        and event_scope("shop", None) == Scope("shop")
        and event_scope(None, None) == EVERYTHING
    )


def answer(name: str):
    result = A.get_table_result()
    result.success = table("shop", name)
    return result


class Clock:
    now = 0.0

    def __call__(self):
        return self.now


def test_entries_are_copies_evicted_by_count_and_expired_by_ttl():
    clock = Clock()
    cache = MetadataCache("m", CacheConfig(max_entries=2, ttl_s=10), clock=clock)
    keys = [cache.key("get_table", A.get_table_args(dbname="shop", tbl_name=n)) for n in "abc"]
    for key, name in zip(keys, "abc"):
        cache.put(key, Scope("shop", name), answer(name), cache.epoch)
    assert cache.entries == 2 and cache.get(keys[0], A.get_table_result) is None  # the oldest went
    first = cache.get(keys[1], A.get_table_result)
    first.success.tableName = "changed by a later hook"
    assert cache.get(keys[1], A.get_table_result).success.tableName == "b"
    clock.now = 11
    assert cache.get(keys[1], A.get_table_result) is None
    assert cache.get(keys[1], A.get_table_result, stale_ok=True).success.tableName == "b"
    assert (cache.hits, cache.misses, cache.stale_served) == (2, 2, 1)


def test_invalidation_by_scope_and_the_epoch_guard():
    cache = MetadataCache("m", CacheConfig())
    put = {}
    for scope in (Scope("shop", "a"), Scope("shop", "b"), Scope("shop"), Scope("hr", "a")):
        key = cache.key("get_table", A.get_table_args(dbname=scope.db, tbl_name=scope.table or "-"))
        cache.put(key, scope, answer("x"), cache.epoch)
        put[scope] = key
    assert cache.invalidate(Scope("shop", "a"), "write") == 2  # the table and its database's table lists
    assert cache.get(put[Scope("shop", "b")], A.get_table_result) is not None
    assert cache.invalidate(Scope("shop"), "write") == 1 and cache.entries == 1
    epoch = cache.epoch
    cache.invalidate(Scope("hr", "a"), "notification")
    cache.put(put[Scope("hr", "a")], Scope("hr", "a"), answer("read before the write"), epoch)
    assert cache.entries == 0 and dict(cache.invalidations) == {"write": 2, "notification": 1}


def test_through_cache_answers_invalidates_and_serves_stale():
    cache = MetadataCache("m", CacheConfig(serve_stale=True))
    calls = []
    args = A.get_table_args(dbname="shop", tbl_name="t")

    def backend(result):
        def call():
            calls.append(1)
            if isinstance(result, Exception):
                raise result
            return result

        return call

    stale = []
    assert through_cache(cache, "get_table", args, backend(answer("t")), lambda: stale.append(1)).success.tableName == "t"
    assert through_cache(cache, "get_table", args, backend(answer("other")), lambda: stale.append(1)).success.tableName == "t"
    assert len(calls) == 1
    drop = A.drop_table_args(dbname="shop", name="t", deleteData=True)
    with pytest.raises(BackendUnavailable):
        through_cache(cache, "drop_table", drop, backend(BackendUnavailable("m", "u", "gone")), lambda: None)
    assert cache.entries == 0  # even a failed write invalidates
    through_cache(cache, "get_table", args, backend(answer("t2")), lambda: None)
    down = backend(BackendUnavailable("m", "u", "down"))
    cache.invalidations.clear()
    cache.put(cache.key("get_table", args), Scope("shop", "t"), answer("t2"), cache.epoch)
    assert cache.get(cache.key("get_table", args), A.get_table_result) is not None
    # fresh entries answer without asking; expired ones only while the metastore is down
    cache.config = CacheConfig(serve_stale=True, ttl_s=0)
    assert through_cache(cache, "get_table", args, down, lambda: stale.append(1)).success.tableName == "t2"
    assert stale == [1]
    error = A.get_table_result(o2=idl.hive.NoSuchObjectException(message="no"))
    through_cache(cache, "get_table", A.get_table_args(dbname="shop", tbl_name="none"), backend(error), lambda: None)
    assert cache.get(cache.key("get_table", A.get_table_args(dbname="shop", tbl_name="none")), A.get_table_result, stale_ok=True) is None


def test_the_cache_key_of_a_metastore(tmp_path):
    from tests.unit.test_config import assert_error, own, own_error

    head = "primary-meta-store: {name: p, remote-meta-store-uris: 'thrift://h:9083'"
    assert own(tmp_path, head + "}\n").primary.cache is None
    assert own(tmp_path, head + ", cache: true}\n").primary.cache == CacheConfig()
    config = own(tmp_path, head + ", cache: {ttl-s: 5, serve-stale: true, max-entries: 10}}\n")
    assert config.primary.cache == CacheConfig(ttl_s=5, serve_stale=True, max_entries=10)
    from hmsproxy.config import describe

    shown = "10 entries / 67,108,864 bytes at most; fresh by notification log every 1 s, TTL 5 s; serves stale answers while down"
    assert re.search(r"metadata cache: +" + re.escape(shown), describe(config))
    assert_error(own_error(tmp_path, head + ", cache: {ttl: 5}}\n"), "hmsproxy.yml", "primary-meta-store.cache.ttl", "unknown key")

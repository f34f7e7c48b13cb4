"""One metastore's cache of answers: encoded bytes (shared answers must not be mutated by the
name rewriting that follows), LRU by entries and bytes, a TTL, invalidation by scope.

A read that started before an invalidation may not store what it read: every invalidation
moves `epoch`, and `put` is refused when the epoch moved since the read began.
"""

from __future__ import annotations

import threading
import time
from collections import Counter, OrderedDict
from dataclasses import dataclass

from thriftpy2.protocol import TCyBinaryProtocolFactory
from thriftpy2.utils import deserialize, serialize

from hmsproxy.config.model import CacheConfig
from hmsproxy.upstream.cache.rules import EVERYTHING, Scope

_PROTOCOL = TCyBinaryProtocolFactory()


@dataclass
class _Entry:
    scope: Scope
    data: bytes
    stored_at: float


def encode(struct) -> bytes:
    return serialize(struct, _PROTOCOL)


class MetadataCache:
    def __init__(self, metastore: str, config: CacheConfig, clock=time.monotonic):
        self.metastore = metastore
        self.config = config
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: OrderedDict[tuple[str, bytes], _Entry] = OrderedDict()
        self._by_db: dict[str, set[tuple[str, bytes]]] = {}
        self.bytes = 0
        self.epoch = 0
        self.hits = 0
        self.misses = 0
        self.stale_served = 0
        self.invalidations: Counter[str] = Counter()

    @staticmethod
    def key(method: str, args) -> tuple[str, bytes]:
        return method, encode(args)

    def get(self, key: tuple[str, bytes], result_cls, *, stale_ok: bool = False):
        """A fresh copy of the cached answer, or None (a miss; expired entries count as misses unless `stale_ok`)."""
        with self._lock:
            entry = self._entries.get(key)
            fresh = entry is not None and self._clock() - entry.stored_at < self.config.ttl_s
            if entry is None or not (fresh or stale_ok):
                if not stale_ok:
                    self.misses += 1
                return None
            self._entries.move_to_end(key)
            if fresh and not stale_ok:
                self.hits += 1
            else:
                self.stale_served += 1
            data = entry.data
        return deserialize(result_cls(), data, _PROTOCOL)

    def put(self, key: tuple[str, bytes], scope: Scope, result, epoch: int) -> None:
        """Keep `result` (a `<method>_result` without a declared exception), unless invalidated since `epoch`."""
        data = encode(result)
        if len(data) > self.config.max_bytes // 4:  # one answer may not push out most of the others
            return
        with self._lock:
            if epoch != self.epoch:
                return
            self._drop(key)
            self._entries[key] = _Entry(scope, data, self._clock())
            self._by_db.setdefault(scope.db, set()).add(key)
            self.bytes += len(data)
            while self._entries and (len(self._entries) > self.config.max_entries or self.bytes > self.config.max_bytes):
                self._drop(next(iter(self._entries)))

    def invalidate(self, scope: Scope, reason: str) -> int:
        """Drop what `scope` covers: a table's entries and its database's table-less ones; a whole database; or all."""
        with self._lock:
            self.epoch += 1
            self.invalidations[reason] += 1
            if scope == EVERYTHING:
                dropped = len(self._entries)
                self._entries.clear()
                self._by_db.clear()
                self.bytes = 0
                return dropped
            keys = list(self._by_db.get(scope.db, ()))
            if scope.table is not None:
                keys = [k for k in keys if self._entries[k].scope.table in (scope.table, None)]
            for k in keys:
                self._drop(k)
            return len(keys)

    def _drop(self, key) -> None:
        entry = self._entries.pop(key, None)
        if entry is None:
            return
        self.bytes -= len(entry.data)
        keys = self._by_db.get(entry.scope.db)
        if keys is not None:
            keys.discard(key)
            if not keys:
                del self._by_db[entry.scope.db]

    @property
    def entries(self) -> int:
        return len(self._entries)


def cache_summary(cache: MetadataCache, follower) -> str:
    """One line for `hmsproxy status`: size, hits and how the cache learns of changes."""
    total = cache.hits + cache.misses
    hit_rate = f"{cache.hits / total:.0%}" if total else "-"
    if follower is None:
        fresh = f"TTL {cache.config.ttl_s:g}s only"
    elif not follower.supported:
        fresh = f"TTL {cache.config.ttl_s:g}s (the metastore has no notification log)"
    else:
        fresh = f"notification log (last event {follower.last_event}), TTL {cache.config.ttl_s:g}s"
    stale = ", serves stale answers while down" if cache.config.serve_stale else ""
    return f"{cache.entries} entries, {cache.bytes:,} bytes, {cache.hits} hits ({hit_rate}); fresh by {fresh}{stale}"

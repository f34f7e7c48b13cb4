package io.hmsproxy.spark;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Values kept for a short time each, by key, at most a bounded number: planning reuses what it
 * asked the metastore a moment ago instead of a round trip per query.
 */
final class Expiring<V> {
  private record Entry<V>(V value, long expiresAtMs) {}

  private final int maxEntries;
  private final Map<String, Entry<V>> entries = new ConcurrentHashMap<>();

  Expiring(int maxEntries) {
    this.maxEntries = maxEntries;
  }

  /** The value put less than its TTL ago, else null. */
  V get(String key) {
    Entry<V> e = entries.get(key);
    return e != null && System.currentTimeMillis() < e.expiresAtMs ? e.value : null;
  }

  /** Kept for `ttlMs` (0 or less: not kept). */
  void put(String key, V value, long ttlMs) {
    if (ttlMs <= 0) {
      return;
    }
    if (entries.size() >= maxEntries) {
      entries.clear(); // bounded; whoever plans on this many keys asks again
    }
    entries.put(key, new Entry<>(value, System.currentTimeMillis() + ttlMs));
  }
}

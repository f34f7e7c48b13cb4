package io.hmsproxy.spark;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hadoop.hive.metastore.api.Index;

/**
 * The indexes of the tables a session planned on lately, each kept for a short time: without it
 * every plan of an equality filter on any Hive Parquet table paid a metastore connection and a
 * get_indexes round trip. An index created meanwhile is used once the entry expires; one dropped
 * meanwhile is harmless (its index partitions no longer match, so partitions are read whole).
 */
final class RecentIndexes {
  private static final int MAX_TABLES = 10_000;

  private record Entry(List<Index> indexes, long expiresAtMs) {}

  private final Map<String, Entry> tables = new ConcurrentHashMap<>();

  /** The table's indexes if asked less than the TTL ago, else null. */
  List<Index> get(String uris, String db, String table) {
    Entry e = tables.get(key(uris, db, table));
    return e != null && System.currentTimeMillis() < e.expiresAtMs ? e.indexes : null;
  }

  void put(String uris, String db, String table, List<Index> indexes, long ttlMs) {
    if (ttlMs <= 0) {
      return;
    }
    if (tables.size() >= MAX_TABLES) {
      tables.clear(); // bounded; a session planning on this many tables asks again
    }
    tables.put(key(uris, db, table), new Entry(List.copyOf(indexes), System.currentTimeMillis() + ttlMs));
  }

  private static String key(String uris, String db, String table) {
    return uris + "\0" + IndexedScanRule.lower(db) + "." + IndexedScanRule.lower(table);
  }
}

package io.hmsproxy.spark;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.apache.hadoop.hive.metastore.api.Partition;
import org.apache.hadoop.hive.metastore.api.Table;

/**
 * What planning needs of an index table from the metastore: its partition keys, whether it is ORC,
 * and where its partitions are (null: no such partition). Kept in this JVM for a short time so a
 * repeated query asks the metastore nothing; a kept location is only a guess: IndexSelection uses
 * it only when every partition it covers proves fresh there, and asks again otherwise (a rebuild
 * moves an index partition to a new directory).
 */
record IndexTableMeta(List<String> keys, boolean orc, Map<String, String> locations) {
  private static final Expiring<IndexTableMeta> RECENT = new Expiring<>(1_000);

  /** The kept metadata of the index table if it is recent and knows the partitions `namesFor(its keys)`, else null. */
  static IndexTableMeta recent(String key, Function<List<String>, Set<String>> namesFor) {
    IndexTableMeta m = RECENT.get(key);
    return m != null && m.locations.keySet().containsAll(namesFor.apply(m.keys)) ? m : null;
  }

  /** Asked of the metastore now (the index table, then its partitions `namesFor(its keys)`), and kept for `ttlMs`. */
  static IndexTableMeta fetch(
      ProxyMetastore ms, String key, String db, String name, Function<List<String>, Set<String>> namesFor, long ttlMs) throws Exception {
    Table it = ms.table(db, name);
    List<String> keys = it.getPartitionKeys().stream().map(k -> IndexedScanRule.lower(k.getName())).toList();
    boolean orc = it.getSd().getInputFormat() != null && it.getSd().getInputFormat().toLowerCase().contains("orc");
    Set<String> names = namesFor.apply(keys);
    Map<String, String> locations = new HashMap<>();
    for (String n : names) {
      locations.put(n, null);
    }
    if (keys.isEmpty()) {
      locations.replaceAll((n, absent) -> n.isEmpty() ? it.getSd().getLocation() : null);
    } else {
      for (Partition p : ms.partitions(db, name, new ArrayList<>(names))) {
        Map<String, String> spec = new HashMap<>();
        for (int i = 0; i < keys.size(); i++) {
          spec.put(keys.get(i), p.getValues().get(i));
        }
        locations.put(IndexSelection.partitionName(keys, spec), p.getSd().getLocation());
      }
    }
    IndexTableMeta m = new IndexTableMeta(keys, orc, locations);
    RECENT.put(key, m, ttlMs);
    return m;
  }
}

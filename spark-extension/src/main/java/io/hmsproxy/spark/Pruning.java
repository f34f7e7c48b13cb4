package io.hmsproxy.spark;

import java.util.Map;
import java.util.Set;

/**
 * What one source (a compact index, a skew layout) says a scan needs: for each partition it can
 * vouch for, the names of the data files that may hold the wanted rows, and where it knows them
 * (an index's `_offsets`), the row groups of those files that may. A partition it does not vouch
 * for (stale, never built, not laid out) is read whole unless another source vouches for it.
 *
 * @param source how EXPLAIN names it, e.g. "index user_idx"
 * @param vouched how EXPLAIN counts the partitions it vouched for, e.g. "fresh", "laid out"
 * @param rowGroups per partition, file name -> the row groups (positions in its footer) that may
 *     hold the wanted rows; a kept file without an entry is read whole
 */
record Pruning(String source, String vouched, Map<ScanPartition, Set<String>> kept, Map<ScanPartition, Map<String, Set<Integer>>> rowGroups) {
  /** A source that knows files, not row groups (a skew layout). */
  Pruning(String source, String vouched, Map<ScanPartition, Set<String>> kept) {
    this(source, vouched, kept, Map.of());
  }
}

package io.hmsproxy.spark;

import java.util.Map;
import java.util.Set;

/**
 * What one source (a compact index, a skew layout) says a scan needs: for each partition it can
 * vouch for, the names of the data files that may hold the wanted rows. A partition it does not
 * vouch for (stale, never built, not laid out) is read whole unless another source vouches for it.
 *
 * @param source how EXPLAIN names it, e.g. "index user_idx"
 * @param vouched how EXPLAIN counts the partitions it vouched for, e.g. "fresh", "laid out"
 */
record Pruning(String source, String vouched, Map<ScanPartition, Set<String>> kept) {}

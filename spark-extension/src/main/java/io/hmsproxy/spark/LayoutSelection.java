package io.hmsproxy.spark;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What the skew layout says of a scan's partitions: in each laid out by `hmsproxy job skew-layout`
 * and untouched since (its record describes its files exactly), only the files of the groups the
 * filter's values need. Partitions without a record, or whose files changed (an INSERT, a
 * streaming commit, a copy in flight), are read whole: the freshness rule of
 * `hmsproxy.clients.spark.read`. The record comes with the partitions Spark's catalog lists; no
 * extra metastore call.
 */
final class LayoutSelection {
  private LayoutSelection() {}

  /** The pruning, or null when no partition's record has a skewed column the filter names. */
  static Pruning select(List<ScanPartition> partitions, Map<String, List<Object>> wanted) {
    boolean applies = false;
    Map<ScanPartition, Set<String>> kept = new LinkedHashMap<>();
    for (ScanPartition p : partitions) {
      SkewLayout layout = SkewLayout.of(p.parameters());
      Set<String> files = layout == null ? null : layout.filesFor(wanted);
      if (files == null) {
        continue;
      }
      applies = true;
      if (layout.describes(p.files())) {
        kept.put(p, files);
      }
    }
    return applies ? new Pruning("skew layout", "laid out", kept) : null;
  }
}

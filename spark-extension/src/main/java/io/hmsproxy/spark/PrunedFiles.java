package io.hmsproxy.spark;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.execution.datasources.FileStatusWithMetadata;
import org.apache.spark.sql.execution.datasources.PartitionDirectory;
import org.apache.spark.sql.types.StructType;

/**
 * The file index a scan gets from what its prunings say: each partition's files Spark would read,
 * less those a source vouching for the partition leaves out. Where several vouch (an index and a
 * skew layout), a file is read only if every one keeps it: each keeps every file that may hold a
 * row matching its part of the filter, so a row matching the whole filter is in a file all keep.
 * Likewise for the row groups of a kept file, where a source knows them (an index's `_offsets`).
 */
final class PrunedFiles {
  private PrunedFiles() {}

  static HmsProxyIndexedFileIndex fileIndex(List<ScanPartition> partitions, List<Pruning> prunings, StructType partitionSchema) {
    List<PartitionDirectory> directories = new ArrayList<>();
    Map<String, int[]> rowGroups = new HashMap<>();
    List<Path> roots = new ArrayList<>();
    int total = 0;
    int kept = 0;
    for (ScanPartition p : partitions) {
      roots.add(new Path(p.location()));
      List<FileStatus> files = IndexBuild.readBySpark(p.files());
      total += files.size();
      for (Pruning pruning : prunings) {
        Set<String> names = pruning.kept().get(p);
        if (names != null) {
          files = files.stream().filter(f -> names.contains(f.getPath().getName())).toList();
        }
      }
      kept += files.size();
      for (FileStatus f : files) {
        int[] groups = rowGroupsOf(p, f.getPath().getName(), prunings);
        if (groups != null) {
          rowGroups.put(f.getPath().toString(), groups);
        }
      }
      if (!files.isEmpty()) {
        List<FileStatusWithMetadata> withMetadata = new ArrayList<>();
        for (FileStatus f : files) {
          withMetadata.add(new FileStatusWithMetadata(f, scala.collection.immutable.Map$.MODULE$.empty()));
        }
        directories.add(new PartitionDirectory(p.values(), Scala.seq(withMetadata)));
      }
    }
    return new HmsProxyIndexedFileIndex(roots, directories, partitionSchema, description(prunings, partitions.size(), kept, total), rowGroups);
  }

  /** The row groups of a kept file every source that knows them keeps (sorted), or null: read it whole. */
  private static int[] rowGroupsOf(ScanPartition p, String name, List<Pruning> prunings) {
    Set<Integer> groups = null;
    for (Pruning pruning : prunings) {
      Set<Integer> known = pruning.rowGroups().getOrDefault(p, Map.of()).get(name);
      if (known != null) {
        groups = groups == null ? new TreeSet<>(known) : groups;
        groups.retainAll(known);
      }
    }
    return groups == null ? null : groups.stream().mapToInt(Integer::intValue).toArray();
  }

  /**
   * E.g. "hmsproxy index user_idx + skew layout: 1 of 12 files (3 of 3 partitions fresh, 2 laid out)":
   * short, as EXPLAIN cuts a scan's metadata at spark.sql.maxMetadataStringLength (100) characters.
   */
  static String description(List<Pruning> prunings, int partitions, int kept, int total) {
    String sources = prunings.stream().map(Pruning::source).collect(Collectors.joining(" + "));
    List<String> vouched = new ArrayList<>();
    for (Pruning p : prunings) {
      vouched.add(
          vouched.isEmpty()
              ? String.format("%d of %d partitions %s", p.kept().size(), partitions, p.vouched())
              : String.format("%d %s", p.kept().size(), p.vouched()));
    }
    return String.format("hmsproxy %s: %d of %d files (%s)", sources, kept, total, String.join(", ", vouched));
  }
}

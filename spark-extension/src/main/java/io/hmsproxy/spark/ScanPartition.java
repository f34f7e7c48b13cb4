package io.hmsproxy.spark;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.catalyst.catalog.CatalogTablePartition;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.StructType;

/**
 * One partition a scan reads, as it is now: its values, Hive name and spec, location, data files
 * (listed at planning) and metastore parameters (where skew-layout leaves its record). An
 * unpartitioned table is one such piece, with the table's own parameters.
 */
record ScanPartition(
    InternalRow values, String name, Map<String, String> spec, String location, List<FileStatus> files, Map<String, String> parameters) {

  /** The partitions the static partition filters choose, listed now; null if one has visible subdirectories. */
  static List<ScanPartition> chosen(SparkSession session, CatalogTable table, StructType partitionSchema, List<Expression> partitionFilters)
      throws Exception {
    Configuration conf = session.sparkContext().hadoopConfiguration();
    List<String> keys = Scala.list(table.partitionColumnNames()).stream().map(IndexedScanRule::lower).toList();
    List<ScanPartition> chosen = new ArrayList<>();
    if (keys.isEmpty()) {
      String location = table.location().toString();
      List<FileStatus> files = IndexBuild.dataFiles(new Path(location), conf);
      if (files == null) {
        return null;
      }
      chosen.add(new ScanPartition(InternalRow.empty(), "", Map.of(), location, files, javaMap(table.properties())));
      return chosen;
    }
    var catalog = ((org.apache.spark.sql.classic.SparkSession) session).sessionState().catalog();
    String timeZone = SQLConf.get().sessionLocalTimeZone();
    for (CatalogTablePartition p : Scala.list(catalog.listPartitionsByFilter(table.identifier(), Scala.seq(partitionFilters)))) {
      Map<String, String> spec = new HashMap<>();
      javaMap(p.spec()).forEach((k, v) -> spec.put(IndexedScanRule.lower(k), v));
      List<FileStatus> files = IndexBuild.dataFiles(new Path(p.location()), conf);
      if (files == null) {
        return null;
      }
      chosen.add(
          new ScanPartition(
              p.toRow(partitionSchema, timeZone),
              IndexSelection.partitionName(keys, spec),
              spec,
              p.location().toString(),
              files,
              javaMap(p.parameters())));
    }
    return chosen;
  }

  private static Map<String, String> javaMap(scala.collection.Map<String, String> map) {
    return map == null ? Map.of() : scala.jdk.javaapi.CollectionConverters.asJava(map);
  }
}

package io.hmsproxy.spark;

import java.util.HashMap;
import java.util.Map;
import org.apache.spark.sql.execution.datasources.FileFormat;
import org.apache.spark.sql.execution.datasources.orc.OrcFileFormat;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat;

/**
 * The file readers the rule narrows: Spark's own Parquet and native ORC readers of a Hive table
 * (spark.sql.hive.convertMetastoreParquet/Orc, on by default). Hive's own readers (a table Spark
 * does not convert) are left alone. A narrowed scan keeps its reader, in a subclass whose name in
 * EXPLAIN says what hmsproxy chose: a scan node's other lines show only a file index's class name.
 */
final class IndexedFormats {
  private IndexedFormats() {}

  /** Whether the rule may narrow a scan that reads with `format`. */
  static boolean narrowable(FileFormat format) {
    return format.getClass() == ParquetFileFormat.class || format.getClass() == OrcFileFormat.class;
  }

  /**
   * `format`'s reader, shown in EXPLAIN with `description`; `format` is narrowable. Parquet's reads
   * only the given row groups of the files in `rowGroups` (ORC's reads kept files whole).
   */
  static FileFormat describing(FileFormat format, String description, Map<String, int[]> rowGroups) {
    return format.getClass() == OrcFileFormat.class
        ? new HmsProxyIndexedOrcFormat(description)
        : new HmsProxyIndexedParquetFormat(description, new HashMap<>(rowGroups));
  }
}

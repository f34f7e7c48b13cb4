package io.hmsproxy.spark;

import java.util.HashMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.datasources.PartitionedFile;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructType;
import scala.Function1;
import scala.collection.Iterator;

/**
 * Spark's Parquet reader, named in EXPLAIN's "Format" with the index's choice (IndexedFormats), that
 * reads of each file the index gave row groups for only those row groups (RowGroupSplits).
 */
public final class HmsProxyIndexedParquetFormat extends ParquetFileFormat {
  private static final long serialVersionUID = 1L;
  private final String description;
  private final HashMap<String, int[]> rowGroups;

  HmsProxyIndexedParquetFormat(String description, HashMap<String, int[]> rowGroups) {
    this.description = description;
    this.rowGroups = rowGroups;
  }

  @Override
  public Function1<PartitionedFile, Iterator<InternalRow>> buildReaderWithPartitionValues(
      SparkSession session,
      StructType dataSchema,
      StructType partitionSchema,
      StructType requiredSchema,
      scala.collection.immutable.Seq<Filter> filters,
      scala.collection.immutable.Map<String, String> options,
      Configuration hadoopConf) {
    Function1<PartitionedFile, Iterator<InternalRow>> whole =
        super.buildReaderWithPartitionValues(session, dataSchema, partitionSchema, requiredSchema, filters, options, hadoopConf);
    return rowGroups.isEmpty() ? whole : new RowGroupSplits(whole, rowGroups, hadoopConf);
  }

  @Override
  public String toString() {
    return "Parquet, " + description;
  }
}

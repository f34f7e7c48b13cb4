package io.hmsproxy.spark;

import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat;

/** Spark's Parquet reader unchanged, named in EXPLAIN's "Format" with the index's choice (IndexedFormats). */
public final class HmsProxyIndexedParquetFormat extends ParquetFileFormat {
  private static final long serialVersionUID = 1L;
  private final String description;

  HmsProxyIndexedParquetFormat(String description) {
    this.description = description;
  }

  @Override
  public String toString() {
    return "Parquet, " + description;
  }
}

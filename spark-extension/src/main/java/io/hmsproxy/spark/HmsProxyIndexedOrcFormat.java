package io.hmsproxy.spark;

import org.apache.spark.sql.execution.datasources.orc.OrcFileFormat;

/** Spark's native ORC reader unchanged, named in EXPLAIN's "Format" with the index's choice (IndexedFormats). */
public final class HmsProxyIndexedOrcFormat extends OrcFileFormat {
  private static final long serialVersionUID = 1L;
  private final String description;

  HmsProxyIndexedOrcFormat(String description) {
    this.description = description;
  }

  @Override
  public String toString() {
    return "ORC, " + description;
  }
}

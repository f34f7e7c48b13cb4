package io.hmsproxy.spark;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.BoundReference;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.InterpretedPredicate;
import org.apache.spark.sql.catalyst.expressions.Predicate;
import org.apache.spark.sql.execution.datasources.FileIndex;
import org.apache.spark.sql.execution.datasources.FileStatusWithMetadata;
import org.apache.spark.sql.execution.datasources.PartitionDirectory;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import scala.Function1;
import scala.Option;
import scala.runtime.AbstractPartialFunction;

/**
 * The files of a table's partitions that a scan reads once the index chose them: every file of
 * partitions whose index is stale or missing, only the index-named files of fresh ones. Its
 * partitions were already chosen by the query's static partition filters; runtime ones (dynamic
 * partition pruning) are applied here, since Spark does not filter partition columns after a scan.
 */
public final class HmsProxyIndexedFileIndex implements FileIndex {
  private final scala.collection.immutable.Seq<Path> roots;
  private final List<PartitionDirectory> partitions;
  private final StructType partitionSchema;
  private final String description;
  private final Map<String, int[]> rowGroups;

  HmsProxyIndexedFileIndex(
      List<Path> roots, List<PartitionDirectory> partitions, StructType partitionSchema, String description, Map<String, int[]> rowGroups) {
    this.roots = Scala.seq(roots);
    this.partitions = partitions;
    this.partitionSchema = partitionSchema;
    this.description = description;
    this.rowGroups = rowGroups;
  }

  /** Kept file (its path as listed) -> the row groups that may hold the wanted rows; a file not here is read whole. */
  Map<String, int[]> rowGroups() {
    return rowGroups;
  }

  /** What EXPLAIN says of the index's choice, e.g. "hmsproxy index user_idx: 2 of 12 files". */
  public String description() {
    return description;
  }

  @Override
  public scala.collection.immutable.Seq<Path> rootPaths() {
    return roots;
  }

  @Override
  public scala.collection.immutable.Seq<PartitionDirectory> listFiles(
      scala.collection.immutable.Seq<Expression> partitionFilters, scala.collection.immutable.Seq<Expression> dataFilters) {
    if (partitionFilters.isEmpty() || partitionSchema.isEmpty()) {
      return Scala.seq(partitions);
    }
    Expression all = null;
    for (Expression f : Scala.list(partitionFilters)) {
      all = all == null ? f : new And(all, f);
    }
    InterpretedPredicate keep = Predicate.createInterpreted(bound(all));
    keep.initialize(0);
    List<PartitionDirectory> kept = new ArrayList<>();
    for (PartitionDirectory p : partitions) {
      if (keep.eval(p.values())) {
        kept.add(p);
      }
    }
    return Scala.seq(kept);
  }

  /** The filter over a partition's values: each partition column by its position. */
  private Expression bound(Expression filter) {
    StructField[] fields = partitionSchema.fields();
    return filter.transform(
        new AbstractPartialFunction<Expression, Expression>() {
          @Override
          public boolean isDefinedAt(Expression e) {
            return e instanceof AttributeReference;
          }

          @Override
          public <A1 extends Expression, B1> B1 applyOrElse(A1 e, Function1<A1, B1> otherwise) {
            if (!(e instanceof AttributeReference a)) {
              return otherwise.apply(e);
            }
            for (int i = 0; i < fields.length; i++) {
              if (fields[i].name().toLowerCase(Locale.ROOT).equals(a.name().toLowerCase(Locale.ROOT))) {
                @SuppressWarnings("unchecked")
                B1 ref = (B1) new BoundReference(i, fields[i].dataType(), true);
                return ref;
              }
            }
            throw new IllegalArgumentException("not a partition column: " + a.name());
          }
        });
  }

  @Override
  public String[] inputFiles() {
    List<String> files = new ArrayList<>();
    for (PartitionDirectory p : partitions) {
      for (FileStatusWithMetadata f : Scala.list(p.files())) {
        files.add(f.getPath().toString());
      }
    }
    return files.toArray(new String[0]);
  }

  @Override
  public void refresh() {}

  @Override
  public long sizeInBytes() {
    long size = 0;
    for (PartitionDirectory p : partitions) {
      for (FileStatusWithMetadata f : Scala.list(p.files())) {
        size += f.getLen();
      }
    }
    return size;
  }

  @Override
  public StructType partitionSchema() {
    return partitionSchema;
  }

  @Override
  public Option<Object> metadataOpsTimeNs() {
    return Option.empty();
  }

  @Override
  public String toString() {
    return "HmsProxyIndexedFileIndex(" + description + ")";
  }
}

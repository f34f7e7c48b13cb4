package io.hmsproxy.spark;

import java.io.IOException;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.datasources.PartitionedFile;
import org.apache.spark.util.SerializableConfiguration;
import scala.Function1;
import scala.collection.AbstractIterator;
import scala.collection.Iterator;
import scala.runtime.AbstractFunction1;

/**
 * Spark's Parquet reader for one split of a file, narrowed to the row groups the index named. A
 * Parquet reader given a byte range reads the row groups whose midpoint falls in it (parquet-mr's
 * rule for splits), so each wanted row group of this split is read as a split of its own bytes,
 * runs of adjacent ones as one; the others are never read. Skipping them loses no row the query
 * wants: the index is fresh, so the file is the one it was built from and its other row groups
 * hold none of the wanted values. The file's footer is read once more for the row groups' bytes
 * (once per file and executor JVM); where it can't be, the split is read whole.
 */
final class RowGroupSplits extends AbstractFunction1<PartitionedFile, Iterator<InternalRow>> implements Serializable {
  private static final long serialVersionUID = 1L;
  private final Function1<PartitionedFile, Iterator<InternalRow>> whole;
  private final HashMap<String, int[]> rowGroups;
  private final SerializableConfiguration conf;

  RowGroupSplits(Function1<PartitionedFile, Iterator<InternalRow>> whole, HashMap<String, int[]> rowGroups, Configuration conf) {
    this.whole = whole;
    this.rowGroups = rowGroups;
    this.conf = new SerializableConfiguration(conf);
  }

  @Override
  public Iterator<InternalRow> apply(PartitionedFile file) {
    int[] wanted = rowGroups.get(file.toPath().toString());
    if (wanted == null) {
      return whole.apply(file);
    }
    List<long[]> ranges;
    try {
      ranges = ranges(file, wanted);
    } catch (IOException | RuntimeException e) {
      return whole.apply(file);
    }
    List<PartitionedFile> pieces = new ArrayList<>();
    for (long[] r : ranges) {
      pieces.add(
          file.copy(
              file.partitionValues(), file.filePath(), r[0], r[1], file.locations(), file.modificationTime(), file.fileSize(),
              file.otherConstantMetadataColumnValues()));
    }
    return concat(pieces);
  }

  /** [start, length] of each run of wanted row groups whose midpoint is in this split, in file order. */
  private List<long[]> ranges(PartitionedFile file, int[] wanted) throws IOException {
    long[][] blocks = blocks(file);
    List<long[]> ranges = new ArrayList<>();
    int previous = -2;
    for (int g : wanted) {
      if (g < 0 || g >= blocks.length) {
        throw new IOException("row group " + g + " of " + blocks.length + " in " + file.toPath());
      }
      long start = blocks[g][0];
      long size = blocks[g][1];
      long midpoint = start + size / 2;
      if (midpoint < file.start() || midpoint >= file.start() + file.length()) {
        continue; // another split's
      }
      if (g == previous + 1 && !ranges.isEmpty()) {
        long[] last = ranges.get(ranges.size() - 1);
        last[1] = start + size - last[0];
      } else {
        ranges.add(new long[] {start, size});
      }
      previous = g;
    }
    return ranges;
  }

  /**
   * [first byte, compressed size] of each row group of the file, from its footer; kept in this JVM
   * by file (path, size, modification time), so a repeated query reads no footer twice.
   */
  private long[][] blocks(PartitionedFile file) throws IOException {
    String identity = file.toPath() + "\0" + file.fileSize() + "\0" + file.modificationTime();
    long[][] known = BLOCKS.get(identity);
    if (known != null) {
      return known;
    }
    List<BlockMetaData> blocks;
    try (ParquetFileReader reader = ParquetFileReader.open(HadoopInputFile.fromPath(file.toPath(), conf.value()))) {
      blocks = reader.getFooter().getBlocks();
    }
    long[][] ranges = new long[blocks.size()][];
    for (int g = 0; g < ranges.length; g++) {
      ranges[g] = new long[] {blocks.get(g).getStartingPos(), blocks.get(g).getCompressedSize()};
    }
    BLOCKS.put(identity, ranges);
    return ranges;
  }

  private static final int CACHED_FILES = 4096;
  private static final Map<String, long[][]> BLOCKS = IndexFileReader.lru(CACHED_FILES);

  /**
   * The rows of each piece in turn; a piece's reader is made when the one before is done. Its items
   * are what Spark's reader gives, rows or (vectorized) ColumnarBatches despite the declared type,
   * so they pass through untyped.
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private Iterator<InternalRow> concat(List<PartitionedFile> pieces) {
    return (Iterator) new AbstractIterator<Object>() {
      private int next;
      private Iterator<?> current = scala.collection.Iterator$.MODULE$.empty();

      @Override
      public boolean hasNext() {
        while (!current.hasNext() && next < pieces.size()) {
          current = whole.apply(pieces.get(next++));
        }
        return current.hasNext();
      }

      @Override
      public Object next() {
        if (!hasNext()) {
          throw new java.util.NoSuchElementException();
        }
        return current.next();
      }
    };
  }
}

package io.hmsproxy.spark;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.parquet.HadoopReadOptions;
import org.apache.parquet.ParquetReadOptions;
import org.apache.parquet.column.page.PageReadStore;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.convert.GroupRecordConverter;
import org.apache.parquet.filter2.compat.FilterCompat;
import org.apache.parquet.filter2.predicate.FilterApi;
import org.apache.parquet.filter2.predicate.FilterPredicate;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.parquet.io.ColumnIOFactory;
import org.apache.parquet.io.MessageColumnIO;
import org.apache.parquet.io.RecordReader;
import org.apache.parquet.io.SeekableInputStream;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType;
import org.apache.parquet.schema.Type;

/**
 * The `_bucketname`s of a Parquet index file's rows for the wanted values, with their `_offsets` (the
 * row groups of the base file holding them), read in the driver with parquet-hadoop: no Spark job
 * (it cost more than the scan it saved). Only the indexed columns, `_bucketname` and `_offsets` are
 * read, and only the row groups (and pages) whose statistics, dictionaries or bloom filters admit
 * the values: the index is sorted on its columns, so a point lookup reads one.
 * Footers and answers are cached in this JVM by file (path, size, modification time): a rebuild
 * writes new files, so a cached answer is never one of an older build.
 */
final class IndexFileReader {
  private static final int CACHED_FOOTERS = 1024;
  private static final int CACHED_ANSWERS = 8192;
  private static final Map<String, ParquetMetadata> FOOTERS = lru(CACHED_FOOTERS);
  private static final Map<String, Map<String, Set<Integer>>> ANSWERS = lru(CACHED_ANSWERS);
  static final String OFFSETS_COLUMN = "_offsets";

  private IndexFileReader() {}

  /**
   * The buckets (base files) the index file's rows for `wanted` (column -> values, lower-case) name,
   * in order, each with the row groups its rows give (empty: not known, the whole file).
   */
  static Map<String, Set<Integer>> buckets(FileStatus file, List<String> columns, Map<String, List<Object>> wanted, Configuration conf)
      throws IOException {
    String identity = file.getPath() + "\0" + file.getLen() + "\0" + file.getModificationTime();
    String key = identity + "\0" + question(columns, wanted);
    Map<String, Set<Integer>> known = ANSWERS.get(key);
    if (known != null) {
      return known;
    }
    ParquetMetadata footer = FOOTERS.get(identity);
    if (footer == null) {
      HadoopInputFile input = HadoopInputFile.fromStatus(file, conf);
      try (SeekableInputStream in = input.newStream()) {
        footer = ParquetFileReader.readFooter(input, ParquetReadOptions.builder().build(), in);
      }
      FOOTERS.put(identity, footer);
    }
    Map<String, Set<Integer>> found = read(file, footer, columns, wanted, conf);
    ANSWERS.put(key, found);
    return found;
  }

  private static Map<String, Set<Integer>> read(
      FileStatus file, ParquetMetadata footer, List<String> columns, Map<String, List<Object>> wanted, Configuration conf)
      throws IOException {
    MessageType schema = footer.getFileMetaData().getSchema();
    Map<String, Type> byName = schema.getFields().stream().collect(Collectors.toMap(t -> IndexedScanRule.lower(t.getName()), t -> t, (a, b) -> a));
    Type bucket = byName.get(IndexSelection.BUCKET_COLUMN);
    if (bucket == null) {
      throw new IOException("index file without " + IndexSelection.BUCKET_COLUMN + ": " + file.getPath());
    }
    List<Type> projected = new ArrayList<>();
    FilterPredicate condition = null;
    for (String column : columns) {
      Type field = byName.get(column);
      if (field == null || !field.isPrimitive()) {
        throw new IOException("index file without a plain column " + column + ": " + file.getPath());
      }
      projected.add(field);
      FilterPredicate term = in(field.asPrimitiveType(), wanted.get(column));
      condition = condition == null ? term : FilterApi.and(condition, term);
    }
    projected.add(bucket);
    Type offsets = byName.get(OFFSETS_COLUMN);
    if (offsets != null) {
      projected.add(offsets);
    }
    MessageType projection = new MessageType(schema.getName(), projected);
    FilterCompat.Filter filter = FilterCompat.get(condition);
    ParquetReadOptions options =
        HadoopReadOptions.builder(conf, file.getPath())
            .withRecordFilter(filter)
            .useStatsFilter(true)
            .useDictionaryFilter(true)
            .useBloomFilter(true)
            .useColumnIndexFilter(true)
            .useRecordFilter(true)
            .build();
    Map<String, Set<Integer>> found = new LinkedHashMap<>();
    try (ParquetFileReader reader =
        new ParquetFileReader(conf, file.getPath(), footer, options, HadoopInputFile.fromStatus(file, conf).newStream())) {
      reader.setRequestedSchema(projection);
      MessageColumnIO io = new ColumnIOFactory().getColumnIO(projection, schema);
      PageReadStore pages;
      while ((pages = reader.readNextFilteredRowGroup()) != null) {
        RecordReader<Group> records = io.getRecordReader(pages, new GroupRecordConverter(projection), filter);
        for (long i = 0; i < pages.getRowCount(); i++) {
          Group row = records.read();
          if (row != null && !records.shouldSkipCurrentRecord()) {
            Set<Integer> groups = offsets == null ? Set.of() : positions(row, offsets.getName());
            merge(found, row.getString(bucket.getName(), 0), groups);
          }
        }
      }
    }
    return Collections.unmodifiableMap(found);
  }

  /**
   * Adds a bucket's row groups to what `buckets` holds for it: the union, or empty (the whole file)
   * when either side is. Sets are replaced, never changed: answers are cached and shared.
   */
  static void merge(Map<String, Set<Integer>> buckets, String bucket, Set<Integer> groups) {
    Set<Integer> known = buckets.get(bucket);
    if (known == null) {
      buckets.put(bucket, groups);
    } else if (!known.isEmpty() && !groups.isEmpty()) {
      Set<Integer> union = new TreeSet<>(known);
      union.addAll(groups);
      buckets.put(bucket, union);
    } else {
      buckets.put(bucket, Set.of());
    }
  }

  /**
   * The row's `_offsets` (an array of row-group positions, in Parquet's LIST shape: a group whose
   * repeated group holds one element each); empty when it has none to give (the whole file).
   */
  private static Set<Integer> positions(Group row, String column) {
    if (row.getFieldRepetitionCount(column) == 0) {
      return Set.of();
    }
    Group list = row.getGroup(column, 0);
    if (list.getType().getFieldCount() != 1 || list.getType().getType(0).isPrimitive()) {
      return Set.of();
    }
    String repeated = list.getType().getFieldName(0);
    Set<Integer> groups = new TreeSet<>();
    for (int i = 0; i < list.getFieldRepetitionCount(repeated); i++) {
      Group entry = list.getGroup(repeated, i);
      if (entry.getType().getFieldCount() != 1 || !entry.getType().getType(0).isPrimitive() || entry.getFieldRepetitionCount(0) == 0) {
        return Set.of(); // a null position: no telling where the rows are
      }
      boolean wide = entry.getType().getType(0).asPrimitiveType().getPrimitiveTypeName() == PrimitiveType.PrimitiveTypeName.INT64;
      groups.add(wide ? (int) entry.getLong(0, 0) : entry.getInteger(0, 0));
    }
    return groups;
  }

  /** `column IN (values)` typed as the file stores the column (how Spark writes BIGINT, INT, SMALLINT, TINYINT, BOOLEAN, STRING). */
  static FilterPredicate in(PrimitiveType field, List<Object> values) throws IOException {
    String path = field.getName();
    switch (field.getPrimitiveTypeName()) {
      case INT64:
        return FilterApi.in(FilterApi.longColumn(path), convert(values, v -> ((Number) v).longValue()));
      case INT32:
        return FilterApi.in(FilterApi.intColumn(path), convert(values, v -> ((Number) v).intValue()));
      case BOOLEAN:
        return FilterApi.in(FilterApi.booleanColumn(path), convert(values, v -> (Boolean) v));
      case BINARY:
        return FilterApi.in(FilterApi.binaryColumn(path), convert(values, v -> Binary.fromString(v.toString())));
      default:
        throw new IOException("an index column of a type the extension does not read: " + field);
    }
  }

  private static <T> Set<T> convert(List<Object> values, Function<Object, T> as) {
    Set<T> set = new HashSet<>();
    for (Object v : values) {
      set.add(as.apply(v));
    }
    return set;
  }

  /** The cache key of a lookup: its columns and their values, in a stable order. */
  private static String question(List<String> columns, Map<String, List<Object>> wanted) {
    StringBuilder text = new StringBuilder();
    for (String c : columns) {
      TreeSet<String> values = new TreeSet<>();
      for (Object v : wanted.get(c)) {
        values.add(v.getClass().getSimpleName() + ":" + v);
      }
      text.append(c).append('=').append(values).append(';');
    }
    return text.toString();
  }

  /** A synchronized map keeping the `size` entries used last. */
  static <V> Map<String, V> lru(int size) {
    return Collections.synchronizedMap(
        new LinkedHashMap<>(16, 0.75f, true) {
          @Override
          protected boolean removeEldestEntry(Map.Entry<String, V> eldest) {
            return size() > size;
          }
        });
  }
}

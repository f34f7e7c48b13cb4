package io.hmsproxy.spark;

import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hive.metastore.api.FieldSchema;
import org.apache.hadoop.hive.metastore.api.Index;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.functions;

/**
 * Which files of a table's chosen partitions a query reads, by the same rule as
 * hmsproxy/clients/index_lookup.py's plan_lookup: a base partition whose index partition was built
 * from exactly the files it holds now (same digest) reads only the files the index rows for the
 * wanted values name; any other (stale, never built) is read whole. The index rows are read by
 * this session (one Spark job over the fresh index partitions' files, with Parquet's pushdown),
 * the manifests and listings with Hadoop's file systems: the storage keys are the user's, not the
 * proxy's.
 */
final class IndexSelection {
  static final String BUCKET_COLUMN = "_bucketname";

  private final SparkSession session;
  private final ProxyMetastore ms;
  /** How long the index table's metadata is kept (IndexTableMeta). */
  private final long ttlMs;
  private final CatalogTable table;
  private final Index index;
  private final Map<String, List<Object>> wanted;
  private final Configuration conf;

  IndexSelection(
      SparkSession session,
      ProxyMetastore ms,
      CatalogTable table,
      Index index,
      Map<String, List<Object>> wanted,
      long ttlMs) {
    this.session = session;
    this.ms = ms;
    this.ttlMs = ttlMs;
    this.table = table;
    this.index = index;
    this.wanted = wanted;
    this.conf = session.sparkContext().hadoopConfiguration();
  }

  /** What the index says of these partitions: the files its rows name, in those it is fresh for. */
  Pruning select(List<ScanPartition> bases) throws Exception {
    String indexTable = index.getIndexTableName();
    int dot = indexTable.lastIndexOf('.');
    String indexDb = dot >= 0 ? indexTable.substring(0, dot) : table.identifier().database().get();
    String indexName = dot >= 0 ? indexTable.substring(dot + 1) : indexTable;
    String metaKey = ms.uris() + "\0" + IndexedScanRule.lower(indexDb) + "." + IndexedScanRule.lower(indexName);
    Function<List<String>, Set<String>> namesFor = keys -> new LinkedHashSet<>(coveredBy(bases, keys).values());
    // The kept metadata first: used only if every covered partition proves fresh with it, else asked again.
    IndexTableMeta meta = IndexTableMeta.recent(metaKey, namesFor);
    Freshness state = meta == null ? null : freshness(bases, meta);
    if (state == null || state.fresh.size() < state.coveredBy.size()) {
      meta = IndexTableMeta.fetch(ms, metaKey, indexDb, indexName, namesFor, ttlMs);
      state = freshness(bases, meta);
    }
    Map<ScanPartition, String> coveredBy = state.coveredBy;
    List<ScanPartition> fresh = state.fresh;
    Map<String, Map<String, Set<Integer>>> named =
        meta.orc() ? namedFilesBySpark(fresh, coveredBy, state.indexFiles) : namedFiles(fresh, coveredBy, state.indexFiles);
    Map<ScanPartition, Set<String>> kept = new LinkedHashMap<>();
    Map<ScanPartition, Map<String, Set<Integer>>> rowGroups = new LinkedHashMap<>();
    for (ScanPartition b : fresh) {
      IndexBuild build = state.builds.get(coveredBy.get(b));
      Map<String, Set<Integer>> files = chosen(b.location(), named.getOrDefault(coveredBy.get(b), Map.of()), build.base.size() == 1);
      kept.put(b, Set.copyOf(files.keySet()));
      Map<String, Set<Integer>> known = new HashMap<>(files);
      known.values().removeIf(Set::isEmpty); // no positions known: the file is read whole
      rowGroups.put(b, known);
    }
    return new Pruning("index " + index.getIndexName(), "fresh", kept, rowGroups);
  }

  /** Which base partitions an index partition serves, as the index table is at `meta`'s locations. */
  private record Freshness(
      Map<ScanPartition, String> coveredBy, Map<String, IndexBuild> builds, Map<String, List<FileStatus>> indexFiles, List<ScanPartition> fresh) {}

  /** The index partition covering each base partition ('' for an unpartitioned index table). */
  private static Map<ScanPartition, String> coveredBy(List<ScanPartition> bases, List<String> indexKeys) {
    Map<ScanPartition, String> coveredBy = new LinkedHashMap<>();
    for (ScanPartition b : bases) {
      if (b.spec().keySet().containsAll(indexKeys)) {
        coveredBy.put(b, partitionName(indexKeys, b.spec()));
      }
    }
    return coveredBy;
  }

  /** The builds found at the index partitions' locations, and the base partitions fresh for them. */
  private Freshness freshness(List<ScanPartition> bases, IndexTableMeta meta) throws IOException {
    Map<ScanPartition, String> coveredBy = coveredBy(bases, meta.keys());
    Map<String, IndexBuild> builds = new HashMap<>();
    Map<String, List<FileStatus>> indexFiles = new HashMap<>();
    for (String name : new LinkedHashSet<>(coveredBy.values())) {
      String where = meta.locations().get(name);
      if (where == null) {
        continue; // never built
      }
      Path location = new Path(where);
      IndexBuild build = IndexBuild.read(location, conf);
      List<FileStatus> files = build == null ? null : IndexBuild.dataFiles(location, conf);
      if (build != null && build.partition.equals(name) && files != null && build.describes(files)) {
        builds.put(name, build);
        indexFiles.put(name, files);
      }
    }
    List<ScanPartition> fresh = new ArrayList<>();
    for (Map.Entry<ScanPartition, String> e : coveredBy.entrySet()) {
      IndexBuild build = builds.get(e.getValue());
      if (build != null && build.freshFor(e.getKey().name(), IndexBuild.digest(e.getKey().files()))) {
        fresh.add(e.getKey());
      }
    }
    return new Freshness(coveredBy, builds, indexFiles, fresh);
  }

  /**
   * index partition -> the base files its rows for the wanted values name, with their row groups:
   * each fresh one's Parquet files read in the driver.
   */
  private Map<String, Map<String, Set<Integer>>> namedFiles(List<ScanPartition> fresh, Map<ScanPartition, String> coveredBy, Map<String, List<FileStatus>> indexFiles)
      throws IOException {
    List<String> columns = index.getSd().getCols().stream().map(c -> IndexedScanRule.lower(c.getName())).toList();
    Map<String, Map<String, Set<Integer>>> named = new HashMap<>();
    for (ScanPartition b : fresh) {
      String key = coveredBy.get(b);
      if (named.containsKey(key)) {
        continue; // an index partition covering several base partitions is read once
      }
      Map<String, Set<Integer>> buckets = new LinkedHashMap<>();
      for (FileStatus f : indexFiles.get(key)) {
        IndexFileReader.buckets(f, columns, wanted, conf).forEach((bucket, groups) -> IndexFileReader.merge(buckets, bucket, groups));
      }
      named.put(key, buckets);
    }
    return named;
  }

  /** The same for an ORC index table (files only, each read whole): one Spark job over every fresh index partition's files. */
  private Map<String, Map<String, Set<Integer>>> namedFilesBySpark(
      List<ScanPartition> fresh, Map<ScanPartition, String> coveredBy, Map<String, List<FileStatus>> indexFiles) {
    Map<String, String> partitionOfFile = new HashMap<>();
    for (ScanPartition b : fresh) {
      String key = coveredBy.get(b);
      for (FileStatus f : indexFiles.get(key)) {
        partitionOfFile.put(f.getPath().toUri().getPath(), key);
      }
    }
    Map<String, Map<String, Set<Integer>>> named = new HashMap<>();
    if (partitionOfFile.isEmpty()) {
      return named;
    }
    List<String> paths = new ArrayList<>();
    for (ScanPartition b : fresh) {
      for (FileStatus f : indexFiles.get(coveredBy.get(b))) {
        paths.add(f.getPath().toString());
      }
    }
    paths = new ArrayList<>(new LinkedHashSet<>(paths));
    Dataset<Row> rows = session.read().orc(paths.toArray(new String[0]));
    Column condition = null;
    for (FieldSchema c : index.getSd().getCols()) {
      Column term = functions.col(IndexedScanRule.lower(c.getName())).isin(wanted.get(IndexedScanRule.lower(c.getName())).toArray());
      condition = condition == null ? term : condition.and(term);
    }
    for (Row r : rows.where(condition).select(functions.input_file_name(), functions.col(BUCKET_COLUMN)).distinct().collectAsList()) {
      String key = partitionOfFile.get(URI.create(r.getString(0)).getPath());
      if (key == null) {
        throw new IllegalStateException("an index row from a file the index partitions do not list: " + r.getString(0));
      }
      named.computeIfAbsent(key, k -> new LinkedHashMap<>()).put(r.getString(1), Set.of());
    }
    return named;
  }

  /**
   * The names of the base partition's files its index rows name (index_lookup._IndexSide.listed_files),
   * each with its row groups (empty: the whole file).
   */
  private static Map<String, Set<Integer>> chosen(String location, Map<String, Set<Integer>> buckets, boolean onlyOneBase) {
    Map<String, Set<Integer>> names = new HashMap<>();
    buckets.forEach(
        (bucket, groups) -> {
          int slash = bucket.lastIndexOf('/');
          String parent = slash >= 0 ? bucket.substring(0, slash) : "";
          if (onlyOneBase || sameDir(parent, location)) {
            names.put(bucket.substring(slash + 1), groups);
          }
        });
    return names;
  }

  /** Two Hadoop-style directory paths naming the same place (file:/x and file:///x alike). */
  static boolean sameDir(String a, String b) {
    URI ua = URI.create(a);
    URI ub = URI.create(b);
    return same(ua.getScheme(), ub.getScheme(), "file")
        && same(ua.getRawAuthority(), ub.getRawAuthority(), "")
        && strip(ua.getRawPath()).equals(strip(ub.getRawPath()));
  }

  private static boolean same(String a, String b, String absent) {
    return (a == null ? absent : a).equals(b == null ? absent : b);
  }

  private static String strip(String path) {
    String p = path == null ? "" : path;
    while (p.endsWith("/")) {
      p = p.substring(0, p.length() - 1);
    }
    return p;
  }

  /** Hive's partition name, 'ds=2026-11-01/hr=3', escaped as Hive's FileUtils does (partition_names.py). */
  static String partitionName(List<String> keys, Map<String, String> spec) {
    StringBuilder name = new StringBuilder();
    for (String k : keys) {
      if (name.length() > 0) {
        name.append('/');
      }
      name.append(escape(k)).append('=').append(escape(spec.get(k)));
    }
    return name.toString();
  }

  private static final String ESCAPED = "\"#%'*/:=?\\\u007f{[]^";

  static String escape(String text) {
    StringBuilder out = new StringBuilder();
    for (char c : text.toCharArray()) {
      if (c < 0x20 || ESCAPED.indexOf(c) >= 0) {
        out.append('%').append(String.format("%02X", (int) c));
      } else {
        out.append(c);
      }
    }
    return out.toString();
  }
}

package io.hmsproxy.spark;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hive.metastore.api.FieldSchema;
import org.apache.hadoop.hive.metastore.api.Index;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.EqualTo;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.In;
import org.apache.spark.sql.catalyst.expressions.InSet;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.plans.logical.Filter;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.execution.datasources.HadoopFsRelation;
import org.apache.spark.sql.execution.datasources.LogicalRelation;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The optimizer rule: a Filter over a Hive Parquet or ORC table Spark reads as files, with `=` or `IN` on
 * every column of one of its compact indexes, gets a file index listing only what the index's fresh
 * partitions name (IndexSelection); with `=` or `IN` on a skewed column of a table laid out by
 * skew-layout, only the needed file groups (LayoutSelection); with both, the files both keep
 * (PrunedFiles). Nothing changes when the switch is off, the table opts out, the
 * metastore is not a hmsproxy, or anything goes wrong (logged once): the plan stays Spark's own.
 */
final class IndexedScanRule extends Rule<LogicalPlan> {
  static final String ENABLED = "spark.hmsproxy.index.enabled";
  /** Where to ask for indexes; by default the metastore Spark uses (hive.metastore.uris). */
  static final String METASTORE_URIS = "spark.hmsproxy.index.metastore.uris";
  /** A table property: 'false' keeps the extension off that table. */
  static final String TABLE_SWITCH = "hmsproxy.index.spark";
  static final String COMPACT = "org.apache.hadoop.hive.ql.index.compact.CompactIndexHandler";
  private static final int CONNECT_TIMEOUT_MS = 10_000;
  /** What Spark's Hive client lists among a table's unsupported features when Hive's SkewedInfo names columns. */
  static final String SKEWED_FEATURE = "skewed columns";

  private static final Logger LOG = LoggerFactory.getLogger(IndexedScanRule.class);
  private static final AtomicBoolean FAILURE_LOGGED = new AtomicBoolean();
  private static final AtomicBoolean NOT_PROXY_LOGGED = new AtomicBoolean();

  /** How long a table's indexes and an index table's partition locations are reused without asking (0: every plan asks). */
  static final String INDEXES_TTL = "spark.hmsproxy.index.metadataTtlSeconds";
  static final long DEFAULT_INDEXES_TTL_S = 30;

  private final SparkSession session;
  /**
   * The indexes of the tables this session planned on lately (uris, db.table -> get_indexes): without
   * it every plan of an equality filter on any Hive Parquet table paid a metastore round trip. An
   * index created meanwhile is used once the entry expires; one dropped meanwhile is harmless (its
   * index partitions no longer match, so partitions are read whole).
   */
  private final Expiring<List<Index>> recentIndexes = new Expiring<>(10_000);

  IndexedScanRule(SparkSession session) {
    this.session = session;
  }

  @Override
  public LogicalPlan apply(LogicalPlan plan) {
    if (!"true".equalsIgnoreCase(sessionConf().getConfString(ENABLED, "true").trim())) {
      return plan;
    }
    try {
      return rewrite(plan);
    } catch (Exception | LinkageError e) {
      if (FAILURE_LOGGED.compareAndSet(false, true)) {
        LOG.warn("hmsproxy: the index extension left a plan unchanged (later failures are not logged): {}", e.toString(), e);
      }
      return plan;
    }
  }

  private LogicalPlan rewrite(LogicalPlan plan) throws Exception {
    if (plan instanceof Filter f && f.child() instanceof LogicalRelation rel) {
      LogicalRelation indexed = indexed(f.condition(), rel);
      return indexed == null ? plan : new Filter(f.condition(), indexed);
    }
    List<Exception> failed = new ArrayList<>(1);
    LogicalPlan rewritten =
        (LogicalPlan)
            plan.mapChildren(
                child -> {
                  try {
                    return rewrite(child);
                  } catch (Exception e) {
                    failed.add(e);
                    return child;
                  }
                });
    if (!failed.isEmpty()) {
      throw failed.get(0);
    }
    return rewritten;
  }

  /** The relation with the index's file index, or null where the index is not for this scan. */
  private LogicalRelation indexed(Expression condition, LogicalRelation rel) throws Exception {
    if (!(rel.relation() instanceof HadoopFsRelation fs) || rel.catalogTable().isEmpty() || rel.isStreaming()) {
      return null;
    }
    if (fs.location() instanceof HmsProxyIndexedFileIndex || !IndexedFormats.narrowable(fs.fileFormat())) {
      return null; // done already, or not Spark's own Parquet or ORC reader of a Hive table
    }
    CatalogTable table = rel.catalogTable().get();
    if (table.properties().get(TABLE_SWITCH).exists(v -> "false".equalsIgnoreCase(v.trim()))) {
      return null;
    }
    Set<String> partitionColumns =
        java.util.Arrays.stream(fs.partitionSchema().fieldNames()).map(IndexedScanRule::lower).collect(Collectors.toSet());
    Map<String, List<Object>> wanted = new LinkedHashMap<>();
    List<Expression> partitionFilters = new ArrayList<>();
    for (Expression conjunct : conjuncts(condition)) {
      List<String> refs = Scala.list(conjunct.references().toSeq()).stream().map(a -> lower(a.name())).toList();
      if (!refs.isEmpty() && partitionColumns.containsAll(refs) && conjunct.deterministic()) {
        partitionFilters.add(conjunct);
      } else {
        valuesOf(conjunct, partitionColumns).forEach(wanted::putIfAbsent);
      }
    }
    if (wanted.isEmpty()) {
      return null;
    }
    String uris = metastoreUris();
    if (uris == null || Boolean.FALSE.equals(ProxyMetastore.knownHmsProxy(uris))) {
      return null;
    }
    String db = table.identifier().database().get();
    String name = table.identifier().table();
    // Spark's catalog marks a table Hive calls skewed: only those may have partitions laid out by skew-layout.
    boolean skewed = Scala.list(table.unsupportedFeatures()).contains(SKEWED_FEATURE);
    List<Index> known = Boolean.TRUE.equals(ProxyMetastore.knownHmsProxy(uris)) ? recentIndexes.get(tableKey(uris, db, name)) : null;
    if (known != null && choose(known, wanted.keySet()) == null && !skewed) {
      return null; // asked a moment ago: no index for these columns, and no round trip to learn it again
    }
    try (ProxyMetastore ms = new ProxyMetastore(uris, CONNECT_TIMEOUT_MS, session.sparkContext().hadoopConfiguration())) {
      if (!ms.isHmsProxy()) {
        if (NOT_PROXY_LOGGED.compareAndSet(false, true)) {
          LOG.info("hmsproxy: the metastore at {} is not a hmsproxy: the index extension does nothing", uris);
        }
        return null;
      }
      if (known == null) {
        known = ms.indexes(db, name);
        recentIndexes.put(tableKey(uris, db, name), List.copyOf(known), ttlMs());
      }
      Index index = choose(known, wanted.keySet());
      if (index == null && !skewed) {
        return null;
      }
      List<ScanPartition> partitions = ScanPartition.chosen(session, table, fs.partitionSchema(), partitionFilters);
      if (partitions == null) {
        return null;
      }
      List<Pruning> prunings = new ArrayList<>(2);
      if (index != null) {
        prunings.add(new IndexSelection(session, ms, table, index, wanted, ttlMs()).select(partitions));
      }
      Pruning byLayout = skewed ? LayoutSelection.select(partitions, wanted) : null;
      if (byLayout != null) {
        prunings.add(byLayout);
      }
      if (prunings.isEmpty()) {
        return null;
      }
      HmsProxyIndexedFileIndex files = PrunedFiles.fileIndex(partitions, prunings, fs.partitionSchema());
      HadoopFsRelation narrowed =
          new HadoopFsRelation(
              files,
              fs.partitionSchema(),
              fs.dataSchema(),
              fs.bucketSpec(),
              IndexedFormats.describing(fs.fileFormat(), files.description(), files.rowGroups()),
              fs.options(),
              fs.sparkSession());
      LOG.info("hmsproxy: {} reads {}", table.identifier(), files.description());
      return withRelation(rel, narrowed);
    }
  }

  /** The LogicalRelation with another relation; by reflection (makeCopy), as its fields differ between Spark lines. */
  private static LogicalRelation withRelation(LogicalRelation rel, HadoopFsRelation relation) {
    Object[] args = new Object[rel.productArity()];
    for (int i = 0; i < args.length; i++) {
      Object arg = rel.productElement(i);
      args[i] = arg == rel.relation() ? relation : arg;
    }
    return (LogicalRelation) rel.makeCopy(args);
  }

  private static String tableKey(String uris, String db, String table) {
    return uris + "\0" + lower(db) + "." + lower(table);
  }

  private long ttlMs() {
    return Math.max(0, Long.parseLong(sessionConf().getConfString(INDEXES_TTL, String.valueOf(DEFAULT_INDEXES_TTL_S)).trim())) * 1000;
  }

  /** This session's settings (each session gets its own rule, so its own switch). */
  private SQLConf sessionConf() {
    return ((org.apache.spark.sql.classic.SparkSession) session).sessionState().conf();
  }

  private String metastoreUris() {
    String uris = sessionConf().getConfString(METASTORE_URIS, "");
    Configuration hadoop = session.sparkContext().hadoopConfiguration();
    if (uris.isBlank()) {
      uris = hadoop.get("hive.metastore.uris", "");
    }
    return uris.isBlank() ? null : uris.trim(); // blank: no Thrift metastore (Spark's embedded Derby)
  }

  /** The compact index with the most columns, every one of them given values (index_lookup.choose_index). */
  static Index choose(List<Index> indexes, Set<String> wanted) {
    Index best = null;
    for (Index i : indexes) {
      List<FieldSchema> cols = i.getSd() == null ? List.of() : i.getSd().getCols();
      boolean usable =
          COMPACT.equals(i.getIndexHandlerClass())
              && i.getIndexTableName() != null
              && !i.getIndexTableName().isEmpty()
              && !cols.isEmpty()
              && cols.stream().allMatch(c -> wanted.contains(lower(c.getName())));
      if (usable
          && (best == null
              || cols.size() > best.getSd().getCols().size()
              || (cols.size() == best.getSd().getCols().size() && i.getIndexName().compareTo(best.getIndexName()) > 0))) {
        best = i;
      }
    }
    return best;
  }

  static List<Expression> conjuncts(Expression e) {
    if (e instanceof And and) {
      List<Expression> all = new ArrayList<>(conjuncts(and.left()));
      all.addAll(conjuncts(and.right()));
      return all;
    }
    return List.of(e);
  }

  /** column -> its values, for `col = literal` and `col IN (literals)` on a data column of an indexable type. */
  static Map<String, List<Object>> valuesOf(Expression e, Set<String> partitionColumns) {
    AttributeReference column = null;
    List<Object> values = new ArrayList<>();
    if (e instanceof EqualTo eq) {
      if (eq.left() instanceof AttributeReference a && eq.right() instanceof Literal l) {
        column = a;
        values.add(l.value());
      } else if (eq.right() instanceof AttributeReference a && eq.left() instanceof Literal l) {
        column = a;
        values.add(l.value());
      }
    } else if (e instanceof In in && in.value() instanceof AttributeReference a) {
      for (Expression item : Scala.list(in.list())) {
        if (!(item instanceof Literal l)) {
          return Map.of();
        }
        values.add(l.value());
      }
      column = a;
    } else if (e instanceof InSet in && in.child() instanceof AttributeReference a) {
      values.addAll(Scala.list(in.hset()));
      column = a;
    }
    if (column == null || partitionColumns.contains(lower(column.name())) || !indexable(column.dataType())) {
      return Map.of();
    }
    List<Object> plain = new ArrayList<>();
    for (Object v : values) {
      if (v == null) {
        continue; // `= NULL` matches nothing; IN's NULL adds nothing
      }
      plain.add(v instanceof org.apache.spark.unsafe.types.UTF8String s ? s.toString() : v);
    }
    return Map.of(lower(column.name()), plain);
  }

  static boolean indexable(DataType type) {
    return type instanceof StringType
        || type instanceof LongType
        || type instanceof IntegerType
        || type instanceof ShortType
        || type instanceof ByteType
        || type instanceof BooleanType;
  }

  static String lower(String s) {
    return s.toLowerCase(Locale.ROOT);
  }

  static List<String> names(List<? extends Attribute> attributes) {
    return attributes.stream().map(a -> lower(a.name())).toList();
  }
}

"""PySpark helper: hmsproxy's statements from a notebook, everything else to Spark.

    from hmsproxy.clients.spark import sql
    sql(spark, "CREATE REMOTE TABLE orders WITH TBLPROPERTIES ('hive.metastore.uris'='thrift://hms:9083')")
    sql(spark, "SHOW REMOTE TABLES").show()
    sql(spark, "SELECT * FROM orders").show()   # plain Spark SQL

The statements go to the proxy Spark itself uses (spark.hadoop.hive.metastore.uris),
as Spark's user, in Spark's current database.
"""

from __future__ import annotations

from hmsproxy.clients.proxy import HmsProxyClient
from hmsproxy.ddl.parser import is_hmsproxy_statement
from hmsproxy.ddl.results import ResultSet

METASTORE_URIS_CONF = "spark.hadoop.hive.metastore.uris"


def metastore_uris(spark) -> list[str]:
    uris = spark.sparkContext.getConf().get(METASTORE_URIS_CONF) or spark.conf.get(METASTORE_URIS_CONF, None)
    if not uris:
        uris = spark.sparkContext._jsc.hadoopConfiguration().get("hive.metastore.uris")
    if not uris:
        raise RuntimeError(f"{METASTORE_URIS_CONF} is not set: Spark is not using a metastore (hmsproxy) over Thrift")
    return [u.strip() for u in uris.split(",") if u.strip()]


def execute(spark, statement: str) -> list[ResultSet]:
    """Run hmsproxy statements through Spark's metastore; the first URI that answers is used."""
    user = spark.sparkContext.sparkUser()
    database = spark.catalog.currentDatabase()
    last_error: Exception | None = None
    for uri in metastore_uris(spark):
        try:
            client = HmsProxyClient(uri, user=user)
        except Exception as e:  # not reachable: the next URI, as Hive's client does
            last_error = e
            continue
        with client:
            return client.execute(statement, database=database)
    raise ConnectionError(f"no hmsproxy reachable at {METASTORE_URIS_CONF}: {last_error}")


def sql(spark, statement: str):
    """A DataFrame: the statement's result (string columns), or spark.sql(statement)."""
    if not is_hmsproxy_statement(statement):
        return spark.sql(statement)
    from pyspark.sql.types import StringType, StructField, StructType

    results = execute(spark, statement)
    rs = results[-1] if results else ResultSet(["result"], [])
    schema = StructType([StructField(c, StringType(), True) for c in rs.columns])
    return spark.createDataFrame([tuple(r) for r in rs.rows], schema)


def read(spark, table: str, **equals):
    """The rows of `table` whose columns equal these values, reading only what can hold them.

        read(spark, "shop.events", ds="2026-11-01", country="US")

    Partitions laid out by the skew-layout job (a layout record that still matches their
    files) contribute only the files of the matching groups: a skewed value's group, the
    default group for any other value, every group agreeing with a prefix of multi-column
    skew. Other partitions are scanned and filtered. Either way the answer is exactly what
    `spark.table(table)` filtered by the same equalities returns, in its column order.
    """
    from functools import reduce

    from pyspark.sql import functions as F

    from hmsproxy.features.skew.layout import from_parameters, matches_files, select_groups, value_text
    from hmsproxy.jobs.skew_layout import join, list_files, open_metastore
    from hmsproxy.jobs.storage import HadoopStorage
    from hmsproxy.jobs.tables import data_format, parse_partition_name, split_table_name

    db, name = split_table_name(table, spark.catalog.currentDatabase())
    full = spark.table(f"`{db}`.`{name}`")
    types = {f.name.lower(): f.dataType for f in full.schema.fields}
    wanted = {k.lower(): v for k, v in equals.items()}
    unknown = sorted(set(wanted) - set(types))
    if unknown:
        raise ValueError(f"{db}.{name} has no column {', '.join(unknown)} (columns: {', '.join(full.columns)})")

    def where(frame, names):
        cond = F.lit(True)
        for k in names:
            v = wanted[k]
            cond = cond & (F.col(k).isNull() if v is None else F.col(k) == F.lit(v))
        return frame.where(cond)

    with open_metastore(",".join(metastore_uris(spark)), user=spark.sparkContext.sparkUser()) as ms:
        meta = ms.get_table(db, name)
        keys = [k.name.lower() for k in meta.partitionKeys or []]
        wanted_keys = {k: value_text(wanted[k]) for k in keys if k in wanted}
        names = [n for n in ms.partition_names(db, name) if all(parse_partition_name(n).get(k) == v for k, v in wanted_keys.items())]
        partitions = ms.partitions_by_names(db, name, names) if keys else []
    data_equals = {k: value_text(v) for k, v in wanted.items() if k not in keys}
    try:
        fmt = data_format(meta)
    except Exception:  # neither Parquet nor ORC: the layout job never wrote it
        partitions = []
    storage = HadoopStorage(spark)
    pruned, scanned = [], []
    for p in partitions:
        record = from_parameters(p.parameters)
        if record is not None and p.sd.location and matches_files(record, list_files(storage, p.sd.location)):
            files = [join(p.sd.location, f.name) for g in select_groups(record, data_equals) for f in g.files]
            pruned.append((p, files))
        else:
            scanned.append(p)

    frames = []
    if not pruned:
        frames.append(where(full, wanted))
    elif scanned:
        # The partitions without a usable layout, scanned as Spark would.
        def is_partition(p):
            return reduce(lambda a, b: a & b, [F.col(k) == F.lit(v).cast(types[k]) for k, v in zip(keys, p.values)])

        frames.append(where(full.where(reduce(lambda a, b: a | b, map(is_partition, scanned))), wanted))
    data_schema = full.select(*[c for c in full.columns if c.lower() not in keys]).schema
    for p, files in pruned:
        if not files:
            continue
        frame = spark.read.format(fmt).schema(data_schema).load(files)
        for k, v in zip(keys, p.values):
            frame = frame.withColumn(k, F.lit(v).cast(types[k]))
        frames.append(where(frame.select(*full.columns), list(data_equals)))
    if not frames:
        return full.where(F.lit(False))
    return reduce(lambda a, b: a.unionByName(b), frames)


#: What a SparkSession needs to read tables laid out in subdirectories (list bucketing STORED AS
#: DIRECTORIES): Hive's reader instead of Spark's own Parquet/ORC one, and recursive listing.
SUBDIRECTORY_SQL_CONF = {"spark.sql.hive.convertMetastoreParquet": "false", "spark.sql.hive.convertMetastoreOrc": "false"}
SUBDIRECTORY_HADOOP_CONF = {"mapreduce.input.fileinputformat.input.dir.recursive": "true", "hive.mapred.supports.subdirectories": "true"}


def read_subdirectories(spark, enabled: bool = True) -> None:
    """Make `spark` read every row of tables laid out in subdirectories (or undo it: enabled=False).

    A default SparkSession reads no file below a partition directory; these settings make it
    read them all, at the cost of Spark's vectorized Parquet/ORC readers for Hive tables.
    """
    hadoop = spark.sparkContext._jsc.hadoopConfiguration()
    for key, value in SUBDIRECTORY_SQL_CONF.items():
        spark.conf.set(key, value if enabled else "true")
    for key, value in SUBDIRECTORY_HADOOP_CONF.items():
        hadoop.set(key, value if enabled else "false")

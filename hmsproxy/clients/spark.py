"""PySpark helper: hmsproxy's statements from a notebook, everything else to Spark.

    from hmsproxy.clients.spark import sql
    sql(spark, "CREATE REMOTE TABLE orders WITH TBLPROPERTIES ('hive.metastore.uris'='thrift://hms:9083')")
    sql(spark, "SHOW REMOTE TABLES").show()
    sql(spark, "SELECT * FROM orders").show()   # plain Spark SQL

The statements go to the proxy Spark itself uses (spark.hadoop.hive.metastore.uris),
as Spark's user, in Spark's current database.
"""

from __future__ import annotations

from hmsproxy.clients.proxy import HmsProxyClient, HmsProxyError
from hmsproxy.ddl.results import ResultSet
from hmsproxy.ddl.statements import NOT_HMSPROXY_OBJECT
from hmsproxy.features import is_hmsproxy_statement
from hmsproxy.jobs.spark_extension import index_extension_conf, index_extension_jar, with_index_extension  # noqa: F401 (the helper's API)
from hmsproxy.jobs.spark_sessions import hadoop_setting, is_connect, spark_user

METASTORE_URIS_CONF = "spark.hadoop.hive.metastore.uris"


def metastore_uris(spark) -> list[str]:
    uris = hadoop_setting(spark, "hive.metastore.uris")
    if not uris:
        raise RuntimeError(f"{METASTORE_URIS_CONF} is not set: Spark is not using a metastore (hmsproxy) over Thrift")
    return [u.strip() for u in uris.split(",") if u.strip()]


def metastore_principal(spark) -> str | None:
    """The Kerberos principal of the session's metastore when the session speaks SASL to it
    (hive.metastore.sasl.enabled): this process's own connections then authenticate as the caller's
    ticket cache (kinit / KRB5CCNAME), as Spark's do after kinit. None: plain Thrift."""
    if (hadoop_setting(spark, "hive.metastore.sasl.enabled") or "").strip().lower() != "true":
        return None
    return hadoop_setting(spark, "hive.metastore.kerberos.principal")


def execute(spark, statement: str) -> list[ResultSet]:
    """Run hmsproxy statements through Spark's metastore; the first URI that answers is used."""
    user = spark_user(spark)
    database = spark.catalog.currentDatabase()
    principal = metastore_principal(spark)
    last_error: Exception | None = None
    for uri in metastore_uris(spark):
        try:
            client = HmsProxyClient(uri, user=user, sasl_principal=principal)
        except Exception as e:  # not reachable: the next URI, as Hive's client does
            last_error = e
            continue
        with client:
            return client.execute(statement, database=database, spark=spark)
    raise ConnectionError(f"no hmsproxy reachable at {METASTORE_URIS_CONF}: {last_error}")


def sql(spark, statement: str):
    """A DataFrame: the statement's result (string columns), or spark.sql(statement)."""
    if not is_hmsproxy_statement(statement):
        return spark.sql(statement)
    from pyspark.sql.types import StringType, StructField, StructType

    from hmsproxy.jobs.local_frames import frame_of

    try:
        results = execute(spark, statement)
    except HmsProxyError as e:
        if NOT_HMSPROXY_OBJECT in str(e):  # e.g. ADD PARTITION on an ordinary table: Spark's own statement
            return spark.sql(statement)
        raise
    rs = results[-1] if results else ResultSet(["result"], [])
    schema = StructType([StructField(c, StringType(), True) for c in rs.columns])
    return frame_of(spark, [tuple(r) for r in rs.rows], schema)


def read(spark, table: str, **equals):
    """The rows of `table` whose columns equal these values, reading only what can hold them.

        read(spark, "shop.events", ds="2026-11-01", country="US")

    Partitions laid out by the skew-layout job (a layout record that still matches their
    files) contribute only the files of the matching groups: a skewed value's group, the
    default group for any other value, every group agreeing with a prefix of multi-column
    skew. Other partitions are scanned and filtered. Either way the answer is exactly what
    `spark.table(table)` filtered by the same equalities returns, in its column order.
    """
    from hmsproxy.clients.pruned_read import read as pruned_read

    return pruned_read(spark, table, **equals)


def lookup(spark, table: str, **equals):
    """The rows of `table` whose columns have these values (a list, tuple or set: any of them),
    reading only what the table's compact index lists where it is fresh.

        lookup(spark, "shop.events", user_id=42, ds="2026-11-01")
        lookup(spark, "shop.events", user_id=[42, 43])

    An index is used when it covers only columns given here. Partitions whose index partition
    was built from exactly the files they hold now read only the files (and, through Parquet
    or ORC pushdown, the row groups) the index names; stale, never built or unindexed
    partitions are scanned. The answer is `spark.table(table)` filtered by the same values.
    """
    from hmsproxy.clients.indexed_read import lookup as indexed_lookup

    return indexed_lookup(spark, table, **equals)


#: What a SparkSession needs to read tables laid out in subdirectories (list bucketing STORED AS
#: DIRECTORIES): Hive's reader instead of Spark's own Parquet/ORC one, and recursive listing.
SUBDIRECTORY_SQL_CONF = {"spark.sql.hive.convertMetastoreParquet": "false", "spark.sql.hive.convertMetastoreOrc": "false"}
SUBDIRECTORY_HADOOP_CONF = {"mapreduce.input.fileinputformat.input.dir.recursive": "true", "hive.mapred.supports.subdirectories": "true"}


def read_subdirectories(spark, enabled: bool = True) -> None:
    """Make `spark` read every row of tables laid out in subdirectories (or undo it: enabled=False).

    A default SparkSession reads no file below a partition directory; these settings make it
    read them all, at the cost of Spark's vectorized Parquet/ORC readers for Hive tables.
    """
    for key, value in SUBDIRECTORY_SQL_CONF.items():
        spark.conf.set(key, value if enabled else "true")
    if is_connect(spark):
        # No context to reach: the session's own conf, which Spark copies into the Hadoop
        # configuration of every scan it plans (SessionState.newHadoopConf).
        for key, value in SUBDIRECTORY_HADOOP_CONF.items():
            spark.conf.set(key, value if enabled else "false")
        return
    hadoop = spark.sparkContext._jsc.hadoopConfiguration()
    for key, value in SUBDIRECTORY_HADOOP_CONF.items():
        hadoop.set(key, value if enabled else "false")

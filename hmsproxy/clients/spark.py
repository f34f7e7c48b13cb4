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

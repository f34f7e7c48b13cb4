"""What the helpers and the jobs ask of a SparkSession, answered for a classic session and for a
Spark Connect one alike.

A Connect session is a client of a Spark server: it has no SparkContext, no JVM in this process
and no RDDs; its settings are the server session's, read with `spark.conf`.
"""

from __future__ import annotations

from typing import Any

from hmsproxy.files.hadoop_conf import is_connect

__all__ = ["is_connect", "spark_conf", "hadoop_setting", "spark_user"]


def spark_conf(spark: Any, key: str) -> str | None:
    """A setting the session started with or was given: the session's conf (a classic session's
    also falls back to its context's SparkConf, where spark.hadoop.* keys of spark-submit live)."""
    value = spark.conf.get(key, None)
    if value is None and not is_connect(spark):
        value = spark.sparkContext.getConf().get(key, None)
    return value or None


def hadoop_setting(spark: Any, key: str) -> str | None:
    """A Hadoop setting as the session has it: spark.hadoop.KEY, else (classic only) the context's
    Hadoop configuration, which also holds core-site.xml and hive-site.xml."""
    value = spark_conf(spark, f"spark.hadoop.{key}")
    if value is None and not is_connect(spark):
        value = spark.sparkContext._jsc.hadoopConfiguration().get(key)
    return value or None


def spark_user(spark: Any) -> str:
    """The user Spark's own metastore calls are made as. On Connect, the session's user (the one the
    client named, as the server's SQL sees it): the server's process may run as another."""
    if is_connect(spark):
        return spark.sql("SELECT current_user()").first()[0]
    return spark.sparkContext.sparkUser()

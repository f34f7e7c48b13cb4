"""The SparkSession a job runs on, wired to the proxy.

From the command line there is no Spark yet: build a local one whose Hive
metastore is the proxy. Under spark-submit (or in a notebook, or a test process)
a session may already exist, and a process can only have one whose metastore is
fixed at start, so that one is used; if it talks to another metastore than the
job was told to, the job stops rather than write through one metastore and
swap through another.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from hmsproxy.jobs.errors import JobError, UsageError, one_line
from hmsproxy.jobs.masters import LOCAL_MASTER, MASTER_CONF, check_master_answers, check_remote_answers
from hmsproxy.jobs.spark_sessions import hadoop_setting

#: The local development proxy (`hmsproxy dev up`).
DEFAULT_URI = "thrift://127.0.0.1:9083"
METASTORE_URIS_CONF = "spark.hadoop.hive.metastore.uris"
DRIVER_JAVA_OPTIONS = "spark.driver.extraJavaOptions"


def kerberized_conf(principal: str, conf: dict[str, str]) -> dict[str, str]:
    """`conf` with what a session started here needs for a Kerberized proxy port, as for a Kerberized
    metastore: Hive's SASL switch and the proxy's principal. Its Kerberos credentials are the caller's
    ticket cache (KRB5CCNAME), as the job's own connections': Java's GSSAPI may take them from the cache
    itself (useSubjectCredsOnly=false; Hadoop's login holds none unless a core-site.xml turns its
    Kerberos on, which spark.hadoop.* does not reach), and the JVM reads the realm's configuration the
    Python side reads (KRB5_CONFIG; Java reads only java.security.krb5.conf). Settings in `conf` win."""
    wanted = {
        "spark.hadoop.hive.metastore.sasl.enabled": "true",
        "spark.hadoop.hive.metastore.kerberos.principal": principal,
    }
    java = conf.get(DRIVER_JAVA_OPTIONS, "")
    options = [] if "useSubjectCredsOnly" in java else ["-Djavax.security.auth.useSubjectCredsOnly=false"]
    krb5_conf = os.environ.get("KRB5_CONFIG", "").split(":")[0]
    if krb5_conf and "java.security.krb5.conf" not in java:
        options.append(f"-Djava.security.krb5.conf={krb5_conf}")
    if options:
        wanted[DRIVER_JAVA_OPTIONS] = " ".join([java, *options]).strip()
    return {**conf, **{k: v for k, v in wanted.items() if k not in conf or k == DRIVER_JAVA_OPTIONS}}


def under_spark_submit() -> bool:
    """spark-submit starts the JVM first and tells the Python driver where it is."""
    return bool(os.environ.get("PYSPARK_GATEWAY_PORT"))


def bound_uri(spark: Any) -> str | None:
    """The metastore URI(s) a session's Hive client uses."""
    return hadoop_setting(spark, "hive.metastore.uris")


def active_session() -> Any | None:
    """The process's session if Spark is already running in it."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    session = SparkSession.getActiveSession()
    if session is None and SparkContext._active_spark_context is not None:
        session = SparkSession.builder.getOrCreate()  # a context without a session on this thread
    return session


def check_same_metastore(spark: Any, uri: str | None) -> None:
    if uri is None:
        return
    bound = bound_uri(spark)
    if bound is not None and _uris(bound) != _uris(uri):
        raise UsageError(
            f"--uri {uri} but this process's SparkSession uses metastore {bound}; "
            "a process has one SparkSession: leave out --uri or run the job in its own process"
        )


def submitted_master() -> str | None:
    """The master spark-submit was given (its JVM holds the application's settings)."""
    from pyspark import SparkConf, SparkContext

    SparkContext._ensure_initialized()  # joins spark-submit's JVM gateway; starts no context
    return SparkConf().get(MASTER_CONF, None)


def build_session(
    uri: str | None,
    conf: dict[str, str] | None = None,
    app_name: str = "hmsproxy-job",
    master: str | None = None,
    remote: str | None = None,
) -> tuple[Any, bool]:
    """(session, whether this call started it). `uri` None: the session's own, else the dev proxy.
    `master` None: spark.master of `conf`, else spark-submit's, else this process (local[*]).
    `remote` (sc://HOST:PORT, or SPARK_REMOTE): a Spark Connect session instead, whose server
    fixed its metastore and settings when it started."""
    session = active_session()
    if session is not None:
        check_same_metastore(session, uri)
        return session, False
    remote = remote or os.environ.get("SPARK_REMOTE") or None
    if remote:
        if master:
            raise UsageError(f"--master {master} and --remote {remote}: a Spark Connect server has its own master; give one of them")
        return connect_session(remote, uri), True

    from pyspark.sql import SparkSession

    master = master or (conf or {}).get(MASTER_CONF) or (submitted_master() if under_spark_submit() else LOCAL_MASTER)
    if master:
        check_master_answers(master)  # before the JVM: a dead standalone master is a minute of retries
    builder = SparkSession.builder.appName(app_name)
    if master:
        builder = builder.master(master)
    if not under_spark_submit():
        # The job draws its own per-partition progress; Spark's stage bar would fight it for the line.
        builder = builder.config("spark.ui.showConsoleProgress", "false")
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    builder = _with_index_extension(builder)
    if uri is not None:
        builder = builder.config(METASTORE_URIS_CONF, uri)
    elif not under_spark_submit() and METASTORE_URIS_CONF not in (conf or {}):
        builder = builder.config(METASTORE_URIS_CONF, DEFAULT_URI)
    # py4j logs its gateway connections at INFO (one when the session stops, say): a session started
    # here for a job or for `hmsproxy sql`'s index build says only what the job or statement says.
    logging.getLogger("py4j").setLevel(logging.WARNING)
    spark = builder.enableHiveSupport().getOrCreate()
    if not under_spark_submit():
        spark.sparkContext.setLogLevel("WARN")
    if bound_uri(spark) is None:
        spark.stop()
        raise UsageError(f"no metastore: give --uri or --conf {METASTORE_URIS_CONF}=thrift://host:port")
    return spark, True


def connect_session(remote: str, uri: str | None) -> Any:
    """A Spark Connect session on `remote`. Its metastore is the server's: a different --uri is a usage
    error; when the server does not say (hive-site.xml rather than spark.hadoop.*), --uri is needed."""
    from pyspark.sql import SparkSession

    check_remote_answers(remote)  # a refused client would retry with back-off for minutes
    try:
        spark = SparkSession.builder.remote(remote).getOrCreate()
        bound = bound_uri(spark)  # the first call that reaches the server
    except Exception as e:
        raise JobError(f"Spark Connect server {remote}: {one_line(e)}") from e
    if bound is None and uri is None:
        spark.stop()
        raise UsageError(f"the Spark Connect server {remote} names no metastore ({METASTORE_URIS_CONF}): give --uri")
    try:
        check_same_metastore(spark, uri)
    except UsageError:
        spark.stop()
        raise
    return spark


def _uris(value: str) -> list[str]:
    return [u.strip() for u in value.split(",") if u.strip()]


def _with_index_extension(builder):
    """The job's session with hmsproxy's Spark extension where it is built (its own SQL then uses
    fresh indexes); without it where it is not: a job never fails for want of it."""
    from hmsproxy.jobs.spark_extension import with_index_extension

    try:
        return with_index_extension(builder)
    except FileNotFoundError:
        return builder

"""A local SparkSession with Hive support, pointed at a given metastore.

ONE SPARKSESSION PER PROCESS: pyspark starts a single driver JVM per Python
process and the Hive settings (``hive.metastore.uris``, the warehouse dir,
driver memory and JVM options) are fixed when that JVM and its Hive client
start. ``SparkSession.builder.getOrCreate()`` after that silently hands back
the existing session with its *old* metastore. So a test process gets one
session, shared by every test that needs Spark (a session-scoped fixture), and
:func:`make_spark` refuses to "create" a second one pointed elsewhere. Tests
that need Spark against a different metastore run it in a subprocess (see
``tests/integration/test_devstack.py``).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

METASTORE_URIS_CONF = "spark.hadoop.hive.metastore.uris"


def make_spark(
    metastore_uri: str,
    warehouse_dir: Path,
    app_name: str = "hmsproxy-tests",
    *,
    driver_memory: str = "1g",
    extra_conf: dict[str, str] | None = None,
):
    """Return the process's local[2] SparkSession using ``metastore_uri`` as its metastore.

    ``warehouse_dir`` is created if needed. Raises RuntimeError if this process
    already has a SparkContext bound to a different metastore.
    """
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    active = SparkContext._active_spark_context
    if active is not None:
        bound = active.getConf().get(METASTORE_URIS_CONF)
        if bound != metastore_uri:
            raise RuntimeError(
                f"this process already has a SparkSession bound to metastore {bound!r}; "
                f"only one SparkSession per process can exist, cannot switch to {metastore_uri!r}"
            )
        return SparkSession.builder.getOrCreate()

    warehouse_dir = Path(warehouse_dir).resolve()
    warehouse_dir.mkdir(parents=True, exist_ok=True)
    # Spark's Hive client may still boot an embedded Derby (e.g. for its own
    # session state); keep derby.log / metastore_db out of the working directory.
    scratch = Path(tempfile.mkdtemp(prefix="hmsproxy-spark-"))
    (scratch / "derby").mkdir()
    (scratch / "local").mkdir()
    java_opts = " ".join(
        [
            f"-Dderby.system.home={scratch / 'derby'}",
            f"-Dderby.stream.error.file={scratch / 'derby' / 'derby.log'}",
            "-Djava.net.preferIPv4Stack=true",
        ]
    )

    builder = (
        SparkSession.builder.master("local[2]")
        .appName(app_name)
        .config("spark.sql.catalogImplementation", "hive")
        .config(METASTORE_URIS_CONF, metastore_uri)
        .config("spark.sql.warehouse.dir", warehouse_dir.as_uri())
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        # Only honoured because the driver JVM is not started yet (see above).
        .config("spark.driver.memory", driver_memory)
        .config("spark.driver.extraJavaOptions", java_opts)
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.local.dir", str(scratch / "local"))
        .config("spark.pyspark.python", sys.executable)
        .config("spark.sql.session.timeZone", "UTC")
        # Fail a test in reasonable time instead of retrying a dead metastore for minutes.
        .config("spark.hadoop.hive.metastore.client.socket.timeout", "120s")
        .config("spark.hadoop.hive.metastore.failure.retries", "1")
        .config("spark.hadoop.hive.metastore.client.connect.retry.delay", "1s")
    )
    builder = _with_index_extension(builder)
    for key, value in (extra_conf or {}).items():
        builder = builder.config(key, value)
    spark = builder.enableHiveSupport().getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark


def _with_index_extension(builder):
    """The index extension in every test session where it is built, switched off: the one JVM is
    shared by every Spark test, and tests/spark/test_index_extension_spark.py turns it on in its own
    sessions (spark.newSession(), ENABLED_CONF set)."""
    from hmsproxy.jobs.spark_extension import ENABLED_CONF, with_index_extension

    try:
        builder = with_index_extension(builder)
    except FileNotFoundError:
        return builder  # not built (no mvn): the extension's tests say so
    return builder.config(ENABLED_CONF, "false")

"""Iceberg's Spark runtime for pyspark's Spark, fetched with Maven once into the cache like the Hive jars.

Iceberg publishes one runtime jar per Spark minor version (``iceberg-spark-runtime-<minor>_2.13``),
each from the Iceberg releases built for it. Each minor we can serve has a pom
``poms/iceberg-spark-runtime-<minor>.xml``; a Spark with none (4.2 and 4.3 have no Iceberg runtime
on Maven Central yet) is a clear FetchError naming it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from hmsproxy.dev import maven

Say = Callable[[str], None] | None

#: The Iceberg release whose runtime each Spark minor gets (the pom pins the same).
ICEBERG_FOR_SPARK = {"4.0": "1.10.0", "4.1": "1.11.0"}


def spark_minor(version: str | None = None) -> str:
    """ "4.0" of pyspark's "4.0.5" (or of `version`)."""
    if version is None:
        import pyspark

        version = pyspark.__version__
    return ".".join(version.split(".")[:2])


def has_runtime(version: str | None = None) -> bool:
    return spark_minor(version) in ICEBERG_FOR_SPARK


def runtime_jar(say: Say = None, spark_version: str | None = None) -> Path:
    """The runtime jar for `spark_version` (default pyspark's), fetched on first use."""
    minor = spark_minor(spark_version)
    iceberg = ICEBERG_FOR_SPARK.get(minor)
    if iceberg is None:
        known = ", ".join(sorted(ICEBERG_FOR_SPARK))
        raise maven.FetchError(f"no Iceberg Spark runtime for Spark {minor} (there is one for Spark {known})")
    name = f"iceberg-spark-runtime-{minor}"
    home = maven.fetch_pom(name, ("dependency:copy@jar",), label=f"Iceberg {iceberg} Spark {minor} runtime", say=say)
    return home / "lib" / f"iceberg-spark-runtime-{minor}_2.13-{iceberg}.jar"

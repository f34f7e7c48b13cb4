"""What a failed Spark SQL statement carried from the metastore.

Spark reports metastore failures as `pyspark.errors.AnalysisException`; the Hive
exception the proxy declared (MetaException, ...) is in the JVM cause chain behind it.
"""

from __future__ import annotations

#: The declared exception the proxy's refusals and unavailable backends arrive as.
META_EXCEPTION = "org.apache.hadoop.hive.metastore.api.MetaException"


def jvm_causes(error: BaseException) -> list[str]:
    """Class names of the JVM exception chain behind a pyspark error, outermost first."""
    names: list[str] = []
    # pyspark keeps the Java throwable as `_origin` and has no public accessor for its chain.
    throwable = getattr(error, "_origin", None)
    while throwable is not None and len(names) < 50:
        names.append(throwable.getClass().getName())
        throwable = throwable.getCause()
    return names

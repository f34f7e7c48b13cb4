"""DataFrames of a few rows the driver holds, built as literals in the query plan.

`spark.createDataFrame(rows)` on a classic session ships the rows as a Python RDD, so reading the
frame starts a Python worker on every executor (the cluster's Python then needs hmsproxy's
interpreter, and an executor without it fails). Literals need no Python outside the driver and
work the same on Spark Connect, whose sessions have no RDDs at all.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any


def frame_of(spark: Any, rows: Iterable[Sequence[Any]], schema: Any) -> Any:
    """A DataFrame of `rows` (tuples in `schema`'s field order); `schema` a StructType or a DDL string."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import DataType

    if isinstance(schema, str):
        schema = DataType.fromDDL(schema)
    fields = list(schema.fields)
    rows = list(rows)
    if not rows:  # range(0) runs no task at all, Python or other
        return spark.range(0).select(*[F.lit(None).cast(f.dataType).alias(f.name) for f in fields])
    structs = [F.struct(*[F.lit(value).cast(f.dataType).alias(f.name) for value, f in zip(row, fields)]) for row in rows]
    return spark.range(1).select(F.inline(F.array(*structs)))

"""Index-driven lookups in Spark (`hmsproxy.clients.spark.lookup`).

The plan is index_lookup's: fresh partitions contribute only the files their index lists
(Parquet/ORC pushdown of the same condition then skips the other row groups); the others are
scanned as Spark would scan them. The answer equals `spark.table(t)` filtered by the same values.
"""

from __future__ import annotations

from functools import reduce
from typing import Any

from hmsproxy.jobs.local_frames import frame_of
from hmsproxy.jobs.spark_sessions import spark_user


def lookup(spark, table: str, **equals) -> Any:
    from pyspark.sql import functions as F

    from hmsproxy.clients.index_lookup import as_values, plan_lookup
    from hmsproxy.clients.kept_connections import kept
    from hmsproxy.clients.pruned_read import files_frame, spark_schema
    from hmsproxy.clients.spark import metastore_principal, metastore_uris
    from hmsproxy.files import hadoop_conf
    from hmsproxy.jobs.tables import split_table_name

    hadoop_conf.use_spark(spark)  # the plan lists files in this driver, with the session's S3A/HDFS keys

    db, name = split_table_name(table, spark.catalog.currentDatabase())
    uris, user = ",".join(metastore_uris(spark)), spark_user(spark)
    plan = plan_lookup(kept(uris, user, metastore_principal(spark)), db, name, equals)
    schema = spark_schema(spark, plan.table)
    types = {f.name.lower(): f.dataType for f in schema.fields}
    wanted = {k.lower(): as_values(v) for k, v in equals.items()}

    def where(frame):
        return frame.where(reduce(lambda a, b: a & b, [F.col(k).isin(v) for k, v in wanted.items()]))

    listed = [r for r in plan.reads if r.files and all(g is not None for g in r.files.values())]
    scanned = [r for r in plan.reads if any(g is None for g in r.files.values())]
    frames = [where(files_frame(spark, plan.format, schema, plan.keys, r.values, list(r.files))) for r in listed]
    if scanned:
        full = spark.table(f"`{db}`.`{name}`")
        if plan.keys and len(scanned) < len(plan.reads):  # only the partitions the index can't answer for
            full = full.where(reduce(lambda a, b: a | b, [_is_partition(r.values, types) for r in scanned]))
        frames.append(where(full))
    if not frames:
        return frame_of(spark, [], schema)
    return reduce(lambda a, b: a.unionByName(b), frames)


def _is_partition(values: dict[str, str], types: dict) -> Any:
    from pyspark.sql import functions as F

    return reduce(lambda a, b: a & b, [F.col(k) == F.lit(v).cast(types[k]) for k, v in values.items()])

"""Pruned reads of tables laid out by the skew-layout job (`hmsproxy.clients.spark.read`).

A read costs what it reads plus a fixed part: the metastore calls, the listing that checks
a layout is still the one recorded, the DataFrame's planning. On a heavy value the fixed
part is most of the time (docs/benchmark.md), so it is kept small: the metastore connection
is kept between reads (clients/kept_connections.py), and when every partition asked for is
laid out the table's schema comes from its metastore record instead of a Spark catalog lookup.
"""

from __future__ import annotations

import json
from functools import reduce
from typing import Any

from hmsproxy.clients.kept_connections import deferred, kept
from hmsproxy.features.skew.layout import from_parameters, matches_files, select_groups, value_text
from hmsproxy.jobs.local_frames import frame_of
from hmsproxy.jobs.spark_sessions import spark_user


def spark_schema(spark, meta) -> Any:
    """The table's schema as Spark shows it: Spark's own record when it wrote one, else Hive's columns."""
    from pyspark.sql.types import StructType

    params = meta.parameters or {}
    parts = params.get("spark.sql.sources.schema.numParts")
    text = "".join(params[f"spark.sql.sources.schema.part.{i}"] for i in range(int(parts))) if parts else None
    text = text or params.get("spark.sql.sources.schema")
    if text:
        return StructType.fromJson(json.loads(text))
    columns = [*(meta.sd.cols or []), *(meta.partitionKeys or [])]
    ddl = ", ".join(f"`{c.name}` {c.type}" for c in columns)
    return spark.createDataFrame([], ddl).schema  # Spark's own parser reads Hive's type names


def read(spark, table: str, **equals):
    """See hmsproxy.clients.spark.read."""
    from pyspark.sql import functions as F

    from hmsproxy.clients.spark import metastore_principal, metastore_uris
    from hmsproxy.files.storage import storage_for
    from hmsproxy.jobs.skew_layout import join, list_files
    from hmsproxy.jobs.tables import data_format, split_table_name

    db, name = split_table_name(table, spark.catalog.currentDatabase())
    wanted = {k.lower(): v for k, v in equals.items()}

    texts = {k: [value_text(v)] for k, v in wanted.items()}  # None (a null) matches no partition name
    # The table, and its partitions' names then the partitions asked for, at the same time, each on
    # a connection of its own: two round trips' time, not three.
    connections = kept(",".join(metastore_uris(spark)), spark_user(spark), metastore_principal(spark))
    meta, pieces = connections.together(
        lambda ms: ms.get_table(db, name), lambda ms: deferred(lambda: ms.partitions_matching(db, name, texts))
    )
    keys = [k.name.lower() for k in meta.partitionKeys or []]
    # An unpartitioned table is laid out as one piece, its record on the table; without its
    # partitions (their calls failed) a partitioned one is read by Spark's own scan.
    pieces = ([] if isinstance(pieces, Exception) else pieces) if keys else [meta]
    schema = spark_schema(spark, meta)
    types = {f.name.lower(): f.dataType for f in schema.fields}
    unknown = sorted(set(wanted) - set(types))
    if unknown:
        raise ValueError(f"{db}.{name} has no column {', '.join(unknown)} (columns: {', '.join(schema.fieldNames())})")
    data_equals = {k: value_text(v) for k, v in wanted.items() if k not in keys}
    try:
        fmt = data_format(meta)
    except Exception:  # neither Parquet nor ORC: the layout job never wrote it
        pieces = []
    storage = storage_for(spark, [p.sd.location for p in pieces if p.sd.location])
    pruned, scanned = [], []
    for piece in pieces:
        record = from_parameters(piece.parameters)
        if record is not None and piece.sd.location and matches_files(record, list_files(storage, piece.sd.location)):
            pruned.append((piece, [join(piece.sd.location, f.name) for g in select_groups(record, data_equals) for f in g.files]))
        else:
            scanned.append(piece)

    def where(frame, names):
        conditions = [F.col(k).isNull() if wanted[k] is None else F.col(k) == F.lit(wanted[k]) for k in names]
        return frame.where(reduce(lambda a, b: a & b, conditions)) if conditions else frame

    frames = []
    if scanned or not pruned:
        full = spark.table(f"`{db}`.`{name}`")
        if pruned:  # only the partitions without a usable layout, scanned as Spark would
            frames.append(where(full.where(reduce(lambda a, b: a | b, [is_partition(p, keys, types) for p in scanned])), wanted))
        else:
            return where(full, wanted)
    for piece, files in pruned:
        if files:
            partition_values = dict(zip(keys, getattr(piece, "values", None) or ()))  # a Table has none
            frames.append(where(files_frame(spark, fmt, schema, keys, partition_values, files), list(data_equals)))
    if not frames:
        return frame_of(spark, [], schema)
    return reduce(lambda a, b: a.unionByName(b), frames)


def files_frame(spark, fmt: str, schema, keys: list[str], partition_values: dict[str, str], files: list[str]) -> Any:
    """These files of one partition as a frame of the table's schema (its partition columns from `partition_values`)."""
    from pyspark.sql import functions as F

    data_schema = type(schema)([f for f in schema.fields if f.name.lower() not in keys])
    frame = spark.read.format(fmt).schema(data_schema).load(files)
    added = {f.name: F.lit(partition_values[f.name.lower()]).cast(f.dataType) for f in schema.fields if f.name.lower() in partition_values}
    if [f.name for f in schema.fields] == [*data_schema.fieldNames(), *added]:  # Hive's order: partition columns last
        return frame.withColumns(added) if added else frame  # a few JVM calls, not a few per column
    columns = [added[f.name].alias(f.name) if f.name in added else F.col(f.name) for f in schema.fields]
    return frame.select(*columns)


def is_partition(partition, keys: list[str], types: dict) -> Any:
    from pyspark.sql import functions as F

    return reduce(lambda a, b: a & b, [F.col(k) == F.lit(v).cast(types[k]) for k, v in zip(keys, partition.values)])

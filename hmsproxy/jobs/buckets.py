"""Compacting a Hive-bucketed table: one file per bucket, each row in the bucket Hive's function gives it.

A bucketed table's meaning lives in its file set: Hive's bucket map joins and TABLESAMPLE take a
partition's files in name order as its buckets, and hmsproxy's streaming writer names each file by
its bucket (`000003_stream-…`), adding one per bucket per transaction. Compaction rewrites them as
one file per bucket that has rows, named `<bucket:06d>_0.<ext>` as Hive names its own, the rows
placed by the bucket function the streaming writer uses (hmsproxy.streaming.buckets: Hive's, per
`bucketing_version`), not by the files they came from.

Refused: tables Spark bucketed (Spark's Murmur3 layout, told by `spark.sql.sources.schema.numBucketCols`)
and sorted ones (SORTED BY: the rows would have to be sorted within each bucket too).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hmsproxy.files.storage import Storage, data_files, join
from hmsproxy.jobs.errors import JobError

#: The column the rows' bucket numbers are kept in while writing (a partition column, so never in a file).
BUCKET = "_hmsproxy_bucket"
#: Where the per-bucket directories are written, inside the new location (hidden from readers).
STAGING = "_hmsproxy_buckets"


@dataclass(frozen=True)
class Buckets:
    columns: tuple[str, ...]
    hive_types: tuple[str, ...]
    count: int
    version: int


def refuse_unbucketable(table) -> None:
    name = f"{table.dbName}.{table.tableName}"
    params = {k.lower(): v for k, v in (table.parameters or {}).items()}
    if params.get("spark.sql.sources.schema.numbucketcols"):
        raise JobError(f"{name} is bucketed by Spark (its own hash, not Hive's); rewriting it would break its buckets")
    if table.sd.sortCols:
        raise JobError(f"{name} is bucketed and sorted (SORTED BY); it is not rewritten by this job")
    if not table.sd.bucketCols or (table.sd.numBuckets or 0) <= 0:
        raise JobError(f"{name} is bucketed but lacks its bucket columns or its count; it is not rewritten")


def buckets_of(table) -> Buckets | None:
    """The table's Hive bucketing, or None when it has none."""
    sd = table.sd
    if not sd.bucketCols or (sd.numBuckets or 0) <= 0:
        return None
    types = {c.name.lower(): c.type.lower() for c in sd.cols or []}
    columns = tuple(c.lower() for c in sd.bucketCols)
    missing = [c for c in columns if c not in types]
    if missing:
        raise JobError(f"bucket column(s) {', '.join(missing)} are not columns of {table.dbName}.{table.tableName}")
    version = int((table.parameters or {}).get("bucketing_version", "1") or 1)
    return Buckets(columns, tuple(types[c] for c in columns), int(sd.numBuckets), version)


def one_file_per_bucket(files) -> bool:
    """Whether these data files are already one per bucket (names starting with distinct bucket numbers)."""
    numbers = [f.name[:6] for f in files]
    return all(n.isdigit() for n in numbers) and len(set(numbers)) == len(numbers)


def with_buckets(df: Any, buckets: Buckets) -> Any:
    """`df` plus BUCKET, each row's bucket number by Hive's function."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import IntegerType

    from hmsproxy.streaming.buckets import bucketer

    bucket_of = bucketer(buckets.hive_types, buckets.count, buckets.version)
    numbered = F.udf(lambda *values: bucket_of(list(values)), IntegerType())
    by_name = {c.lower(): c for c in df.columns}
    return df.withColumn(BUCKET, numbered(*[F.col(by_name[c]) for c in buckets.columns]))


def write_buckets(df: Any, fmt: str, location: str, storage: Storage, buckets: Buckets) -> None:
    """One file per bucket with rows, at `location/<bucket:06d>_0.<fmt>`."""
    staging = join(location, STAGING)
    frame = with_buckets(df, buckets).repartition(buckets.count, BUCKET)  # a bucket's rows in one task: one file
    writer = frame.write.format(fmt).mode("error").partitionBy(BUCKET)
    writer.option("mapreduce.fileoutputcommitter.marksuccessfuljobs", "false").save(staging)
    for directory in storage.list(staging):
        if not directory.is_dir or not directory.name.startswith(f"{BUCKET}="):
            continue
        bucket = int(directory.name.split("=", 1)[1])
        files = data_files(storage.list(directory.path))
        if len(files) != 1:
            raise JobError(f"bucket {bucket} came out as {len(files)} files, not one; not swapped")
        storage.move(files[0].path, join(location, f"{bucket:06d}_0.{fmt}"))
    storage.delete(staging)

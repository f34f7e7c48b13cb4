"""The table (and partition) a stream writes into: what it is, whether it can be streamed into, where its files go.

Readers of these tables are Spark and Hive reading plain files, so the target must be an ordinary
Parquet or ORC table: not a view, not `transactional=true` (Hive's ACID layout, which Spark can't
read and whose files name write ids only Hive's writers allocate), not sorted (rows arrive in no order).
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass

from hmsproxy.files.partition_names import partition_name
from hmsproxy.protocol import idl
from hmsproxy.streaming.errors import InvalidPartition, InvalidTable
from hmsproxy.streaming.metastore import Metastore

hive = idl.hive

FORMATS = {"parquet": "parquet", "orc": "orc"}


@dataclass(frozen=True)
class Target:
    database: str
    table: str
    #: (name, hive type) of the data columns, in order.
    columns: tuple[tuple[str, str], ...]
    partition_keys: tuple[str, ...]
    file_format: str  # "parquet" or "orc"
    bucket_columns: tuple[str, ...]
    num_buckets: int
    bucketing_version: int
    table_struct: object  # the Table as the metastore answered (new partitions copy its storage)

    @property
    def bucketed(self) -> bool:
        return bool(self.bucket_columns) and self.num_buckets > 0

    def partition_name(self, values: tuple[str, ...]) -> str | None:
        return partition_name(list(self.partition_keys), dict(zip(self.partition_keys, values))) if self.partition_keys else None


def describe_table(ms: Metastore, database: str, table: str) -> Target:
    try:
        t = ms.call("get_table", database, table)
    except hive.NoSuchObjectException:
        raise InvalidTable(f"table {database}.{table} does not exist") from None
    name = f"{database}.{table}"
    params = t.parameters or {}
    if t.tableType == "VIRTUAL_VIEW":
        raise InvalidTable(f"{name} is a view: stream into a table")
    if params.get("transactional", "").lower() == "true":
        raise InvalidTable(
            f"{name} is transactional=true (Hive ACID): Spark can't read its delta files, and only Hive's own writers "
            "may write them. Stream into an ordinary Parquet or ORC table: hmsproxy makes each commit visible atomically."
        )
    sd = t.sd
    serde = ((sd.serdeInfo.serializationLib if sd.serdeInfo else "") or "").lower()
    file_format = next((fmt for key, fmt in FORMATS.items() if key in serde or key in (sd.inputFormat or "").lower()), None)
    if file_format is None:
        raise InvalidTable(f"{name} is stored as {sd.inputFormat or serde or 'unknown'}: streaming writes Parquet or ORC tables")
    if sd.sortCols:
        raise InvalidTable(f"{name} is sorted (SORTED BY): streamed rows arrive in no order")
    return Target(
        database=database,
        table=table,
        columns=tuple((c.name.lower(), c.type.lower()) for c in sd.cols or []),
        partition_keys=tuple(k.name.lower() for k in t.partitionKeys or []),
        file_format=file_format,
        bucket_columns=tuple(c.lower() for c in sd.bucketCols or []),
        num_buckets=int(sd.numBuckets or 0) if sd.bucketCols else 0,
        bucketing_version=int(params.get("bucketing_version", "1") or 1),
        table_struct=t,
    )


def location_of(ms: Metastore, target: Target, values: tuple[str, ...], *, create: bool) -> str:
    """Where the partition's (or table's) files live; the partition is made first if `create` and missing.
    Several writers may race to make it: whoever loses finds the winner's."""
    if not target.partition_keys:
        return target.table_struct.sd.location
    if len(values) != len(target.partition_keys):
        raise InvalidPartition(
            f"{target.database}.{target.table} is partitioned by ({', '.join(target.partition_keys)}): "
            f"{len(values)} value(s) given ({', '.join(values) or 'none'})"
        )
    try:
        return ms.call("get_partition", target.database, target.table, list(values)).sd.location
    except hive.NoSuchObjectException:
        if not create:
            raise InvalidPartition(
                f"partition {target.partition_name(values)} of {target.database}.{target.table} does not exist "
                "(auto_create_partition=True makes it)"
            ) from None
    sd = copy.deepcopy(target.table_struct.sd)
    sd.location = f"{target.table_struct.sd.location.rstrip('/')}/{target.partition_name(values)}"
    now = int(time.time())
    partition = hive.Partition(
        values=list(values), dbName=target.database, tableName=target.table, sd=sd, parameters={}, createTime=now, lastAccessTime=now
    )
    try:
        return ms.call("add_partition", partition).sd.location
    except hive.AlreadyExistsException:  # another writer made it first
        return ms.call("get_partition", target.database, target.table, list(values)).sd.location
    except hive.MetaException as failed:
        # Also lost to another writer, when the metastore's undo fails: on S3 the loser's metastore
        # found the directory "made" by itself and could not delete it ("Unable to delete directory").
        try:
            return ms.call("get_partition", target.database, target.table, list(values)).sd.location
        except hive.NoSuchObjectException:
            raise failed from None

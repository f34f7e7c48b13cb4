"""A table's partitions as the jobs see them: which to work on, where their data is, in what format.

Names and specs follow Hive: partition names are `k=v/k2=v2` with special
characters %-escaped; `--partition` takes the same form, unescaped, and may name
any subset of the keys (every partition matching it is selected).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import unquote

from hmsproxy.files.partition_names import hive_escape, partition_name  # noqa: F401 (the jobs import them from here)
from hmsproxy.jobs.errors import JobError, UsageError

if TYPE_CHECKING:  # the Thrift client is imported only by jobs that run, not by the CLI's parser
    from hmsproxy.jobs.metastore import MetastoreClient

_SPEC_PART = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=(.*)$")


@dataclass(frozen=True)
class Target:
    """What one swap replaces: a partition's data, or an unpartitioned table's."""

    db: str
    table: str
    #: For messages and progress: "ds=2026-11-01", or "db.table" for an unpartitioned table.
    name: str
    location: str
    #: The partition's values in key order; None for the table itself.
    values: tuple[str, ...] | None = None

    @property
    def is_partition(self) -> bool:
        return self.values is not None


def split_table_name(name: str, default_db: str = "default") -> tuple[str, str]:
    parts = name.strip().split(".")
    if len(parts) == 1 and parts[0]:
        return default_db, parts[0].lower()
    if len(parts) == 2 and all(parts):
        return parts[0].lower(), parts[1].lower()
    raise UsageError(f"not a table name: {name!r} (expected TABLE or DATABASE.TABLE)")


def parse_spec(text: str) -> dict[str, str]:
    """'ds=2026-11-01/hr=3' -> {'ds': '2026-11-01', 'hr': '3'} (keys lower-cased, as Hive stores them)."""
    spec: dict[str, str] = {}
    for piece in text.split("/"):
        m = _SPEC_PART.match(piece)
        if not m:
            raise UsageError(f"not a partition spec: {text!r} (expected key=value[/key2=value2])")
        key = m.group(1).lower()
        if key in spec:
            raise UsageError(f"partition spec {text!r} names {key!r} twice")
        spec[key] = m.group(2)
    return spec


def parse_partition_name(name: str) -> dict[str, str]:
    """A metastore partition name -> {key: value}, undoing Hive's %XX escaping."""
    result = {}
    for piece in name.split("/"):
        key, sep, value = piece.partition("=")
        if not sep:
            raise JobError(f"the metastore returned a partition name without '=': {name!r}")
        result[unquote(key)] = unquote(value)
    return result


def matches(values: dict[str, str], specs: list[dict[str, str]]) -> bool:
    """No specs: everything; else any spec whose every key has the partition's value."""
    return not specs or any(all(values.get(k) == v for k, v in spec.items()) for spec in specs)


def data_format(table, need: str = "only Parquet and ORC tables can be rewritten") -> str:
    """'parquet' or 'orc': the formats whose files the jobs can rewrite without losing anything (and
    lookups read); JobError saying `need` for any other."""
    params = table.parameters or {}
    provider = (params.get("spark.sql.sources.provider") or "").lower()
    sd = table.sd
    hive_format = " ".join(filter(None, [sd.inputFormat, sd.serdeInfo.serializationLib if sd.serdeInfo else None])).lower()
    for fmt in ("parquet", "orc"):
        if provider == fmt or (not provider and fmt in hive_format):
            return fmt
    found = provider or sd.inputFormat or "unknown"
    raise JobError(f"table {table.dbName}.{table.tableName} is stored as {found}; {need}")


def refuse_fileless_or_managed(table, job: str, *, hive_buckets: bool = False) -> None:
    """Tables no job may rewrite: views (no files), ACID tables (Hive's compactor owns their
    files) and bucketed ones (rewriting breaks the buckets), unless `hive_buckets` (the job keeps a
    Hive-bucketed table's buckets: jobs/buckets.py says which); `job` says what the job would do."""
    name = f"{table.dbName}.{table.tableName}"
    params = {k.lower(): (v or "").lower() for k, v in (table.parameters or {}).items()}
    sd = table.sd
    if table.tableType == "VIRTUAL_VIEW":
        raise JobError(f"{name} is a view; it has no files")
    if params.get("transactional") == "true":
        raise JobError(f"{name} is a transactional (ACID) table; its files are managed by Hive's compactor")
    if (sd.numBuckets or 0) > 0 or sd.bucketCols or params.get("spark.sql.sources.schema.numbucketcols"):
        if not hive_buckets:
            raise JobError(f"{name} is bucketed; {job} would break its buckets")
        from hmsproxy.jobs.buckets import refuse_unbucketable

        refuse_unbucketable(table)


def refuse_unsupported(table) -> None:
    """Layouts whose meaning lives in the file set itself: rewriting them into N plain files would break them.
    (Skewed tables are compacted: a partition skew-layout laid out group by group, jobs/compact_layout.py.)"""
    refuse_fileless_or_managed(table, "rewriting it into N files", hive_buckets=True)
    name = f"{table.dbName}.{table.tableName}"
    sd = table.sd
    if not sd.location:
        raise JobError(f"{name} has no location")


def reachable_store(table) -> None:
    """The table's store answers through hmsproxy's door (keys, bucket, NameNode), or JobError in one
    line: a job that recovers streaming writers' files there would fail anyway, after Spark's start-up
    and S3A's own retries (minutes)."""
    from hmsproxy.files.locations import StorageError
    from hmsproxy.files.storage import arrow_filesystem

    if not table.sd or not table.sd.location:
        return
    try:
        arrow_filesystem(table.sd.location)
    except StorageError as e:
        raise JobError(str(e)) from None


def selected_partition_names(ms: MetastoreClient, table, specs: list[dict[str, str]]) -> list[str] | None:
    """The names of the partitions `specs` select (None: the table is not partitioned); UsageError or
    JobError if `specs` don't fit the table or select nothing. Jobs also call it before Spark starts."""
    db, name = table.dbName, table.tableName
    keys = [k.name.lower() for k in table.partitionKeys or []]
    if not keys:
        if specs:
            raise UsageError(f"{db}.{name} is not partitioned; leave out --partition")
        return None
    for spec in specs:
        unknown = sorted(set(spec) - set(keys))
        if unknown:
            raise UsageError(f"--partition names {', '.join(unknown)} but {db}.{name} is partitioned by {', '.join(keys)}")
    selected = [n for n in ms.partition_names(db, name) if matches(parse_partition_name(n), specs)]
    if specs and not selected:
        wanted = " or ".join("/".join(f"{k}={v}" for k, v in s.items()) for s in specs)
        raise JobError(f"no partition of {db}.{name} matches {wanted}")
    return selected


def list_targets(ms: MetastoreClient, table, specs: list[dict[str, str]]) -> list[Target]:
    """The partitions to work on, in the metastore's name order (or the table itself when unpartitioned)."""
    db, name = table.dbName, table.tableName
    selected = selected_partition_names(ms, table, specs)
    if selected is None:
        return [Target(db, name, f"{db}.{name}", table.sd.location)]
    by_values = {tuple(p.values): p for p in ms.partitions_by_names(db, name, selected)}
    targets = []
    for part_name in selected:
        values = tuple(parse_partition_name(part_name).values())
        part = by_values.get(values)
        if part is None:  # dropped between the two calls
            continue
        targets.append(Target(db, name, part_name, part.sd.location or "", values))
    return targets

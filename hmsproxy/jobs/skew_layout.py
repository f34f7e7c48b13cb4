"""skew-layout: write each partition as one file group per skewed value plus the default group.

`SELECT … WHERE x = 30` on a day partition where a few values of x hold most rows reads the
whole partition; laid out by value, a reader that knows the layout (hmsproxy.clients.spark.read)
reads only the files of x = 30, or only the default group for a value that is not skewed.

Two layouts (issue 9, "Layout must never hide rows from ordinary readers"):

- flat (default): every group's files directly in the partition directory, named
  `skew-<n>-<value>-<k>.<ext>`; a default SparkSession still reads every row;
- Hive's list bucketing (table STORED AS DIRECTORIES and --allow-subdirectories): a
  directory per value (`x=10/y=a/`), the default directory, skewedColValueLocationMaps filled.
  Default Spark reads no file in subdirectories, so without the flag the job refuses.

Per partition: read its files, (with --detect: find its heavy values), write the groups into
a fresh sibling directory, read them back and compare row count, checksum and that every row
sits in its value's group, then swap the location atomically (swap.py) together with the
layout record (features/skew/layout.py) and the partition's SkewedInfo.
"""

from __future__ import annotations

import argparse
import getpass
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hmsproxy.features.skew.layout import (
    LAYOUT_PARAMETER,
    Group,
    LayoutFile,
    LayoutRecord,
    from_parameters,
    matches_files,
    now_text,
    to_parameter,
)
from hmsproxy.files.storage import Storage, data_dirs, data_files, join
from hmsproxy.jobs.arguments import add_partition_option, positive, share
from hmsproxy.jobs.compact import read_files, refresh_table
from hmsproxy.jobs.errors import JobError, UsageError, error_text, one_line
from hmsproxy.jobs.job_files import job_mover, job_storage
from hmsproxy.jobs.progress import FAILED, OK, SKIPPED, ItemResult, format_bytes, format_count, format_duration
from hmsproxy.jobs.registry import Job
from hmsproxy.jobs.spark_sessions import spark_user
from hmsproxy.jobs.swap import Written, fetch, swap_in
from hmsproxy.jobs.tables import (
    Target,
    data_format,
    hive_escape,
    list_targets,
    parse_spec,
    reachable_store,
    refuse_fileless_or_managed,
    selected_partition_names,
    split_table_name,
)

NAME = "skew-layout"

#: Hive's name for the directory of rows of no skewed value (one level per skewed column).
DEFAULT_DIRECTORY = "HIVE_DEFAULT_LIST_BUCKETING_DIR_NAME"
#: The column the job tags rows with while writing (never in the files; no leading "_": Hadoop would hide its directories).
GROUP_COLUMN = "hmsproxy_skew_group"
#: Where Spark writes the groups before they are renamed into place (hidden: '_').
STAGING = "_hmsproxy_skew_staging"
#: Split very large groups so no single task writes one giant file.
MAX_ROWS_PER_FILE = 5_000_000
#: Row groups (Parquet) and stripes (ORC) of at most this many bytes before compression: Spark
#: splits a file between tasks only at row-group boundaries, so a heavy value's group (one file
#: of a few tens of MiB, 128 MiB row groups by default) would otherwise be read by a single core.
GROUP_BLOCK_BYTES = 8 * 2**20
BLOCK_SIZE_OPTION = {"parquet": "parquet.block.size", "orc": "orc.stripe.size"}


def reader_settings(fmt: str) -> tuple[str, ...]:
    """The Spark settings that make a session read files in a partition's subdirectories."""
    convert = "spark.sql.hive.convertMetastoreOrc" if fmt == "orc" else "spark.sql.hive.convertMetastoreParquet"
    return (f"{convert}=false", "mapreduce.input.fileinputformat.input.dir.recursive=true", "hive.mapred.supports.subdirectories=true")


# --- names -------------------------------------------------------------------------------------

_UNSAFE_IN_NAME = re.compile(r"[^A-Za-z0-9_-]+")


def flat_name(index: int, values: tuple[str, ...] | None, k: int, ext: str) -> str:
    """'skew-0-US-000.parquet': the group number makes it unique, the value makes it readable."""
    slug = "default" if values is None else _UNSAFE_IN_NAME.sub("_", "_".join(values))[:24] or "_"
    return f"skew-{index}-{slug}-{k:03d}.{ext}"


def hive_directory(columns: tuple[str, ...], values: tuple[str, ...] | None) -> str:
    """Hive's list bucketing directory: 'x=10/y=a', or the default directory once per column."""
    if values is None:
        return "/".join([DEFAULT_DIRECTORY] * len(columns))
    return "/".join(f"{hive_escape(c.lower())}={hive_escape(v)}" for c, v in zip(columns, values))


# --- the metastore -------------------------------------------------------------------------------


class _Calls:
    """`client.<method>(*args)` over a ThriftConnection: the answer, or the declared exception raised.

    ThriftConnection decodes maps keyed by lists (SkewedInfo's location map), which a plain
    thriftpy2 client cannot; partitions laid out as directories carry one.
    """

    def __init__(self, connection: Any):
        self._connection = connection

    def __getattr__(self, method: str) -> Callable[..., Any]:
        from hmsproxy.protocol import idl

        args_cls = getattr(idl.HmsProxy, f"{method}_args")

        def call(*args):
            result = self._connection.call(method, args_cls(*args))
            for fid, (_, name, *_) in sorted(result.thrift_spec.items()):
                if fid != 0 and getattr(result, name, None) is not None:
                    raise getattr(result, name)
            return getattr(result, "success", None)

        return call

    def close(self) -> None:
        self._connection.close()


def open_metastore(uris: str, user: str | None = None, timeout_s: float = 600.0, *, sasl_principal: str | None = None) -> Any:
    """The jobs' MetastoreClient (a context manager), on a connection that reads skew location maps.
    `sasl_principal`: the proxy's, its port Kerberized; the caller is then its ticket cache's."""
    # Thrift and the IDL load here, not when the CLI lists the jobs.
    from hmsproxy.jobs.metastore import MetastoreClient, parse_uris
    from hmsproxy.upstream.wire import ThriftConnection

    sasl = None
    if sasl_principal:
        from hmsproxy.protocol.kerberos_client import CallerSasl

        sasl = CallerSasl(sasl_principal)
    uri_list = tuple(f"thrift://{h}:{p}" for h, p in parse_uris(uris))
    connection = ThriftConnection(NAME, uri_list, call_timeout_s=timeout_s, sasl=sasl)
    try:
        connection.open()
    except Exception as e:
        # The reason alone: the connection's own name ("skew-layout") means nothing to another job's user.
        raise JobError(f"can't reach the metastore at {uris}: {getattr(e, 'reason', None) or error_text(e)}") from e
    client = MetastoreClient.__new__(MetastoreClient)  # its calls, on this connection
    client.uris = uris
    client.user = user or getpass.getuser()  # the locks a job takes name it
    client._client = _Calls(connection)
    try:
        client._client.set_ugi(client.user, [])
    except BaseException:
        connection.close()
        raise
    return client


class RecordingCatalog:
    """The swap's catalog; its alter_partition (alter_table for an unpartitioned table) also
    writes the layout record and the SkewedInfo.

    So the new location, the record describing its files and the values they were laid out
    for reach the metastore in one call: a reader never sees one without the others.
    """

    def __init__(self, catalog: Any, amend: Callable[[Any], None]):
        self._catalog = catalog
        self._amend = amend

    def __getattr__(self, name: str):
        return getattr(self._catalog, name)

    def alter_partition(self, db: str, table: str, partition: Any) -> None:
        self._amend(partition)
        self._catalog.alter_partition(db, table, partition)

    def alter_table(self, db: str, table: str, new_table: Any) -> None:
        self._amend(new_table)
        self._catalog.alter_table(db, table, new_table)


# --- files ---------------------------------------------------------------------------------------


def list_files(storage: Storage, location: str) -> list[tuple[str, int]]:
    """Every data file under `location` (recursively) as (relative name, size); hidden names are skipped."""
    found: list[tuple[str, int]] = []

    def walk(path: str, prefix: str) -> None:
        entries = storage.list(path)
        found.extend((prefix + e.name, e.size) for e in data_files(entries))
        for d in data_dirs(entries):
            walk(d.path, f"{prefix}{d.name}/")

    walk(location, "")
    return sorted(found)


# --- the Spark side --------------------------------------------------------------------------------


def group_expr(columns: tuple[str, ...], values: list[tuple[str, ...]]) -> Any:
    """The group number of each row: i for skewed value i (compared as strings), len(values) otherwise."""
    from pyspark.sql import functions as F

    expr = F.lit(len(values))
    for i in reversed(range(len(values))):
        cond = None
        for c, v in zip(columns, values[i]):
            term = F.col(c).cast("string") == F.lit(v)
            cond = term if cond is None else cond & term
        expr = F.when(cond, F.lit(i)).otherwise(expr)
    return expr


def holds_map(data_type: Any) -> bool:
    """Spark refuses to hash maps (anywhere inside a type), so those columns are hashed as JSON."""
    from pyspark.sql.types import ArrayType, MapType, StructType

    if isinstance(data_type, MapType):
        return True
    if isinstance(data_type, ArrayType):
        return holds_map(data_type.elementType)
    if isinstance(data_type, StructType):
        return any(holds_map(f.dataType) for f in data_type.fields)
    return False


def checksum_expr(schema: Any, data_columns: list[str]) -> Any:
    """Order-independent: the sum of every row's hash (as a decimal, so it never overflows).

    A map's JSON keeps its entries' order, which Parquet and ORC keep too, so the written
    rows hash as the read ones did.
    """
    from pyspark.sql import functions as F

    types = {f.name: f.dataType for f in schema.fields}
    hashed = [F.to_json(F.col(c)) if holds_map(types[c]) else F.col(c) for c in data_columns]
    return F.sum(F.xxhash64(*hashed).cast("decimal(38,0)"))


def detect_heavy(frame: Any, columns: tuple[str, ...], top: int, min_share: float) -> tuple[list[tuple[str, ...]], int]:
    """The partition's heavy values: at most `top`, each holding at least `min_share` of its rows."""
    from pyspark.sql import functions as F

    total = frame.count()
    if total == 0:
        return [], 0
    keys = [F.col(c).cast("string").alias(c) for c in columns]
    counted = frame.select(*keys).dropna().groupBy(*columns).count()
    rows = counted.orderBy(F.desc("count"), *columns).limit(top).collect()
    return [tuple(r[c] for c in columns) for r in rows if r["count"] / total >= min_share], total


@dataclass(frozen=True)
class Plan:
    """What to lay out: the skewed columns and where the values come from."""

    columns: tuple[str, ...]
    #: The table's skewed values (used for partitions without their own).
    values: tuple[tuple[str, ...], ...]
    subdirectories: bool
    detect: bool = False
    top: int = 10
    min_share: float = 0.05


def values_for(plan: Plan, target: Any) -> list[tuple[str, ...]]:
    """Without --detect: the partition's own skewed values if it has them for these columns, else the table's."""
    info = target.sd.skewedInfo if target.sd else None
    if info and [c.lower() for c in info.skewedColNames or []] == list(plan.columns) and info.skewedColValues:
        return [tuple(str(v) for v in value) for value in info.skewedColValues]
    return list(plan.values)


def write_groups(
    frame: Any,
    fmt: str,
    staging: str,
    columns: tuple[str, ...],
    values: list[tuple[str, ...]],
    by: tuple[str, ...] = (),
    tasks: int | None = None,
) -> None:
    """One Spark job: rows tagged with their group, written into `staging/<GROUP_COLUMN>=<n>/` (below
    directories of the columns `by` first: a pass over many partitions writes each one's apart), by
    `tasks` tasks (else as many as the session shuffles into)."""
    tagged = frame.withColumn(GROUP_COLUMN, group_expr(columns, values))
    tagged = tagged.repartition(tasks, *by, GROUP_COLUMN) if tasks else tagged.repartition(*by, GROUP_COLUMN)
    writer = tagged.write.format(fmt).mode("error").partitionBy(*by, GROUP_COLUMN)
    writer = writer.option("maxRecordsPerFile", MAX_ROWS_PER_FILE).option(BLOCK_SIZE_OPTION[fmt], GROUP_BLOCK_BYTES)
    writer.option("mapreduce.fileoutputcommitter.marksuccessfuljobs", "false").save(staging)


def place_groups(storage: Storage, fs: Any, fmt: str, location: str, columns, values, subdirectories: bool) -> list[list[LayoutFile]]:
    """Move the staged files to their final names; each group's files, in group order."""
    staging = join(location, STAGING)
    groups: list[list[LayoutFile]] = [[] for _ in range(len(values) + 1)]
    for d in data_dirs(storage.list(staging)):
        index = int(d.name.split("=", 1)[1])
        group_values = values[index] if index < len(values) else None
        for k, f in enumerate(data_files(storage.list(d.path))):
            if subdirectories:
                name = f"{hive_directory(columns, group_values)}/skew-{k:03d}.{fmt}"
            else:
                name = flat_name(index, group_values, k, fmt)
            fs.move(f.path, join(location, name))
            groups[index].append(LayoutFile(name, f.size))
    storage.delete(staging)
    return groups


def verify(spark: Any, fmt: str, location: str, data_columns: list[str], columns, values, groups) -> list[tuple[int, int]]:
    """Read what was written: per group (rows, checksum), and fail if any row is in another value's group."""
    from functools import reduce

    from pyspark.sql import functions as F

    parts = []
    for index, files in enumerate(groups):
        if files:
            frame = read_files(spark, fmt, [join(location, f.name) for f in files]).select(*data_columns)
            parts.append(frame.withColumn("_file_group", F.lit(index)))
    if not parts:
        return [(0, 0) for _ in groups]
    union = reduce(lambda a, b: a.unionByName(b), parts)
    result = [(0, 0)] * len(groups)
    for r in group_stats(union, data_columns, columns, values, ("_file_group",)):
        if r["bad"]:
            raise JobError(f"{r['bad']} rows were written to the wrong group; not swapped")
        result[r["_file_group"]] = (r["rows"], int(r["sum"] or 0))
    return result


def group_stats(frame: Any, data_columns: list[str], columns, values, keys: tuple[str, ...]) -> list[Any]:
    """Per value of `keys` (the last one the group the rows were written to): rows, checksum ("sum") and
    the rows whose value belongs to another group ("bad"); one Spark job."""
    from pyspark.sql import functions as F

    misplaced = F.sum(F.when(group_expr(columns, values) != F.col(keys[-1]), 1).otherwise(0))
    stats = frame.groupBy(*keys).agg(
        F.count(F.lit(1)).alias("rows"), checksum_expr(frame.schema, data_columns).alias("sum"), misplaced.alias("bad")
    )
    return stats.collect()


# --- one partition -------------------------------------------------------------------------------


def skewed_info(columns, values, location_map: dict | None = None) -> Any:
    from hmsproxy.protocol import idl

    return idl.hive.SkewedInfo(
        skewedColNames=list(columns), skewedColValues=[list(v) for v in values], skewedColValueLocationMaps=location_map or {}
    )


def location_map(location: str, columns: tuple[str, ...], values: list[tuple[str, ...]]) -> dict:
    """SkewedInfo's map of a directories layout at `location`: each skewed value's directory."""
    return {tuple(v): join(location, hive_directory(columns, v)) for v in values}


def layout_amender(made: dict[str, Any], columns: tuple[str, ...], values: list[tuple[str, ...]], subdirectories: bool):
    """What the swap's alter_partition (alter_table) also writes: `made["record"]` (and `made["locations"]`,
    a directories layout's map), the SkewedInfo: so readers never see new files without their record."""

    def amend(obj: Any) -> None:  # the Partition, or the Table
        obj.parameters = dict(obj.parameters or {}, **{LAYOUT_PARAMETER: made["record"]})
        obj.sd.skewedInfo = skewed_info(columns, values, made.get("locations"))
        obj.sd.storedAsSubDirectories = subdirectories

    return amend


def known_subdirectories(record: LayoutRecord | None, current: list[tuple[str, int]]) -> bool:
    """Whether every file in the location's subdirectories is one the record lists: a directories layout,
    perhaps with files added beside it since (streamed: they land at the top), so nothing unknown is there."""
    if record is None:
        return False
    recorded = {(f.name, f.size) for f in record.files}
    return all(entry in recorded for entry in current if "/" in entry[0])


@dataclass(frozen=True)
class Found:
    """What layout_target learns of a partition before reading its rows."""

    current: list[tuple[str, int]]
    previous: LayoutRecord | None
    laid_out: bool
    top: list[Any]


def examine(storage: Storage, stored: Any, target: Target) -> ItemResult | Found:
    """The files and previous layout of a partition whose directory exists; an ItemResult when there is
    nothing to lay out. Raises when its subdirectories are not this job's."""
    current = list_files(storage, target.location)
    previous = from_parameters(stored.parameters)
    laid_out = previous is not None and matches_files(previous, current)
    top = storage.list(target.location)
    if data_dirs(top) and not known_subdirectories(previous, current):
        names = ", ".join(e.name for e in data_dirs(top)[:3])
        raise JobError(f"it has subdirectories ({names}) this job did not write; a rewrite could lose their rows")
    if not current:
        return ItemResult(SKIPPED, note="no data files")
    return Found(current, previous, laid_out, top)


def already_laid_out(found: Found, plan: Plan, values: list[tuple[str, ...]]) -> ItemResult | None:
    previous = found.previous
    if (
        found.laid_out
        and previous.columns == plan.columns
        and previous.skewed_values == values
        and previous.subdirectories == plan.subdirectories
    ):
        return ItemResult(SKIPPED, rows=previous.rows, note="already laid out for these values")
    return None


def recorded(made: dict[str, Any], plan: Plan, fmt: str, values, location: str, files, counts, rows: int, checksum: int) -> Written:
    """Check the placed groups' (rows, checksum) against what was read, and put their layout record (and a
    directories layout's location map) in `made` for the swap; what was written."""
    got_rows, got_sum = sum(r for r, _ in counts), sum(s for _, s in counts)
    if got_rows != rows or got_sum != checksum:
        raise JobError(f"wrote {got_rows} rows (checksum {got_sum}) but read {rows} (checksum {checksum}); not swapped")
    groups = tuple(Group(v, tuple(f), counts[i][0]) for i, (v, f) in enumerate(zip([*values, None], files)))
    record = LayoutRecord(plan.columns, groups, rows, str(checksum), now_text(), fmt, plan.subdirectories)
    made["record"] = to_parameter(record)
    if plan.subdirectories:
        made["locations"] = location_map(location, plan.columns, values)
    all_files = [f for group in files for f in group]
    return Written(rows, len(all_files), sum(f.size for f in all_files))


def laid_out_result(values: list[tuple[str, ...]], swapped: Any) -> ItemResult:
    w = swapped.written
    shown = ", ".join("/".join(v) for v in values[:5]) + (", …" if len(values) > 5 else "")
    note = f"{len(values)} value(s): {shown}; {w.files} files"
    if swapped.warning:
        note += f"; warning: {swapped.warning}"
    return ItemResult(OK, rows=w.rows, bytes=w.bytes, note=note)


def layout_target(spark: Any, storage: Storage, catalog: Any, fmt: str, target: Target, plan: Plan, token: str | None = None):
    """Lay out one partition (or the unpartitioned table); (result, the values it was laid out for or None).

    Raises with its data left as it was.
    """
    if not target.location:
        raise JobError("it has no location")
    if not storage.exists(target.location):
        return ItemResult(SKIPPED, note="its directory does not exist (no data)"), None
    stored = fetch(catalog, target)
    found = examine(storage, stored, target)
    if isinstance(found, ItemResult):
        return found, None
    frame = read_files(spark, fmt, [join(target.location, name) for name, _ in found.current])
    data_columns = list(frame.columns)
    missing = [c for c in plan.columns if c not in data_columns]
    if missing:
        raise JobError(f"its files have no column {', '.join(missing)}")
    if plan.detect:
        values, total = detect_heavy(frame, plan.columns, plan.top, plan.min_share)
        if not values:
            return ItemResult(SKIPPED, rows=total, note=f"no value holds {plan.min_share:.0%} of its rows"), None
    else:
        values = values_for(plan, stored)
    skipped = already_laid_out(found, plan, values)
    if skipped is not None:
        return skipped, values
    from pyspark.sql import functions as F

    [source] = frame.agg(checksum_expr(frame.schema, data_columns).alias("sum"), F.count(F.lit(1)).alias("rows")).collect()
    rows, checksum = source["rows"], int(source["sum"] or 0)
    fs = job_mover(spark)
    made: dict[str, Any] = {}

    def write(new_location: str) -> Written:
        write_groups(frame.select(*data_columns), fmt, join(new_location, STAGING), plan.columns, values)
        files = place_groups(storage, fs, fmt, new_location, plan.columns, values, plan.subdirectories)
        before_swap_check()  # a test seam: fail here to prove nothing is swapped
        counts = verify(spark, fmt, new_location, data_columns, plan.columns, values, files)
        return recorded(made, plan, fmt, values, new_location, files, counts, rows, checksum)

    amend = layout_amender(made, plan.columns, values, plan.subdirectories)
    snapshot = data_files(found.top)
    swapped = swap_in(target, write, storage=storage, catalog=RecordingCatalog(catalog, amend), snapshot=snapshot, job=NAME, token=token)
    return laid_out_result(values, swapped), values


def layout_beside_writers(spark: Any, storage: Storage, ms: Any, fmt: str, target: Target, plan: Plan, context):
    """layout_target under the target's exclusive lock, as compact's rewrite: a streaming writer's commit
    between the job's last look at the files and its swap would land in the directory the swap retires."""
    from hmsproxy.jobs.locks import beside_writers  # Thrift: not for `hmsproxy --help`

    if not target.location:
        raise JobError("it has no location")
    with beside_writers(ms, target, context.metastore):
        return layout_target(spark, storage, ms, fmt, target, plan)


def laid_out(spark: Any, storage: Storage, ms: Any, fmt: str, table: Any, targets: list[Target], plan: Plan, context):
    """(target, result, the values it was laid out for or None) of each target: many partitions in one
    Spark pass per batch (skew_pass.py), else partition by partition."""
    from hmsproxy.jobs.skew_pass import layout_many, passes_apply  # it imports this module

    if passes_apply(plan, fmt, table, targets):
        yield from layout_many(spark, storage, ms, fmt, table, targets, plan, context)
        return
    for target in targets:
        yield layout_alone(spark, storage, ms, fmt, target, plan, context)


def layout_alone(spark: Any, storage: Storage, ms: Any, fmt: str, target: Target, plan: Plan, context):
    """(target, result, values) of one partition laid out on its own; a failure as a FAILED result."""
    try:
        result, values = layout_beside_writers(spark, storage, ms, fmt, target, plan, context)
        return target, result, values
    except Exception as e:  # this partition failed and was left as it was; go on with the others
        return target, ItemResult(FAILED, note=one_line(e)), None


def before_swap_check() -> None:
    """Does nothing; tests replace it to fail a job after writing and before the swap."""


# --- the table -----------------------------------------------------------------------------------


def check_table(table: Any, allow_subdirectories: bool) -> str:
    """The table's file format, or why the job won't lay it out."""
    refuse_fileless_or_managed(table, "laying it out in skewed groups")
    name = f"{table.dbName}.{table.tableName}"
    sd = table.sd
    fmt = data_format(table)
    if sd.storedAsSubDirectories and not allow_subdirectories:
        settings = ", ".join(reader_settings(fmt))
        raise JobError(
            f"{name} is STORED AS DIRECTORIES, and a default SparkSession reads no file in a partition's "
            f"subdirectories: its readers need {settings}. With those set, run again with --allow-subdirectories; "
            "or ALTER TABLE … NOT STORED AS DIRECTORIES for a flat layout every reader sees"
        )
    return fmt


def make_plan(table: Any, args: argparse.Namespace) -> Plan:
    info = table.sd.skewedInfo
    declared = tuple(c.lower() for c in (info.skewedColNames if info else None) or [])
    columns = tuple(c.strip().lower() for c in args.columns.split(",") if c.strip()) if args.columns else declared
    name = f"{table.dbName}.{table.tableName}"
    if not columns:
        raise UsageError(f"{name} has no skewed columns: declare them (ALTER TABLE … SKEWED BY …) or give --detect --columns C[,C2]")
    data = [c.name.lower() for c in table.sd.cols or []]
    unknown = [c for c in columns if c not in data]
    if unknown:
        raise UsageError(f"{', '.join(unknown)} is not a data column of {name} ({', '.join(data)})")
    values = tuple(tuple(str(v) for v in value) for value in (info.skewedColValues if info else None) or []) if columns == declared else ()
    if not args.detect and not values:
        raise UsageError(f"{name} has no skewed values for ({', '.join(columns)}); declare them or use --detect")
    subdirectories = bool(table.sd.storedAsSubDirectories and args.allow_subdirectories)
    return Plan(columns, values, subdirectories, args.detect, args.top, args.min_share)


def record_on_table(ms: Any, table: Any, plan: Plan, values: list[tuple[str, ...]]) -> bool:
    """--detect: the latest partition's heavy values become the table's, for partitions created later."""
    info = table.sd.skewedInfo
    current = [tuple(str(x) for x in v) for v in (info.skewedColValues if info else None) or []]
    names = [c.lower() for c in (info.skewedColNames if info else None) or []]
    if names == list(plan.columns) and current == values:
        return False
    fresh = ms.get_table(table.dbName, table.tableName)
    old_map = (fresh.sd.skewedInfo.skewedColValueLocationMaps if fresh.sd.skewedInfo else None) or {}
    kept = {k: v for k, v in old_map.items() if tuple(k) in set(values)}  # a location of a value no longer skewed is invalid
    fresh.sd.skewedInfo = skewed_info(plan.columns, values, kept)
    ms.alter_table(table.dbName, table.tableName, fresh)
    return True


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("table", metavar="TABLE", help="DATABASE.TABLE (or TABLE in database 'default')")
    add_partition_option(parser)
    parser.add_argument("--detect", action="store_true", help="find each partition's heavy values instead of using the declared ones")
    parser.add_argument("--top", type=positive, default=10, metavar="K", help="--detect: at most K values per partition (default 10)")
    parser.add_argument(
        "--min-share",
        type=share,
        default=0.05,
        metavar="F",
        help="--detect: only values with at least this share of the rows (default 0.05)",
    )
    parser.add_argument("--columns", metavar="C[,C2]", help="--detect: the skewed columns, when the table declares none")
    parser.add_argument(
        "--allow-subdirectories",
        action="store_true",
        help="lay out STORED AS DIRECTORIES tables as Hive does (only if every reader is configured for subdirectories)",
    )


def check_target(ms: Any, db: str, name: str, specs: list[dict[str, str]], args: argparse.Namespace) -> None:
    """What refuses the job without Spark: the table, its layout and skew, the partitions asked for."""
    table = ms.get_table(db, name)
    check_table(table, args.allow_subdirectories)
    make_plan(table, args)
    selected_partition_names(ms, table, specs)
    reachable_store(table)


def run(args: argparse.Namespace, context) -> int:
    if args.columns and not args.detect:
        raise UsageError("--columns goes with --detect (declared skew names its own columns)")
    db, name = split_table_name(args.table)
    specs = [parse_spec(s) for s in args.partition]
    context.check_first(lambda ms: check_target(ms, db, name, specs, args), connect=open_metastore)
    spark = context.spark
    storage = job_storage(spark)
    failures: list[tuple[str, str]] = []
    with open_metastore(context.uri, user=spark_user(spark), sasl_principal=context.sasl_principal) as ms:
        table = ms.get_table(db, name)
        fmt = check_table(table, args.allow_subdirectories)
        plan = make_plan(table, args)
        targets = list_targets(ms, table, specs)
        if not targets:
            context.out(f"{NAME} {db}.{name}: no partitions; nothing to do")
            return 0
        latest = None
        with context.progress(f"{NAME} {db}.{name}", len(targets)) as progress:
            for target, result, values in laid_out(spark, storage, ms, fmt, table, targets, plan, context):
                latest = values if values else latest
                if result.status == FAILED:  # it was left as it was; the others go on
                    failures.append((target.name, result.note))
                progress.start(target.name)
                progress.finish(target.name, result)
            done = progress.done - progress.failed - progress.skipped
            elapsed = progress.elapsed
            context.out(
                f"{NAME} {db}.{name}: {done} laid out, {progress.skipped} skipped, {progress.failed} failed; "
                f"{format_count(progress.rows)} rows, {format_bytes(progress.bytes)} in {format_duration(elapsed)}"
            )
        # An unpartitioned table got its values with its layout, in the swap's alter_table.
        if plan.detect and latest and table.partitionKeys and record_on_table(ms, table, plan, latest):
            context.out(f"{NAME} {db}.{name}: new partitions will be skewed on {', '.join('/'.join(v) for v in latest)}")
    refresh_table(spark, f"`{db}`.`{name}`")
    if failures:
        first, reason = failures[0]
        raise JobError(f"failed for {len(failures)} of {len(targets)} partitions (left as they were); {first}: {reason}")
    return 0


JOB = Job(NAME, "lay out each partition as one file group per skewed value (list bucketing), swapped in atomically", add_arguments, run)

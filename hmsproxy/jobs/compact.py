"""compact: rewrite each partition's files into N files, swapped in through the metastore.

Many small files make every read slow (one task and one footer read each); this
job rewrites a partition's data as N files and swaps the partition to them
atomically (see swap.py). The transformation is `compact_frame`, a pure
DataFrame function; the rest is the I/O shell around it.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from hmsproxy.files.storage import Storage, data_dirs, data_files
from hmsproxy.jobs.arguments import add_partition_option, positive
from hmsproxy.jobs.buckets import Buckets, buckets_of, one_file_per_bucket, write_buckets
from hmsproxy.jobs.errors import JobError, one_line
from hmsproxy.jobs.job_files import job_storage
from hmsproxy.jobs.progress import FAILED, OK, SKIPPED, ItemResult, format_bytes, format_count, format_duration
from hmsproxy.jobs.registry import Job
from hmsproxy.jobs.spark_sessions import is_connect
from hmsproxy.jobs.swap import Catalog, Written, swap_in
from hmsproxy.jobs.tables import (
    Target,
    data_format,
    list_targets,
    parse_spec,
    reachable_store,
    refuse_unsupported,
    selected_partition_names,
    split_table_name,
)

NAME = "compact"


def compact_frame(df: Any, files: int) -> Any:
    """The same rows in `files` Spark partitions, so writing it makes `files` files (fewer if there are fewer rows).

    coalesce when narrowing: no shuffle, and each input file's rows stay together
    in order (sorted or clustered data stays so). repartition when widening: Spark
    packs small files into few read splits, so the input may have fewer than N.
    """
    if files < 1:
        raise ValueError(f"files must be at least 1, not {files}")
    if is_connect(df.sparkSession):  # no RDD to count partitions of: always the shuffle, the same rows and files
        return df.repartition(files)
    return df.coalesce(files) if df.rdd.getNumPartitions() >= files else df.repartition(files)


# --- the I/O shell -----------------------------------------------------------------------------


def read_files(spark: Any, fmt: str, paths: list[str]) -> Any:
    """Exactly these files (the snapshot the swap checks against), not whatever the table lists later.

    mergeSchema: files written before a column was added lack it; the union keeps every column of every file.
    """
    return spark.read.format(fmt).option("mergeSchema", "true").load(paths)


def write_files(df: Any, fmt: str, location: str, options: dict[str, Any] | None = None) -> None:
    # errorifexists: the directory is fresh by construction, so anything there means something is wrong.
    # No _SUCCESS marker: Hive's own writes don't leave one in partition directories.
    writer = df.write.format(fmt).mode("error").options(**(options or {}))
    writer.option("mapreduce.fileoutputcommitter.marksuccessfuljobs", "false").save(location)


def count_rows(spark: Any, fmt: str, location: str) -> int:
    return spark.read.format(fmt).load(location).count()


def files_for(snapshot_bytes: int, target_file_mb: int | None, files: int) -> int:
    """How many files to write: enough of about `target_file_mb` each for the bytes read, else `files`."""
    if target_file_mb is None:
        return files
    return max(1, math.ceil(snapshot_bytes / (target_file_mb * 1024 * 1024)))


def compact_target(
    spark: Any,
    storage: Storage,
    catalog: Catalog,
    fmt: str,
    target: Target,
    files: int,
    token: str | None = None,
    *,
    target_file_mb: int | None = None,
    buckets: Buckets | None = None,
) -> ItemResult:
    """Compact one partition (or an unpartitioned table); raises on failure with its data left as it was.
    A bucketed table's (`buckets`) becomes one file per bucket (jobs/buckets.py), whatever `files` says.
    One skew-layout laid out keeps its layout: each file group is compacted on its own (compact_layout.py)."""
    if not target.location:
        raise JobError("it has no location")
    if not storage.exists(target.location):
        return ItemResult(SKIPPED, note="its directory does not exist (no data)")
    from hmsproxy.jobs.compact_layout import compact_groups, forgetting_layout, recorded_layout, still_laid_out  # it imports this module

    record = recorded_layout(catalog, target)
    if record is not None:  # laid out by skew-layout once
        if buckets is None and still_laid_out(record, storage, target.location):
            return compact_groups(spark, storage, catalog, fmt, target, record, files, target_file_mb=target_file_mb, token=token)
        catalog = forgetting_layout(catalog)  # its files changed since: rewritten flat, it stays not laid out
    entries = storage.list(target.location)
    subdirs = data_dirs(entries)
    if subdirs:
        raise JobError(f"it has subdirectories ({', '.join(e.name for e in subdirs[:3])}); a flat rewrite would drop their data")
    snapshot = data_files(entries)
    if buckets is not None:
        if one_file_per_bucket(snapshot):
            return ItemResult(SKIPPED, note=f"{len(snapshot)} file(s) already, one per bucket")
    else:
        files = files_for(sum(e.size for e in snapshot), target_file_mb, files)
        if len(snapshot) <= files:
            return ItemResult(SKIPPED, note=f"{len(snapshot)} file(s) already, at most {files} wanted")

    def write(new_location: str) -> Written:
        frame = read_files(spark, fmt, [e.path for e in snapshot])
        rows = frame.count()
        if buckets is not None:
            write_buckets(frame, fmt, new_location, storage, buckets)
        else:
            write_files(compact_frame(frame, files), fmt, new_location)
        written = data_files(storage.list(new_location))
        check = count_rows(spark, fmt, new_location)
        if check != rows:  # never swap in a file set that lost or gained rows
            raise JobError(f"wrote {check} rows but read {rows}; not swapped")
        return Written(rows, len(written), sum(e.size for e in written))

    swapped = swap_in(target, write, storage=storage, catalog=catalog, snapshot=snapshot, job=NAME, token=token)
    w = swapped.written
    note = f"{len(snapshot)} → {w.files} files"
    if swapped.warning:
        note += f"; warning: {swapped.warning}"
    return ItemResult(OK, rows=w.rows, bytes=w.bytes, note=note)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("table", metavar="TABLE", help="DATABASE.TABLE (or TABLE in database 'default')")
    add_partition_option(parser)
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--files", type=positive, default=1, metavar="N", help="files per partition after the rewrite (default 1)")
    size.add_argument(
        "--target-file-mb", type=positive, metavar="N", help="files of about N MB each (by the bytes read), instead of a count"
    )


def check_target(ms, db: str, name: str, specs: list[dict[str, str]]) -> None:
    """What refuses the job without Spark: the table, its layout, the partitions asked for."""
    table = ms.get_table(db, name)
    refuse_unsupported(table)
    data_format(table)
    selected_partition_names(ms, table, specs)
    reachable_store(table)


def run(args: argparse.Namespace, context) -> int:
    db, name = split_table_name(args.table)
    specs = [parse_spec(s) for s in args.partition]
    context.check_first(lambda ms: check_target(ms, db, name, specs))
    spark = context.spark
    storage = job_storage(spark)
    failures: list[tuple[str, str]] = []
    with context.metastore() as ms:
        table = ms.get_table(db, name)
        refuse_unsupported(table)
        fmt = data_format(table)
        targets = list_targets(ms, table, specs)
        if not targets:
            context.out(f"{NAME} {db}.{name}: no partitions; nothing to do")
            return 0
        with context.progress(f"{NAME} {db}.{name}", len(targets)) as progress:
            for target, result in compacted(spark, storage, ms, fmt, table, targets, args, context):
                if result.status == FAILED:  # it was left as it was; the others go on
                    failures.append((target.name, result.note))
                progress.start(target.name)
                progress.finish(target.name, result)
            done = progress.done - progress.failed - progress.skipped
            context.out(
                f"{NAME} {db}.{name}: {done} rewritten, {progress.skipped} skipped, {progress.failed} failed; "
                f"{format_count(progress.rows)} rows, {format_bytes(progress.bytes)} "
                f"in {format_duration(progress.elapsed)}"
            )
    refresh_table(spark, f"`{db}`.`{name}`")
    if failures:
        first, reason = failures[0]
        raise JobError(f"failed for {len(failures)} of {len(targets)} partitions (left as they were); {first}: {reason}")
    return 0


def compacted(spark: Any, storage: Storage, ms, fmt: str, table: Any, targets: list[Target], args, context):
    """Each target with its result: many partitions of a table that is not bucketed in one Spark pass per
    batch (compact_pass.py), else partition by partition (a bucketed table: one file per bucket each)."""
    from hmsproxy.jobs.compact_pass import PASS_FORMATS, compact_many  # it imports this module

    buckets = buckets_of(table)
    if buckets is None and len(targets) > 1 and fmt in PASS_FORMATS:
        yield from compact_many(spark, storage, ms, fmt, table, targets, args, context)
        return
    for target in targets:
        try:
            yield target, compact_beside_writers(spark, storage, ms, fmt, target, args, context, buckets)
        except Exception as e:  # this partition failed and was left as it was; go on with the others
            yield target, ItemResult(FAILED, note=one_line(e))


def compact_beside_writers(
    spark: Any, storage: Storage, ms, fmt: str, target: Target, args, context, buckets: Buckets | None = None
) -> ItemResult:
    """Under the target's exclusive lock (jobs/locks.py): streaming writers in flight finish first, what
    dead ones left is published or deleted, then the rewrite and swap."""
    from hmsproxy.jobs.locks import beside_writers  # Thrift: not for `hmsproxy --help`

    if not target.location:
        raise JobError("it has no location")
    with beside_writers(ms, target, context.metastore):
        return compact_target(spark, storage, ms, fmt, target, args.files, target_file_mb=args.target_file_mb, buckets=buckets)


def refresh_table(spark: Any, table: str) -> None:
    """Spark caches file listings; without this the session would still read the deleted directories."""
    try:
        spark.catalog.refreshTable(table)
    except Exception:  # e.g. a table Spark can't resolve; the next session sees the new files anyway
        pass


JOB = Job(NAME, "rewrite each partition's files into N files, swapping locations through the metastore", add_arguments, run)

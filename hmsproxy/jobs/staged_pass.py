"""What every one-Spark-pass job shares (rebuild-index, compact, skew-layout; issue 46).

A pass reads many partitions' files at once and writes each partition's output with
`partitionBy(PIECE_COLUMN)` into one fresh staging directory beside the table's; each partition
("piece") is then moved out of it and swapped in on its own. The pieces here: cutting the work into
bounded batches, driver-side calls run in threads, frames of rows the driver knows (which file
belongs to which piece), the rows each piece got read back from staging, and the staging
directory's lifetime (removed whatever happens; killed, it is left unreferenced and harmless).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from hmsproxy.files.storage import join
from hmsproxy.jobs.job_files import job_storage
from hmsproxy.jobs.swap import sibling_location

T = TypeVar("T")
R = TypeVar("R")

#: Carries each row's piece (its number in the pass) through a pass over many.
PIECE_COLUMN = "_piece"
#: Threads for the driver's round trips to the store (listings, footers): they overlap.
DRIVER_THREADS = 16
#: A frame of driver-known rows goes to Spark as a Parquet file beyond this many (literals in the plan below it).
LITERAL_ROWS = 200
#: Spark lists a read's paths (and a staging directory's pieces) with a Spark job of one task per path
#: beyond 32 of them: 2,000 tasks for a pass over 2,000 files, most of its time spent starting tasks.
LISTING_PARALLELISM = "spark.sql.sources.parallelPartitionDiscovery.parallelism"
#: Listing tasks per pass where the session can't say how many cores it has (Spark Connect).
LISTING_TASKS = 16
#: Tasks writing a pass: at least this many (cores to keep busy), more for every TASK_BYTES read.
MIN_WRITE_TASKS = 64
TASK_BYTES = 128 * 2**20


def batches(items: Iterable[T], size: Callable[[T], int], limit: int) -> Iterator[list[T]]:
    """`items` in order, in runs whose sizes add up to at most `limit` (a bigger item alone)."""
    batch: list[T] = []
    total = 0
    for item in items:
        if batch and total + size(item) > limit:
            yield batch
            batch, total = [], 0
        batch.append(item)
        total += size(item)
    if batch:
        yield batch


def in_threads(work: Callable[[T], R], items: list[T]) -> list[R | Exception]:
    """work(item) for every item, DRIVER_THREADS at a time; an item whose call raised maps to its exception."""

    def one(item: T) -> R | Exception:
        try:
            return work(item)
        except Exception as e:
            return e

    with ThreadPoolExecutor(DRIVER_THREADS) as pool:
        return list(pool.map(one, items))


def staging_location(table_location: str, job: str, token: str) -> str:
    """The pass's staging directory: beside the table's (same file system, so moving out of it is a
    rename), not hidden (Spark reads no hidden directory)."""
    return sibling_location(table_location, f"{job}-staging", token)


@contextlib.contextmanager
def staging_directory(spark: Any, location: str) -> Iterator[str]:
    """`location` for the block, deleted afterwards with whatever no piece moved out of it."""
    storage = job_storage(spark)
    try:
        yield location
    finally:
        if storage.exists(location):
            storage.delete(location)


def write_tasks(outputs: int, size: int) -> int:
    """Tasks writing a pass's `outputs` directories (one file or more each) from `size` bytes read: every
    core busy (left to the shuffle's own count, a session's few partitions write thousands of files in
    one task), none without an output of its own."""
    return max(1, min(outputs, max(MIN_WRITE_TASKS, -(-size // TASK_BYTES))))


@contextlib.contextmanager
def few_listing_tasks(spark: Any) -> Iterator[None]:
    """For the block, Spark lists many paths with a task per core (each listing a share), not one per path."""
    from hmsproxy.jobs.spark_sessions import is_connect

    tasks = LISTING_TASKS if is_connect(spark) else max(LISTING_TASKS, spark.sparkContext.defaultParallelism)
    before = spark.conf.get(LISTING_PARALLELISM, None)
    spark.conf.set(LISTING_PARALLELISM, str(tasks))
    try:
        yield
    finally:
        if before is None:
            spark.conf.unset(LISTING_PARALLELISM)
        else:
            spark.conf.set(LISTING_PARALLELISM, before)


def same_store(a: str, b: str) -> bool:
    """Both locations on one file system (scheme and authority), so a directory moves by rename."""
    return a.split("/", 3)[:3] == b.split("/", 3)[:3]


def known_frame(spark: Any, rows: list, schema: str, spill: str) -> Any:
    """A frame of driver-known rows: literals in the plan for a few, else a Parquet file at `spill`
    (many thousand literals would make a plan too big to build); drop_known_frame(spill) after."""
    if len(rows) <= LITERAL_ROWS:
        from hmsproxy.jobs.local_frames import frame_of

        return frame_of(spark, rows, schema)
    return _parquet_frame(spark, rows, schema, spill)


def _parquet_frame(spark: Any, rows: list, schema: str, location: str) -> Any:
    """`rows` as a Parquet file the driver writes with pyarrow and Spark reads."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyspark.sql.types import DataType

    from hmsproxy.files.storage import arrow_filesystem

    fields = DataType.fromDDL(schema).fields
    kinds = {"string": pa.string(), "int": pa.int32(), "bigint": pa.int64()}
    arrow_schema = pa.schema([(f.name, kinds[f.dataType.simpleString()]) for f in fields])
    table = pa.Table.from_pylist([dict(zip(arrow_schema.names, row)) for row in rows], schema=arrow_schema)
    filesystem, inner = arrow_filesystem(join(location, "plan.parquet"))
    filesystem.create_dir(inner.rpartition("/")[0], recursive=True)
    pq.write_table(table, inner, filesystem=filesystem)
    return spark.read.parquet(location)


def drop_known_frame(spark: Any, spill: str) -> None:
    storage = job_storage(spark)
    try:
        if storage.exists(spill):
            storage.delete(spill)
    except Exception:  # a few kilobytes left beside the table; its data is not affected
        pass


def rows_per_piece(spark: Any, fmt: str, staging: str) -> dict[int, int]:
    """piece number -> the rows written under `staging`/PIECE_COLUMN=<number> (read back, one job)."""
    storage = job_storage(spark)
    if not storage.exists(staging):  # nothing written: no piece had a row
        return {}
    frame = spark.read.format(fmt).load(staging)
    return {r[0]: r[1] for r in frame.groupBy(PIECE_COLUMN).count().collect()}


def piece_directory(staging: str, number: int) -> str:
    return join(staging, f"{PIECE_COLUMN}={number}")


#: The output file (slot) a row goes to within its piece, and Spark's name of the file it came from.
SLOT_COLUMN = "_hmsproxy_slot"
FILE_COLUMN = "_hmsproxy_file"


def footer_facts(path: str, fmt: str) -> tuple[int, list[str]]:
    """A Parquet or ORC file's rows and column names, from its footer (read on the driver)."""
    from hmsproxy.files.storage import arrow_filesystem

    filesystem, inner = arrow_filesystem(path)
    with filesystem.open_input_file(inner) as source:
        if fmt == "orc":
            from pyarrow import orc

            file = orc.ORCFile(source)
            return file.nrows, list(file.schema.names)
        import pyarrow.parquet as pq

        file = pq.ParquetFile(source)
        return file.metadata.num_rows, list(file.schema_arrow.names)


def tagged_rows(spark: Any, data: Any, tags: dict[str, tuple[int, int]], spill: str) -> Any:
    """`data` (read from the files in `tags`) with each row's PIECE_COLUMN and SLOT_COLUMN, those of the
    file it came from (path -> (piece, slot)); drop_known_frame(spill) once it is read."""
    from pyspark.sql import functions as F

    from hmsproxy.jobs.rebuild_index import spark_file_names

    names = spark_file_names(spark, data, list(tags))
    known = [(names[path], piece, slot) for path, (piece, slot) in tags.items() if path in names]
    frame = known_frame(spark, known, f"{FILE_COLUMN} string, {PIECE_COLUMN} int, {SLOT_COLUMN} int", spill)
    named = data.select("*", F.col("_metadata.file_path").alias(FILE_COLUMN))
    return named.join(F.broadcast(frame), FILE_COLUMN).select(*data.columns, PIECE_COLUMN, SLOT_COLUMN)


def one_pass(spark: Any, table_location: str, job: str, items: list[T], write: Callable[[str], Any], alone, swap_all) -> Iterator[Any]:
    """The frame of a pass over `items`: `write(staging)` writes them all into a fresh staging directory
    (what it returns goes to the swap), then `swap_all(numbered, written, staging, token)` swaps them in
    (`numbered`: each item with its number in the pass); if the pass fails, `alone(item)` does each on
    its own, so a bad one fails alone. Yields what swap_all or alone yield or return; the staging
    directory is gone afterwards."""
    from hmsproxy.jobs.swap import new_token

    token = new_token()
    with staging_directory(spark, staging_location(table_location, job, token)) as staging:
        try:
            with few_listing_tasks(spark):
                written = write(staging)
        except Exception:  # one item's data broke the pass
            for item in items:
                yield alone(item)
            return
        yield from swap_all(list(enumerate(items)), written, staging, token)

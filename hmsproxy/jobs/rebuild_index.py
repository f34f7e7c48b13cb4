"""rebuild-index: build a compact index's partitions from the base table's files, swapped in atomically.

    hmsproxy job rebuild-index shop.events.user_idx [--partition ds=2026-11-01] [--only-stale]
    hmsproxy job rebuild-index --watch [--interval S] [DB.TABLE.INDEX ...]   # index_watch.py

For each index partition (partitioned like the base table, or by a subset of its partition
columns: then it covers every base partition with its values), the job

1. lists the base partitions it covers (pyarrow's listing: the one staleness is checked with);
2. reads only the indexed columns of exactly those files, a Spark task per file, one row group
   or stripe at a time (files/compact_index.py), giving a row per (indexed values, file) with the
   row groups holding them;
3. writes those rows sorted on the indexed columns into a fresh sibling directory, with the
   build (builds.py) beside them, and reads the count back;
4. swaps it in with one metastore call (a new partition is added, an existing one re-pointed:
   jobs/swap.py) whose EnvironmentContext carries the build, which the proxy records.

A job that fails or is killed at any point before 4 leaves the previous index partition as it
was, still answering lookups for the base files it was built from.
"""

from __future__ import annotations

import argparse
import re
import time
from dataclasses import dataclass, field
from typing import Any

from hmsproxy.features.indexes.builds import BUILD_CONTEXT_KEY, IndexBuild, digest, index_files, read_manifest, write_manifest
from hmsproxy.files.storage import ArrowStorage, data_files, join
from hmsproxy.jobs.arguments import add_partition_option
from hmsproxy.jobs.errors import JobError, UsageError, one_line
from hmsproxy.jobs.job_files import job_storage
from hmsproxy.jobs.progress import FAILED, OK, SKIPPED, ItemResult, format_count, format_duration
from hmsproxy.jobs.registry import Job
from hmsproxy.jobs.spark_sessions import is_connect, spark_user
from hmsproxy.jobs.swap import Written, new_token, sibling_location, swap_in
from hmsproxy.jobs.tables import Target, data_format, list_targets, parse_spec, partition_name, reachable_store, selected_partition_names

NAME = "rebuild-index"
#: Index rows per file: an index file stays small enough to read whole, and a big index is still split.
ROWS_PER_INDEX_FILE = 4_000_000
#: Small row groups (some 10,000-20,000 compact index rows): sorted on the indexed columns, a
#: lookup reads only the few whose statistics match (one of 16 K rows: 2 ms; of 200 K rows: 20 ms).
INDEX_BLOCK_BYTES = 256 * 2**10
BLOCK_SIZE_OPTION = {"parquet": "parquet.block.size", "orc": "orc.stripe.size"}
BUCKET_COLUMN, OFFSETS_COLUMN = "_bucketname", "_offsets"


def split_index_name(text: str) -> tuple[str, str, str]:
    """'db.table.index' (or 'table.index' in database 'default') -> (db, table, index), lower-cased."""
    parts = [p.strip().lower() for p in text.strip().split(".")]
    if len(parts) == 2 and all(parts):
        return "default", parts[0], parts[1]
    if len(parts) == 3 and all(parts):
        return parts[0], parts[1], parts[2]
    raise UsageError(f"not an index name: {text!r} (expected DATABASE.TABLE.INDEX or TABLE.INDEX)")


@dataclass
class Piece:
    """One index partition and the base partitions it covers."""

    name: str  # the index partition's name; '' for an unpartitioned index table
    values: tuple[str, ...] | None  # its values in the index table's key order; None: the table itself
    base: list[Target] = field(default_factory=list)


@dataclass(frozen=True)
class Index:
    """What the job needs of the index: its definition, base table and index table."""

    name: str
    handler: Any  # its IndexHandler
    columns: tuple[str, ...]
    base: Any  # the base Table
    table: Any  # the index Table
    base_format: str
    format: str

    @property
    def keys(self) -> list[str]:
        return [k.name.lower() for k in self.table.partitionKeys or []]


def load_index(ms: Any, db: str, table: str, index: str) -> Index:
    from hmsproxy.features.indexes.handlers import get_handler
    from hmsproxy.pipeline.errors import InvalidRequest  # with the IDL: not when the CLI only lists the jobs

    found = ms.get_index(db, table, index)
    try:
        handler = get_handler(found.indexHandlerClass)
    except InvalidRequest as e:
        raise JobError(str(e)) from None
    if not found.indexTableName or not handler.uses_index_table():
        raise JobError(f"index {index} on {db}.{table} has no index table to build (handler {found.indexHandlerClass})")
    index_db, _, index_table = found.indexTableName.rpartition(".")
    # The base table first: get_index_by_name, get_table of the index table, then of the base table
    # is how the proxy recognises the Hive CLI's own rebuild, which it refuses (features/indexes/hive_rebuild.py).
    base = ms.get_table(db, table)
    itable = ms.get_table(index_db or db, index_table)
    columns = tuple(c.name.lower() for c in found.sd.cols or [])
    return Index(index, handler, columns, base, itable, data_format(base), data_format(itable))


def pieces_for(ms: Any, index: Index, specs: list[dict[str, str]]) -> list[Piece]:
    """The index partitions covering the selected base partitions, each with every base partition it covers
    (an index partition spanning several base partitions is rebuilt whole, never from a part of them)."""
    base_keys = [k.name.lower() for k in index.base.partitionKeys or []]
    selected = list_targets(ms, index.base, specs)
    everything = list_targets(ms, index.base, []) if specs and len(index.keys) < len(base_keys) else selected
    wanted = {piece_name(index, t) for t in selected}
    pieces: dict[str, Piece] = {}
    for target in everything:
        name = piece_name(index, target)
        if name in wanted:
            values = dict(zip(base_keys, target.values or ()))
            piece = pieces.setdefault(name, Piece(name, tuple(values[k] for k in index.keys) if index.keys else None))
            piece.base.append(target)
    return list(pieces.values())


def piece_name(index: Index, target: Target) -> str:
    if not index.keys:
        return ""
    base_keys = [k.name.lower() for k in index.base.partitionKeys or []]
    return partition_name(index.keys, dict(zip(base_keys, target.values or ())))


def base_partition_name(index: Index, target: Target) -> str:
    """The base partition's name as builds record it and lookups ask for it ('' for an unpartitioned table)."""
    if not target.is_partition:
        return ""
    base_keys = [k.name.lower() for k in index.base.partitionKeys or []]
    return partition_name(base_keys, dict(zip(base_keys, target.values)))


def listed(target: Target) -> list:
    storage = ArrowStorage()
    return data_files(storage.list(target.location)) if target.location and storage.exists(target.location) else []


def spark_file_name(spark: Any, path: str) -> str:
    """A file's name as Spark's `_metadata.file_path` gives it (qualified, URI-encoded)."""
    hadoop_path = spark.sparkContext._jvm.org.apache.hadoop.fs.Path(path)
    return hadoop_path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()).makeQualified(hadoop_path).toUri().toString()


#: Path segments Hadoop's URI quoting leaves as they are (a segment with any other character goes to the JVM).
_PLAIN_SEGMENT = re.compile(r"[A-Za-z0-9._=-]+")
_SCHEME_AUTHORITY = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:(//[^/]*)?")


def qualified_names(qualify: Any, files: list[str]) -> dict[str, str]:
    """file -> qualify(file), asking `qualify` (a JVM round trip or five) once per table directory rather
    than once per file: a file or directory whose name is plain (_PLAIN_SEGMENT) is its qualified parent
    plus '/' and the name, as Hadoop quotes a URI segment by segment. Two levels up at most (a file,
    its partition directory), never to a root: those are asked for themselves."""
    asked: dict[str, str] = {}

    def name_of(path: str, depth: int) -> str:
        found = asked.get(path)
        if found is None:
            parent, _, name = path.rpartition("/")
            if depth < 2 and _SCHEME_AUTHORITY.sub("", parent).strip("/") and _PLAIN_SEGMENT.fullmatch(name):
                found = f"{name_of(parent, depth + 1)}/{name}"
            else:
                found = qualify(path)
            asked[path] = found
        return found

    return {f: name_of(f, 0) for f in files}


def spark_file_names(spark: Any, data: Any, files: list[str]) -> dict[str, str]:
    """file -> its name in `data`'s `_metadata.file_path`. A classic session qualifies each path in its
    JVM as Spark does; a Connect client has none, so it asks Spark which names the files' rows carry
    and matches them by path (Spark's are URI-encoded; a file without rows is missing, and needs none)."""
    if not is_connect(spark):
        return qualified_names(lambda path: spark_file_name(spark, path), files)
    from urllib.parse import unquote, urlparse

    from pyspark.sql import functions as F

    def key(parsed) -> tuple[str, str]:
        return (parsed.scheme or "file", parsed.netloc)

    seen = [r[0] for r in data.select(F.col("_metadata.file_path")).distinct().collect()]
    by_path = {(key(urlparse(n)), unquote(urlparse(n).path)): n for n in seen}
    named = {f: by_path.get((key(urlparse(f)), urlparse(f).path)) for f in files}
    return {f: n for f, n in named.items() if n is not None}


def footer(path: str, fmt: str) -> Any:
    """A Parquet file's metadata, or an ORC file's reader (read on the driver: footers only)."""
    from hmsproxy.files.storage import arrow_filesystem

    filesystem, inner = arrow_filesystem(path)
    with filesystem.open_input_file(inner) as source:
        if fmt == "orc":
            from pyarrow import orc

            return orc.ORCFile(source).nstripes
        import pyarrow.parquet as pq

        return pq.ParquetFile(source).metadata


def row_groups(meta: Any) -> list[tuple[int, int, int]]:
    """(row group, first row, end row) of each row group of a Parquet file."""
    bounds, first = [], 0
    for group in range(meta.num_row_groups):
        end = first + meta.row_group(group).num_rows
        bounds.append((group, first, end))
        first = end
    return bounds


#: Footers read at once: each is a round trip or two to the store, so reads overlap.
FOOTER_THREADS = 16
#: Carries each index row's index partition (its number in the pass) through a pass over many.
PIECE_COLUMN = "_piece"


def file_shape(path: str, fmt: str) -> Any:
    """What index rows need of a file's footer: a Parquet file's row groups' bounds, an ORC file's stripe count."""
    meta = footer(path, fmt)
    return meta if fmt == "orc" else row_groups(meta)


def file_shapes(files: list[str], fmt: str) -> dict[str, Any]:
    """Each file's shape, read in parallel; a file whose footer can't be read maps to the exception."""
    from concurrent.futures import ThreadPoolExecutor

    def one(path: str) -> Any:
        try:
            return file_shape(path, fmt)
        except Exception as e:
            return e

    with ThreadPoolExecutor(FOOTER_THREADS) as pool:
        return dict(zip(files, pool.map(one, files)))


def index_rows(spark: Any, index: Index, shapes: dict[str, Any], piece_of: dict[str, int] | None = None, known_frame: Any = None) -> Any:
    """The compact index of the files in `shapes` (file_shapes) as a DataFrame: the indexed columns,
    `_bucketname` (the file), `_offsets` (its row groups holding those values) and `_piece` (the file's
    number in `piece_of`, else 0). All in Spark's JVM: each row's row group is found from its row
    number in the file (`_metadata.row_index`) and the footers' bounds. Spark numbers no rows within
    ORC files, so an ORC file's rows list every stripe of the file. `known_frame(rows, schema)` makes
    the frame of those bounds (default: literals in the plan, fine for a few files)."""
    from pyspark.sql import functions as F

    from hmsproxy.jobs.local_frames import frame_of

    make = known_frame or (lambda rows, schema: frame_of(spark, rows, schema))
    columns, piece_of = list(index.columns), piece_of or {}
    files = list(shapes)
    data = spark.read.format(index.base_format).load(files)
    names = spark_file_names(spark, data, files)
    files = [f for f in files if f in names]
    if index.base_format == "orc":
        stripes = [(names[f], f, piece_of.get(f, 0), shapes[f]) for f in files]
        known = make(stripes, f"spark_name string, bucket string, {PIECE_COLUMN} int, stripes long")
        located = data.select(*columns, F.col("_metadata.file_path").alias("spark_name")).join(F.broadcast(known), "spark_name")
        offsets = F.first(F.sequence(F.lit(0).cast("long"), F.col("stripes") - 1)).alias(OFFSETS_COLUMN)
        return located.groupBy(*columns, "bucket", PIECE_COLUMN).agg(offsets).withColumnRenamed("bucket", BUCKET_COLUMN)
    bounds = [(names[f], f, piece_of.get(f, 0), *group) for f in files for group in shapes[f]]
    known = make(bounds, f"spark_name string, bucket string, {PIECE_COLUMN} int, rg long, row_from long, row_to long")
    rows = data.select(*columns, F.col("_metadata.file_path").alias("spark_name"), F.col("_metadata.row_index").alias("row"))
    located = rows.join(
        F.broadcast(known), (rows.spark_name == known.spark_name) & (rows.row >= known.row_from) & (rows.row < known.row_to)
    )
    offsets = F.sort_array(F.collect_set("rg")).alias(OFFSETS_COLUMN)
    grouped = located.groupBy(*[rows[c] for c in columns], "bucket", PIECE_COLUMN).agg(offsets)
    return grouped.withColumnRenamed("bucket", BUCKET_COLUMN)


def readable_shapes(files: list[str], fmt: str) -> dict[str, Any]:
    """file_shapes, raising the first unreadable file's error."""
    shapes = file_shapes(files, fmt)
    for path, shape in shapes.items():
        if isinstance(shape, Exception):
            raise JobError(f"can't read the footer of {path}: {one_line(shape)}")
    return shapes


def write_index(spark: Any, index: Index, files: list[str], location: str) -> int:
    """The compact index of `files`, sorted, into `location`; the number of index rows (read back)."""
    columns = list(index.columns)
    if not files:
        return 0
    frame = index_rows(spark, index, readable_shapes(files, index.base_format)).select(*columns, BUCKET_COLUMN, OFFSETS_COLUMN)
    frame = frame.persist()
    try:
        count = frame.count()
        parts = max(1, -(-count // ROWS_PER_INDEX_FILE))
        writer = frame.repartitionByRange(parts, *columns).sortWithinPartitions(*columns).write.format(index.format)
        writer = writer.option(BLOCK_SIZE_OPTION[index.format], INDEX_BLOCK_BYTES)
        writer.option("mapreduce.fileoutputcommitter.marksuccessfuljobs", "false").mode("error").save(location)
    finally:
        frame.unpersist()
    written = spark.read.format(index.format).load(location).count()
    if written != count:
        raise JobError(f"wrote {written} index rows but built {count}; not swapped")
    return count


class BuildCatalog:
    """The swap's catalog: its re-pointing call carries the build, known once the files are written
    (the proxy records it with the change)."""

    def __init__(self, ms: Any, made: dict[str, IndexBuild]):
        self._ms = ms
        self._made = made

    def context(self) -> dict[str, str]:
        return {BUILD_CONTEXT_KEY: self._made["build"].to_json()}

    def get_partition(self, db: str, table: str, values: list[str]) -> Any:
        return self._ms.get_partition(db, table, values)

    def get_table(self, db: str, table: str) -> Any:
        return self._ms.get_table(db, table)

    def alter_partition(self, db: str, table: str, partition: Any) -> None:
        self._ms.alter_partition_with_context(db, table, partition, self.context())

    def alter_table(self, db: str, table: str, new_table: Any) -> None:
        self._ms.alter_table_with_context(db, table, new_table, self.context())


def new_partition(index: Index, values: tuple[str, ...], location: str) -> Any:
    import copy

    from hmsproxy.protocol import idl

    sd = copy.deepcopy(index.table.sd)
    sd.location = location
    now = int(time.time())
    t = index.table
    return idl.hive.Partition(
        values=list(values), dbName=t.dbName, tableName=t.tableName, createTime=now, lastAccessTime=now, sd=sd, parameters={}
    )


def rebuild_piece(
    spark: Any, ms: Any, index: Index, piece: Piece, *, only_stale: bool, connect: Any, token: str | None = None
) -> ItemResult:
    """Build one index partition and swap it in, under a shared read lock on the base partitions it
    covers (locks.py: a compact's exclusive lock on one of them and this build wait for each other,
    so the files listed are the files read); raises with the previous one left as it was.
    `connect()` opens the lock's heartbeat connection."""
    from hmsproxy.jobs.locks import shared_read_lock  # Thrift: not for `hmsproxy --help`

    with shared_read_lock(ms, piece.base, connect):
        return _rebuild_locked(spark, ms, index, locked_view(ms, index, piece), only_stale=only_stale, token=token)


def locked_view(ms: Any, index: Index, piece: Piece) -> Piece:
    """The piece with its base partitions' locations read again under the lock: a compact that held the
    partition before swapped it to a new directory, and the files to index are those."""
    db, table = index.base.dbName, index.base.tableName
    if not any(b.is_partition for b in piece.base):
        return Piece(piece.name, piece.values, [Target(db, table, f"{db}.{table}", ms.get_table(db, table).sd.location)])
    now = {tuple(p.values): p.sd.location or "" for p in ms.partitions_by_names(db, table, [b.name for b in piece.base])}
    base = [Target(db, table, b.name, now[b.values], b.values) for b in piece.base if b.values in now]  # dropped meanwhile: gone
    return Piece(piece.name, piece.values, base)


@dataclass
class Plan:
    """One index partition as listed under the lock: its base files and what was there before."""

    piece: Piece
    existing: Any  # the index Partition (the index Table when unpartitioned), None if never built
    digests: tuple[tuple[str, str], ...]
    files: list[str]
    fresh: ItemResult | None = None  # set when --only-stale finds it unchanged since its build


def plan_piece(index: Index, piece: Piece, existing: Any, *, only_stale: bool) -> Plan:
    """List the piece's base partitions and, with `only_stale`, tell whether its last build still holds."""
    listings = {base_partition_name(index, b): listed(b) for b in piece.base}
    digests = tuple(sorted((name, digest(entries)) for name, entries in listings.items()))
    files = [join(b.location, e.name) for b in piece.base for e in listings[base_partition_name(index, b)]]
    plan = Plan(piece, existing, digests, files)
    if only_stale and existing is not None and existing.sd.location:
        previous = read_manifest(existing.sd.location)
        if (
            previous is not None
            and all(previous.digest_of(n) == d for n, d in digests)
            and previous.describes(ArrowStorage().list(existing.sd.location))  # still its own files beside it
        ):
            plan.fresh = ItemResult(SKIPPED, rows=previous.rows, note="fresh: its base files are unchanged since its last build")
    return plan


def _rebuild_locked(spark: Any, ms: Any, index: Index, piece: Piece, *, only_stale: bool, token: str | None) -> ItemResult:
    t = index.table
    existing = ms.find_partition(t.dbName, t.tableName, list(piece.values)) if index.keys else t
    plan = plan_piece(index, piece, existing, only_stale=only_stale)
    if plan.fresh is not None:
        return plan.fresh

    def build(location: str) -> int:
        from hmsproxy.jobs.index_builders import builder_for  # with the IDL: not when the CLI only lists the jobs

        return builder_for(index.handler).build(spark, index, plan.files, location)

    return swap_piece(spark, ms, index, plan, build, token=token)


def swap_piece(spark: Any, ms: Any, index: Index, plan: Plan, build: Any, *, token: str | None) -> ItemResult:
    """Write the piece's index into a fresh directory with `build(location)` (its index rows), record the
    build beside it and swap it in: a new partition with one add_partition, an existing one re-pointed
    (jobs/swap.py); raises with the previous one left as it was."""
    t, piece = index.table, plan.piece
    made: dict[str, IndexBuild] = {}

    def write(location: str) -> Written:
        made["build"], written = write_build(plan, build, location)
        return written

    catalog = BuildCatalog(ms, made)
    storage = job_storage(spark)
    if plan.existing is None:  # never built: the new partition appears with one add_partition
        location = sibling_location(join(t.sd.location, piece.name), NAME, token or new_token())
        try:
            written = write(location)
            ms.add_partition(new_partition(index, piece.values, location), catalog.context())
        except BaseException:
            if storage.exists(location):
                storage.delete(location)
            raise
    else:
        existing = plan.existing
        target = Target(t.dbName, t.tableName, piece.name or f"{t.dbName}.{t.tableName}", existing.sd.location, piece.values)
        snapshot = data_files(storage.list(target.location)) if storage.exists(target.location) else []
        written = swap_in(target, write, storage=storage, catalog=catalog, snapshot=snapshot, job=NAME, token=token).written
    return ItemResult(OK, rows=written.rows, bytes=written.bytes, note=built_note(plan))


def write_build(plan: Plan, build: Any, location: str) -> tuple[IndexBuild, Written]:
    """The piece's index files into `location` with `build(location)` (their index rows), and the build
    describing them beside them."""
    rows = build(location)
    written = data_files(ArrowStorage().list(location)) if ArrowStorage().exists(location) else []
    made = IndexBuild(plan.piece.name, int(time.time()), rows, len(plan.files), plan.digests, index_files(written))
    write_manifest(location, made)
    before_swap_check()  # a test seam: fail (or die) here to prove nothing is swapped
    return made, Written(rows, len(written), sum(e.size for e in written))


def built_note(plan: Plan) -> str:
    return f"{len(plan.files)} base file(s) in {len(plan.piece.base)} partition(s)"


def before_swap_check() -> None:
    """Does nothing; tests replace it to fail or kill a rebuild after writing and before the swap."""


def built_pieces(spark: Any, ms: Any, index: Index, pieces: list[Piece], *, only_stale: bool, connect: Any):
    """Each piece with its result: COMPACT indexes a batch of pieces per Spark pass (rebuild_pass.py),
    other handlers' builders one piece at a time."""
    from hmsproxy.features.indexes.compact import COMPACT

    if index.handler.class_name == COMPACT:
        from hmsproxy.jobs.rebuild_pass import batches, rebuild_batch

        for batch in batches(pieces):
            ended: dict[str, ItemResult] = {}
            try:
                for piece, result in rebuild_batch(spark, ms, index, batch, only_stale=only_stale, connect=connect):
                    ended[piece.name] = result
            except Exception as e:  # the lock or the plan failed: the pieces not yet done are left as they were
                ended = {p.name: ended.get(p.name) or ItemResult(FAILED, note=one_line(e)) for p in batch}
            yield from ((p, ended[p.name]) for p in batch)  # in the order asked for, as one by one
        return
    for piece in pieces:
        try:
            yield piece, rebuild_piece(spark, ms, index, piece, only_stale=only_stale, connect=connect)
        except Exception as e:
            yield piece, ItemResult(FAILED, note=one_line(e))


def rebuild(spark: Any, ms: Any, db: str, table: str, index_name: str, context: Any, *, specs=(), only_stale: bool = False) -> int:
    """Rebuild the index's partitions (those covering `specs`, else all) with progress; the number built.
    Raises JobError naming the first failure after trying every partition."""
    index = load_index(ms, db, table, index_name)
    pieces = pieces_for(ms, index, list(specs))
    title = f"{NAME} {db}.{table}.{index_name}"
    if not pieces:
        context.out(f"{title}: the table has no partitions; nothing to build")
        return 0
    failures: list[tuple[str, str]] = []
    with context.progress(title, len(pieces)) as progress:
        for piece, result in built_pieces(spark, ms, index, pieces, only_stale=only_stale, connect=context.metastore):
            item = piece.name or f"{db}.{table}"
            progress.start(item)
            if result.status == FAILED:  # this index partition is left as it was; the others go on
                failures.append((item, result.note))
            progress.finish(item, result)
        built = progress.done - progress.failed - progress.skipped
        context.out(
            f"{title}: {built} built, {progress.skipped} fresh and skipped, {progress.failed} failed; "
            f"{format_count(progress.rows)} index rows in {format_duration(progress.elapsed)}"
        )
    if failures:
        first, reason = failures[0]
        raise JobError(f"failed for {len(failures)} of {len(pieces)} index partitions (left as they were); {first}: {reason}")
    return built


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from hmsproxy.jobs.index_watch import DEFAULT_INTERVAL_S, DEFAULT_MAX_PER_ROUND

    parser.add_argument(
        "index",
        metavar="INDEX",
        nargs="*",
        help="DATABASE.TABLE.INDEX (or TABLE.INDEX in database 'default'); --watch takes several, or none",
    )
    add_partition_option(parser, "base partitions")
    parser.add_argument("--only-stale", action="store_true", help="skip index partitions whose base files are unchanged since their build")
    parser.add_argument(
        "--watch",
        action="store_true",
        help="keep rebuilding stale partitions (of the indexes named, else of every AUTO REBUILD index) until SIGTERM/SIGINT",
    )
    parser.add_argument("--interval", type=float, default=DEFAULT_INTERVAL_S, metavar="S", help="--watch: seconds between rounds")
    parser.add_argument(
        "--max-per-round", type=int, default=DEFAULT_MAX_PER_ROUND, metavar="N", help="--watch: index partitions rebuilt at most per round"
    )


def check_index(ms: Any, db: str, table: str, index_name: str, specs: list[dict[str, str]]) -> None:
    """What refuses the job without Spark: the index, its tables, the base partitions asked for, and the
    stores of both tables (the base's files are read, the index table's written)."""
    index = load_index(ms, db, table, index_name)
    selected_partition_names(ms, index.base, specs)
    reachable_store(index.base)
    reachable_store(index.table)


def run(args: argparse.Namespace, context: Any) -> int:
    from hmsproxy.jobs.skew_layout import open_metastore

    if args.watch:
        return run_watch(args, context)
    if len(args.index) != 1:
        raise UsageError("name one index (DATABASE.TABLE.INDEX); several, or none, only with --watch")
    db, table, index_name = split_index_name(args.index[0])
    specs = [parse_spec(s) for s in args.partition]
    context.check_first(lambda ms: check_index(ms, db, table, index_name, specs), connect=open_metastore)
    spark = context.spark
    with open_metastore(context.uri, user=spark_user(spark), sasl_principal=context.sasl_principal) as ms:
        rebuild(spark, ms, db, table, index_name, context, specs=specs, only_stale=args.only_stale)
    return 0


def run_watch(args: argparse.Namespace, context: Any) -> int:
    from hmsproxy.jobs.index_watch import watch
    from hmsproxy.jobs.skew_layout import open_metastore

    if args.partition:
        raise UsageError("--watch checks every partition: leave out --partition")
    if args.interval <= 0 or args.max_per_round < 1:
        raise UsageError("--interval must be above 0 and --max-per-round at least 1")
    named = [split_index_name(text) for text in args.index]
    context.check_first(lambda ms: [load_index(ms, *n) for n in named], connect=open_metastore)
    return watch(context, named, interval_s=args.interval, max_per_round=args.max_per_round)


JOB = Job(NAME, "build a compact index's partitions from the base table's files, swapped in atomically", add_arguments, run)

"""rebuild-index over many index partitions in one Spark pass, each still swapped in on its own.

Building partition by partition costs a few Spark jobs each (seconds of fixed cost), whatever its
size. Here a batch of index partitions (`BATCH_BASE_PARTITIONS` base partitions at most, so the
driver's plan stays bounded) is built together, under one shared read lock on all their base
partitions:

1. every base partition is listed and, with --only-stale, every previous build's manifest read, in
   parallel threads; every file's footer is read in parallel too, and a piece with an unreadable
   file fails alone, before Spark reads anything;
2. one read of all the pieces' files computes every index row with its piece's number (`_piece`),
   counts the rows per piece, and writes them with `partitionBy('_piece')` into a fresh staging
   directory beside the index table's (`<table>.hmsproxy-rebuild-index-staging-<token>`), each
   piece's rows sorted on the indexed columns; the rows read back per piece must equal those counts;
3. each piece's staging directory is moved to its fresh sibling directory, the build written beside
   it, and the batch is swapped in with a few metastore calls (index_swaps.py: one add_partitions and
   one alter_partitions carrying every build, per 500 pieces; an unpartitioned index table, one
   piece, as a single rebuild swaps it). A piece whose swap fails is left as it was; the others go on.

If the pass itself fails (a file the footers did not give away), every piece of the batch is built
on its own instead, so the bad one fails alone. Killed at any moment, the staging directory is left
unreferenced and the next run builds (or, with --only-stale, skips) each piece as usual.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from hmsproxy.files.storage import data_files, join
from hmsproxy.jobs import staged_pass
from hmsproxy.jobs.errors import JobError, one_line
from hmsproxy.jobs.index_swaps import Staged, swap_batch
from hmsproxy.jobs.job_files import job_mover, job_storage
from hmsproxy.jobs.progress import FAILED, ItemResult
from hmsproxy.jobs.rebuild_index import (
    BLOCK_SIZE_OPTION,
    BUCKET_COLUMN,
    INDEX_BLOCK_BYTES,
    NAME,
    OFFSETS_COLUMN,
    PIECE_COLUMN,
    ROWS_PER_INDEX_FILE,
    Index,
    Piece,
    Plan,
    _rebuild_locked,
    file_shapes,
    index_rows,
    plan_piece,
    swap_piece,
    write_build,
)
from hmsproxy.jobs.swap import discard, new_token, sibling_location
from hmsproxy.jobs.tables import Target

#: Base partitions read in one pass: bounds the driver's plan (listings, footers' bounds) per pass.
BATCH_BASE_PARTITIONS = 2000
#: Threads listing partitions, reading manifests and moving staged directories: each is a round trip to the store.
LISTING_THREADS = staged_pass.DRIVER_THREADS


def batches(pieces: list[Piece], limit: int = BATCH_BASE_PARTITIONS) -> Iterator[list[Piece]]:
    """The pieces in order, in runs covering at most `limit` base partitions (a bigger piece alone)."""
    return staged_pass.batches(pieces, lambda piece: len(piece.base), limit)


def rebuild_batch(
    spark: Any, ms: Any, index: Index, pieces: list[Piece], *, only_stale: bool, connect: Any, token: str | None = None
) -> Iterator[tuple[Piece, ItemResult]]:
    """Build and swap in every piece of the batch (module doc); yields each piece with its result,
    a failure as a FAILED result with its one-line reason."""
    from hmsproxy.jobs.locks import shared_read_lock  # Thrift: not for `hmsproxy --help`

    with shared_read_lock(ms, [b for p in pieces for b in p.base], connect):
        yield from _batch_locked(spark, ms, index, locked_views(ms, index, pieces), only_stale=only_stale, token=token)


def locked_views(ms: Any, index: Index, pieces: list[Piece]) -> list[Piece]:
    """rebuild_index.locked_view of every piece, with one metastore call for all their base partitions."""
    from hmsproxy.jobs.rebuild_index import locked_view

    db, table = index.base.dbName, index.base.tableName
    if not any(b.is_partition for p in pieces for b in p.base):
        return [locked_view(ms, index, p) for p in pieces]
    names = [b.name for p in pieces for b in p.base]
    now = {tuple(p.values): p.sd.location or "" for p in ms.partitions_by_names(db, table, names)}
    return [
        Piece(p.name, p.values, [Target(db, table, b.name, now[b.values], b.values) for b in p.base if b.values in now]) for p in pieces
    ]


def existing_partitions(ms: Any, index: Index, pieces: list[Piece]) -> dict[str, Any]:
    """piece name -> its index Partition (the index Table when unpartitioned), for those built before."""
    t = index.table
    if not index.keys:
        return {p.name: t for p in pieces}
    found = ms.partitions_by_names(t.dbName, t.tableName, [p.name for p in pieces])
    by_values = {tuple(p.values): p for p in found}
    return {p.name: by_values[p.values] for p in pieces if p.values in by_values}


def _batch_locked(spark: Any, ms: Any, index: Index, pieces: list[Piece], *, only_stale: bool, token: str | None):
    existing = existing_partitions(ms, index, pieces)
    with ThreadPoolExecutor(LISTING_THREADS) as pool:
        plans = list(pool.map(lambda p: plan_piece(index, p, existing.get(p.name), only_stale=only_stale), pieces))
    to_build: list[Plan] = []
    for plan in plans:
        if plan.fresh is not None:
            yield plan.piece, plan.fresh
        else:
            to_build.append(plan)
    if not to_build:
        return
    shapes = file_shapes([f for plan in to_build for f in plan.files], index.base_format)
    readable: list[Plan] = []
    for plan in to_build:
        bad = next((f for f in plan.files if isinstance(shapes[f], Exception)), None)
        if bad is not None:
            yield plan.piece, ItemResult(FAILED, note=f"can't read the footer of {bad}: {one_line(shapes[bad])}")
        else:
            readable.append(plan)
    token = token or new_token()
    staging = sibling_location(index.table.sd.location, f"{NAME}-staging", token)  # Spark reads no hidden directory
    storage = job_storage(spark)
    try:
        try:
            with staged_pass.few_listing_tasks(spark):
                counts = write_pass(spark, index, readable, {f: shapes[f] for p in readable for f in p.files}, staging)
        except Exception:  # one piece's data broke the pass: each on its own, so that one fails alone
            yield from _one_by_one(spark, ms, index, readable, token)
            return
        mover = job_mover(spark)
        if not index.keys:  # the index table itself: one piece, swapped as a single rebuild swaps it
            for number, plan in enumerate(readable):
                yield plan.piece, _swap_staged(spark, ms, index, plan, staging, number, counts, mover, storage, token)
            return

        def stage(number: int) -> Staged | Exception:
            try:
                return _stage(index, readable[number], staging, number, counts, mover, storage, token)
            except Exception as e:  # this piece is left as it was; the others go on
                return e

        with ThreadPoolExecutor(LISTING_THREADS) as pool:  # a rename, a listing and a manifest each: round trips
            outcomes = list(pool.map(stage, range(len(readable))))
        for plan, outcome in zip(readable, outcomes):
            if isinstance(outcome, Exception):
                yield plan.piece, ItemResult(FAILED, note=one_line(outcome))
        staged = [s for s in outcomes if isinstance(s, Staged)]
        yield from ((s.plan.piece, result) for s, result in swap_batch(ms, index, staged, storage))
    finally:
        if storage.exists(staging):
            storage.delete(staging)


def _one_by_one(spark: Any, ms: Any, index: Index, plans: list[Plan], token: str):
    for plan in plans:
        try:
            yield plan.piece, _rebuild_locked(spark, ms, index, plan.piece, only_stale=False, token=token)
        except Exception as e:
            yield plan.piece, ItemResult(FAILED, note=one_line(e))


def _swap_staged(spark, ms, index, plan, staging, number, counts, mover, storage, token) -> ItemResult:
    expected, written = counts.get(number, (0, 0))
    source = join(staging, f"{PIECE_COLUMN}={number}")

    def build(location: str) -> int:
        if written != expected:
            raise JobError(f"wrote {written} index rows but built {expected}; not swapped")
        if expected:
            mover.move(source, location)
        return expected

    try:
        return swap_piece(spark, ms, index, plan, build, token=token)
    except Exception as e:  # this piece is left as it was; the others go on
        return ItemResult(FAILED, note=one_line(e))


def _stage(index, plan, staging, number, counts, mover, storage, token) -> Staged:
    """The piece's index rows moved from the staging directory into a fresh directory of its own, its
    build beside them; raises with nothing left behind."""
    expected, written = counts.get(number, (0, 0))
    if written != expected:
        raise JobError(f"wrote {written} index rows but built {expected}; not swapped")
    existing = plan.existing
    old = existing.sd.location if existing is not None else join(index.table.sd.location, plan.piece.name)
    location = sibling_location(old, NAME, token)
    if storage.exists(location):
        raise JobError(f"{location} already exists; not overwriting it")
    snapshot = data_files(storage.list(old)) if existing is not None and storage.exists(old) else []

    def build(target: str) -> int:
        if expected:
            mover.move(join(staging, f"{PIECE_COLUMN}={number}"), target)
        return expected

    try:
        made, files = write_build(plan, build, location)
    except BaseException as e:
        discard(storage, location, e)
        raise
    return Staged(plan, location, made, files, snapshot)


def write_pass(spark: Any, index: Index, plans: list[Plan], shapes: dict[str, Any], staging: str) -> dict[int, tuple[int, int]]:
    """One read of every plan's files, the index rows of plan i written under `staging`/_piece=i sorted
    on the indexed columns; plan number -> (index rows built, index rows read back)."""

    columns = list(index.columns)
    piece_of = {f: number for number, plan in enumerate(plans) for f in plan.files}
    if not piece_of:
        return {}

    def known_frame(rows: list, schema: str) -> Any:
        return staged_pass.known_frame(spark, rows, schema, f"{staging}-plan")

    frame = index_rows(spark, index, shapes, piece_of, known_frame).select(*columns, BUCKET_COLUMN, OFFSETS_COLUMN, PIECE_COLUMN)
    frame = frame.persist()
    try:
        built = {r[0]: r[1] for r in frame.groupBy(PIECE_COLUMN).count().collect()}
        total = sum(built.values())
        parts = max(-(-total // ROWS_PER_INDEX_FILE), min(len(plans), 16))
        ordered = frame.repartitionByRange(parts, PIECE_COLUMN, *columns).sortWithinPartitions(PIECE_COLUMN, *columns)
        writer = ordered.write.format(index.format).partitionBy(PIECE_COLUMN).option(BLOCK_SIZE_OPTION[index.format], INDEX_BLOCK_BYTES)
        writer.option("mapreduce.fileoutputcommitter.marksuccessfuljobs", "false").mode("error").save(staging)
    finally:
        frame.unpersist()
        staged_pass.drop_known_frame(spark, f"{staging}-plan")
    read_back = spark.read.format(index.format).load(staging) if built else None
    back = {r[0]: r[1] for r in read_back.groupBy(PIECE_COLUMN).count().collect()} if read_back is not None else {}
    return {number: (built.get(number, 0), back.get(number, 0)) for number in range(len(plans))}

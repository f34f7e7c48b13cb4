"""compact over many partitions in one Spark pass, each partition still swapped in on its own.

Compacting partition by partition costs a few Spark jobs each (most of a second of fixed cost),
whatever its size. Here a batch of partitions (`BATCH_PARTITIONS` at most, so the driver's plan stays
bounded) is compacted together:

1. every partition is listed and every file's footer read (its row count) in parallel threads, on the
   driver; those with nothing to do are skipped with compact's usual notes, and a partition with an
   unreadable footer is compacted on its own before the pass (so it fails alone, with Spark's reason);
2. one Spark job reads all the remaining files, tags each row with its partition's number in the
   pass (`_piece`, from the file it came from) and an output file slot (whole input files per slot:
   `--files N` slots per partition, or as many as `--target-file-mb` asks), and writes them with
   `partitionBy('_piece', '_hmsproxy_slot')` (all of a slot's rows in one task: one file each) into
   a fresh staging directory beside the table's (`<table>.hmsproxy-compact-staging-<token>`); one
   more job reads back every partition's rows;
3. the partitions are then swapped in 500 at a time (partition_swaps.py), under one exclusive lock
   on all of them beside streaming writers (locks.py): each one's staged files renamed into its
   fresh sibling directory and its rows checked against the footers' count (in threads), then one
   alter_partitions re-points them all, each partition's location changing at once for its readers.
   A partition whose files changed since they were listed is compacted on its own under that lock;
   a swap that fails leaves its partition as it was and the others go on.

If the pass itself fails, every partition of the batch is compacted on its own, so a bad one fails
alone. Partitions a pass can't do the same way go on their own as before: those skew-layout laid
out (compacted group by group), those with subdirectories (refused), those on another file system
than the table. A bucketed table is compacted partition by partition (one file per bucket, written
by jobs/buckets.py). Killed at any moment, the staging directory is left unreferenced and the next
run compacts or skips each partition as usual.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from hmsproxy.features.skew.layout import from_parameters
from hmsproxy.files.storage import Entry, Storage, data_dirs, data_files, join
from hmsproxy.jobs import staged_pass
from hmsproxy.jobs.compact import NAME, compact_beside_writers, compact_target, files_for, read_files
from hmsproxy.jobs.errors import JobError, one_line
from hmsproxy.jobs.job_files import job_mover
from hmsproxy.jobs.partition_swaps import Ready, swap_staged
from hmsproxy.jobs.progress import FAILED, OK, SKIPPED, ItemResult
from hmsproxy.jobs.staged_pass import PIECE_COLUMN, SLOT_COLUMN
from hmsproxy.jobs.swap import Swapped, Written, discard, sibling_location
from hmsproxy.jobs.tables import Target

#: Partitions compacted in one pass: bounds the driver's plan (listings, file names) per pass.
BATCH_PARTITIONS = 2000
#: The formats whose footers give their rows (the pass checks what it wrote against them).
PASS_FORMATS = ("parquet", "orc")


@dataclass(frozen=True)
class Planned:
    """A partition the pass compacts: its files as listed, their rows (footers), the files it gets."""

    target: Target
    snapshot: list[Entry]
    rows: int
    files: int


def compact_many(spark: Any, storage: Storage, ms: Any, fmt: str, table: Any, targets: list[Target], args: Any, context: Any):
    """Compact every target (partitions of a table that is not bucketed) batch by batch; yields each
    target with its result, a failure as a FAILED result with its one-line reason."""
    for batch in staged_pass.batches(targets, lambda _: 1, BATCH_PARTITIONS):
        yield from _compact_batch(spark, storage, ms, fmt, table, batch, args, context)


def _compact_batch(spark, storage, ms, fmt, table, targets, args, context) -> Iterator[tuple[Target, ItemResult]]:
    by_itself: list[Target] = []
    planned: list[Planned] = []
    for target, plan in zip(targets, _plans(storage, ms, fmt, table, targets, args)):
        if isinstance(plan, Planned):
            planned.append(plan)
        elif isinstance(plan, ItemResult):
            yield target, plan
        else:
            by_itself.append(target)
    for target in by_itself:  # what the pass does not do the same way: as compact always did
        yield target, _guarded(lambda t=target: compact_beside_writers(spark, storage, ms, fmt, t, args, context))
    if not planned:
        return
    mover = job_mover(spark)

    def alone(plan: Planned):
        return plan.target, _guarded(lambda: compact_beside_writers(spark, storage, ms, fmt, plan.target, args, context))

    def swap_all(numbered: list[tuple[int, Planned]], written: dict[int, int], staging: str, token: str):
        def stage(item: tuple[int, Planned]) -> Ready | None:
            return _stage(storage, item[1], item[0], written, staging, mover, token)

        def changed(item: tuple[int, Planned]) -> ItemResult:  # under the batch's lock already
            target = item[1].target
            return compact_target(spark, storage, ms, fmt, target, args.files, target_file_mb=args.target_file_mb)

        swapped = swap_staged(ms, storage, context.metastore, numbered, lambda item: item[1].target, stage, changed)
        for (_, plan), outcome in swapped:
            yield plan.target, _result(plan, outcome)

    yield from staged_pass.one_pass(
        spark, table.sd.location, NAME, planned, lambda staging: write_pass(spark, fmt, planned, staging), alone, swap_all
    )


def _guarded(work) -> ItemResult:
    try:
        return work()
    except Exception as e:  # this partition is left as it was; the others go on
        return ItemResult(FAILED, note=one_line(e))


def _plans(storage: Storage, ms: Any, fmt: str, table: Any, targets: list[Target], args: Any) -> list[Planned | ItemResult | None]:
    """Each target's plan: Planned for the pass, an ItemResult when it is done already (or fails),
    None when it goes on its own (see the module doc)."""
    names = [t.name for t in targets]
    parameters = {tuple(p.values): p.parameters or {} for p in ms.partitions_by_names(table.dbName, table.tableName, names)}
    listed = staged_pass.in_threads(lambda t: storage.list(t.location) if storage.exists(t.location) else None, targets)
    candidates: list[tuple[Target, list[Entry]]] = []
    plans: list[Planned | ItemResult | None] = []
    for target, entries in zip(targets, listed):
        plans.append(None)
        if (
            isinstance(entries, Exception)
            or not target.location
            or from_parameters(parameters.get(target.values, {})) is not None
            or not staged_pass.same_store(target.location, table.sd.location)
        ):
            continue
        if entries is None:
            plans[-1] = ItemResult(SKIPPED, note="its directory does not exist (no data)")
            continue
        snapshot = data_files(entries)
        wanted = files_for(sum(e.size for e in snapshot), args.target_file_mb, args.files)
        if data_dirs(entries):
            continue  # refused on its own, with its subdirectories named
        if len(snapshot) <= wanted:
            plans[-1] = ItemResult(SKIPPED, note=f"{len(snapshot)} file(s) already, at most {wanted} wanted")
            continue
        candidates.append((target, snapshot))
    files = [e.path for _, snapshot in candidates for e in snapshot]
    facts = staged_pass.in_threads(lambda path: staged_pass.footer_facts(path, fmt), files)
    rows = {f: fact if isinstance(fact, Exception) else fact[0] for f, fact in zip(files, facts)}
    at = {t.name: i for i, t in enumerate(targets)}
    for target, snapshot in candidates:
        if any(isinstance(rows[e.path], Exception) for e in snapshot):
            continue  # on its own: it fails alone, with Spark's own reason, before the pass reads anything
        total = sum(rows[e.path] for e in snapshot)
        wanted = files_for(sum(e.size for e in snapshot), args.target_file_mb, args.files)
        if total:  # a partition of empty files is compacted on its own (the pass writes no file for it)
            plans[at[target.name]] = Planned(target, snapshot, total, wanted)
    return plans


def write_pass(spark: Any, fmt: str, planned: list[Planned], staging: str) -> dict[int, int]:
    """One read of every planned partition's files, partition i's rows written under
    `staging`/_piece=i in at most its wanted number of files; partition number -> rows read back."""
    paths = [e.path for p in planned for e in p.snapshot]
    data = read_files(spark, fmt, paths)
    tags, first_slot = {}, 0
    for number, plan in enumerate(planned):  # whole files per slot: each input file's rows stay together
        for k, entry in enumerate(plan.snapshot):
            tags[entry.path] = (number, first_slot + k % plan.files)
        first_slot += plan.files
    spill = f"{staging}-plan"
    try:
        tagged = staged_pass.tagged_rows(spark, data, tags, spill)
        # Each slot's rows go to one task, and to a directory of their own: so to exactly one file.
        size = sum(e.size for p in planned for e in p.snapshot)
        tasks = staged_pass.write_tasks(first_slot, size)
        ordered = tagged.repartition(tasks, SLOT_COLUMN).select(*data.columns, PIECE_COLUMN, SLOT_COLUMN)
        writer = ordered.write.format(fmt).partitionBy(PIECE_COLUMN, SLOT_COLUMN).mode("error")
        writer.option("mapreduce.fileoutputcommitter.marksuccessfuljobs", "false").save(staging)
    finally:
        staged_pass.drop_known_frame(spark, spill)
    return staged_pass.rows_per_piece(spark, fmt, staging)


def _stage(storage: Storage, plan: Planned, number: int, written: dict[int, int], staging: str, mover, token: str) -> Ready | None:
    """The partition's staged files renamed into its fresh sibling directory and checked (rows against
    the footers', files against those staged); None when its files changed since the pass read them.
    Raises with nothing left behind."""
    target = plan.target
    if _names(data_files(storage.list(target.location))) != _names(plan.snapshot):  # written to since it was read
        return None
    got = written.get(number, 0)
    if got != plan.rows:  # never swap in a file set that lost or gained rows
        raise JobError(f"wrote {got} rows but read {plan.rows}; not swapped")
    location = sibling_location(target.location, NAME, token)
    if storage.exists(location):
        raise JobError(f"{location} already exists; not overwriting it")
    try:
        staged = [f for slot in _slots(storage, staging, number) for f in data_files(storage.list(slot.path))]
        for k, f in enumerate(staged):  # numbered: one task writing two slots names both files alike
            mover.move(f.path, join(location, f"{k:05d}-{f.name}"))
        files = data_files(storage.list(location)) if storage.exists(location) else []
        if not staged or _names([replace(f, name=f"{k:05d}-{f.name}") for k, f in enumerate(staged)]) != _names(files):
            raise JobError(f"moved {len(staged)} staged files but {len(files)} are in {location}; not swapped")
    except BaseException as e:
        discard(storage, location, e)
        raise
    return Ready(target, location, Written(plan.rows, len(files), sum(e.size for e in files)), plan.snapshot)


def _result(plan: Planned, outcome: Swapped | ItemResult | Exception) -> ItemResult:
    if isinstance(outcome, Exception):  # this partition is left as it was; the others go on
        return ItemResult(FAILED, note=one_line(outcome))
    if isinstance(outcome, ItemResult):
        return outcome
    note = f"{len(plan.snapshot)} → {outcome.written.files} files"
    if outcome.warning:
        note += f"; warning: {outcome.warning}"
    return ItemResult(OK, rows=outcome.written.rows, bytes=outcome.written.bytes, note=note)


def _slots(storage: Storage, staging: str, number: int) -> list[Entry]:
    """The partition's slot directories in staging (named `_hmsproxy_slot=<k>`: hidden from data_dirs)."""
    return [e for e in storage.list(staged_pass.piece_directory(staging, number)) if e.is_dir and e.name.startswith(f"{SLOT_COLUMN}=")]


def _names(entries: list[Entry]) -> set[tuple[str, int]]:
    return {(e.name, e.size) for e in entries}

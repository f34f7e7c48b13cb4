"""skew-layout over many partitions in one Spark pass, each partition still swapped in on its own.

Laying out partition by partition costs four Spark jobs each (read, checksum, write, verify),
whatever its size. Here a batch of partitions (`BATCH_PARTITIONS` at most) whose skewed values are
the same (the table's, or a partition's own: one pass per distinct set) is laid out together:

1. every partition is listed (recursively), its previous layout compared with its files, and every
   file's footer read (rows, columns) in parallel threads on the driver; those laid out for these
   values already are skipped, a partition whose files lack a skewed column fails alone as before;
2. one Spark job reads every row's checksum and count per partition (`_piece`, from the file it came
   from); one writes every row under `<staging>/_piece=<i>/hmsproxy_skew_group=<n>/` (the staging
   directory beside the table's, `<table>.hmsproxy-skew-layout-staging-<token>`); one reads that back
   and checks, per partition and group, rows, checksum and that every row is in its value's group;
3. the partitions are then swapped in 500 at a time (partition_swaps.py), under one exclusive lock on
   all of them beside streaming writers: each one's staged groups renamed into its fresh sibling
   directory and placed as skew-layout places them (flat names, or Hive's list bucketing
   directories), in threads; then one alter_partitions carries every partition's location, layout
   record and SkewedInfo, each partition's changing at once for its readers. A partition whose files
   changed since they were listed is laid out on its own under that lock; a failing one is left as it
   was and the others go on.

If a pass fails, each of its partitions is laid out on its own, so a bad one fails alone; a partition
with an unreadable footer goes on its own before the pass. --detect (heavy values found per
partition), an unpartitioned table and formats other than Parquet and ORC go partition by partition.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from hmsproxy.files.storage import Storage, data_files, join
from hmsproxy.jobs import skew_layout, staged_pass
from hmsproxy.jobs.compact import read_files
from hmsproxy.jobs.errors import JobError, one_line
from hmsproxy.jobs.job_files import job_mover
from hmsproxy.jobs.partition_swaps import Ready, swap_staged
from hmsproxy.jobs.progress import FAILED, SKIPPED, ItemResult
from hmsproxy.jobs.skew_layout import (
    GROUP_COLUMN,
    NAME,
    STAGING,
    Found,
    Plan,
    already_laid_out,
    checksum_expr,
    examine,
    group_stats,
    laid_out_result,
    layout_alone,
    layout_amender,
    layout_target,
    list_files,
    place_groups,
    recorded,
    values_for,
    write_groups,
)
from hmsproxy.jobs.staged_pass import PIECE_COLUMN
from hmsproxy.jobs.swap import discard, sibling_location
from hmsproxy.jobs.tables import Target

#: Partitions laid out in one pass: bounds the driver's plan (listings, file names) per pass.
BATCH_PARTITIONS = 2000
PASS_FORMATS = ("parquet", "orc")


@dataclass(frozen=True)
class Planned:
    """A partition the pass lays out: what examine found, its skewed values."""

    target: Target
    found: Found
    values: list[tuple[str, ...]]


@dataclass(frozen=True)
class Staged:
    """What the pass read and wrote for one partition: source rows and checksum, each group's (rows, checksum)."""

    rows: int
    checksum: int
    groups: list[tuple[int, int]]
    misplaced: int


def passes_apply(plan: Plan, fmt: str, table: Any, targets: list[Target]) -> bool:
    return not plan.detect and bool(table.partitionKeys) and fmt in PASS_FORMATS and len(targets) > 1


def layout_many(spark: Any, storage: Storage, ms: Any, fmt: str, table: Any, targets: list[Target], plan: Plan, context: Any):
    """Lay out every target batch by batch; yields (target, result, the values it was laid out for or None)."""
    for batch in staged_pass.batches(targets, lambda _: 1, BATCH_PARTITIONS):
        yield from _layout_batch(spark, storage, ms, fmt, table, batch, plan, context)


def _layout_batch(spark, storage, ms, fmt, table, targets, plan, context) -> Iterator[tuple[Target, ItemResult, Any]]:
    stored = {tuple(p.values): p for p in ms.partitions_by_names(table.dbName, table.tableName, [t.name for t in targets])}
    alone: list[Target] = []
    by_values: dict[tuple, list[Planned]] = {}

    def look(target: Target) -> ItemResult | Found | None:
        part = stored.get(target.values)
        if part is None or not target.location or not staged_pass.same_store(target.location, table.sd.location):
            return None
        if not storage.exists(target.location):
            return ItemResult(SKIPPED, note="its directory does not exist (no data)")
        return examine(storage, part, target)

    for target, found in zip(targets, staged_pass.in_threads(look, targets)):
        if isinstance(found, Exception):
            yield target, ItemResult(FAILED, note=one_line(found)), None
        elif isinstance(found, ItemResult):
            yield target, found, None
        elif found is None:
            alone.append(target)
        else:
            values = values_for(plan, stored[target.values])
            skipped = already_laid_out(found, plan, values)
            if skipped is not None:
                yield target, skipped, values
            else:
                by_values.setdefault(tuple(values), []).append(Planned(target, found, values))
    for target in alone:
        yield layout_alone(spark, storage, ms, fmt, target, plan, context)
    for planned in by_values.values():
        yield from _layout_pass(spark, storage, ms, fmt, table, planned, plan, context)


def _layout_pass(spark, storage, ms, fmt, table, planned: list[Planned], plan: Plan, context):
    files = [join(p.target.location, name) for p in planned for name, _ in p.found.current]
    facts = dict(zip(files, staged_pass.in_threads(lambda path: staged_pass.footer_facts(path, fmt), files)))
    ready: list[Planned] = []
    for p in planned:
        mine = [facts[join(p.target.location, name)] for name, _ in p.found.current]
        if any(isinstance(f, Exception) for f in mine) or not sum(rows for rows, _ in mine):
            yield layout_alone(spark, storage, ms, fmt, p.target, plan, context)  # fails alone, with Spark's reason
            continue
        columns = {c for _, names in mine for c in names}
        missing = [c for c in plan.columns if c not in columns]
        if missing:
            yield p.target, ItemResult(FAILED, note=f"its files have no column {', '.join(missing)}"), None
            continue
        ready.append(p)
    if not ready:
        return
    mover = job_mover(spark)

    def alone(p: Planned):
        return layout_alone(spark, storage, ms, fmt, p.target, plan, context)

    def swap_all(numbered: list[tuple[int, Planned]], staged: dict[int, Staged], staging: str, token: str):
        def stage(item: tuple[int, Planned]) -> Ready | None:
            number, p = item
            return _stage(storage, p, plan, fmt, staged.get(number), staging, number, mover, token)

        def changed(item: tuple[int, Planned]):  # under the batch's lock already
            return layout_target(spark, storage, ms, fmt, item[1].target, plan)

        swapped = swap_staged(ms, storage, context.metastore, numbered, lambda item: item[1].target, stage, changed)
        for (_, p), outcome in swapped:
            if isinstance(outcome, Exception):  # this partition is left as it was; the others go on
                yield p.target, ItemResult(FAILED, note=one_line(outcome)), None
            elif isinstance(outcome, tuple):  # laid out on its own: (result, values)
                yield p.target, *outcome
            else:
                yield p.target, laid_out_result(p.values, outcome), p.values

    yield from staged_pass.one_pass(
        spark, table.sd.location, NAME, ready, lambda staging: write_pass(spark, fmt, ready, plan, staging), alone, swap_all
    )


def write_pass(spark: Any, fmt: str, ready: list[Planned], plan: Plan, staging: str) -> dict[int, Staged]:
    """Three Spark jobs over every ready partition (module doc, 2); partition number -> Staged."""
    from pyspark.sql import functions as F

    values = ready[0].values
    tags = {join(p.target.location, name): (number, 0) for number, p in enumerate(ready) for name, _ in p.found.current}
    data = read_files(spark, fmt, list(tags))
    data_columns = list(data.columns)
    spill = f"{staging}-plan"
    try:
        tagged = staged_pass.tagged_rows(spark, data, tags, spill).select(*data_columns, PIECE_COLUMN)
        source = tagged.groupBy(PIECE_COLUMN).agg(checksum_expr(data.schema, data_columns).alias("sum"), F.count(F.lit(1)).alias("rows"))
        read = {r[PIECE_COLUMN]: (r["rows"], int(r["sum"] or 0)) for r in source.collect()}
        tasks = staged_pass.write_tasks(len(ready) * (len(values) + 1), sum(size for p in ready for _, size in p.found.current))
        write_groups(tagged, fmt, staging, plan.columns, values, by=(PIECE_COLUMN,), tasks=tasks)
    finally:
        staged_pass.drop_known_frame(spark, spill)
    back = spark.read.format(fmt).load(staging)
    groups: dict[int, list[tuple[int, int]]] = {n: [(0, 0)] * (len(values) + 1) for n in read}
    bad: dict[int, int] = {}
    for r in group_stats(back, data_columns, plan.columns, values, (PIECE_COLUMN, GROUP_COLUMN)):
        groups.setdefault(r[PIECE_COLUMN], [(0, 0)] * (len(values) + 1))[r[GROUP_COLUMN]] = (r["rows"], int(r["sum"] or 0))
        bad[r[PIECE_COLUMN]] = bad.get(r[PIECE_COLUMN], 0) + (r["bad"] or 0)
    staged = {n: Staged(rows, checksum, groups[n], bad.get(n, 0)) for n, (rows, checksum) in read.items()}
    return staged


def _stage(storage: Storage, p: Planned, plan: Plan, fmt: str, staged: Staged | None, staging: str, number: int, mover, token: str):
    """The partition's staged groups renamed into its fresh sibling directory and placed, their rows and
    checksums checked; its Ready (amended with its layout record and SkewedInfo), or None when its
    files changed since they were listed. Raises with nothing left behind."""
    target, values = p.target, p.values
    if list_files(storage, target.location) != p.found.current:  # written to since it was listed
        return None
    if staged is None:
        raise JobError("the pass read no row of it; not swapped")
    if staged.misplaced:
        raise JobError(f"{staged.misplaced} rows were written to the wrong group; not swapped")
    location = sibling_location(target.location, NAME, token)
    if storage.exists(location):
        raise JobError(f"{location} already exists; not overwriting it")
    made: dict[str, Any] = {}
    try:
        mover.move(staged_pass.piece_directory(staging, number), join(location, STAGING))
        files = place_groups(storage, mover, fmt, location, plan.columns, values, plan.subdirectories)
        skew_layout.before_swap_check()  # the test seam a partition laid out alone has too
        written = recorded(made, plan, fmt, values, location, files, staged.groups, staged.rows, staged.checksum)
    except BaseException as e:
        discard(storage, location, e)
        raise
    amend = layout_amender(made, plan.columns, values, plan.subdirectories)
    return Ready(target, location, written, data_files(p.found.top), amend)

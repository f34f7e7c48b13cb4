"""compact of a partition skew-layout laid out: each file group merged on its own, so the layout stays.

The seed's "ALTER TABLE … CONCATENATE merges files per directory". A laid-out partition keeps one
file group per skewed value plus the default group (flat names or Hive's directories); merging
them all into N plain files would put every value back in every file and void the layout. So each
group's files are rewritten into fewer files of that group, placed and named as skew-layout places
them, and the layout record is written anew with the new files: pruned reads stay pruned and read
the same rows. The checks are skew-layout's (every group's rows as recorded, the recorded checksum,
every row in its value's group); the swap (swap.py) writes the new location, the record and a
directories layout's location map in one alter_partition, under compact's lock.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hmsproxy.features.skew.layout import LAYOUT_PARAMETER, LayoutRecord, from_parameters, matches_files, to_parameter
from hmsproxy.files.storage import Storage, data_files, join
from hmsproxy.jobs.compact import NAME, compact_frame, files_for, read_files, write_files
from hmsproxy.jobs.errors import JobError
from hmsproxy.jobs.job_files import job_mover
from hmsproxy.jobs.progress import OK, SKIPPED, ItemResult
from hmsproxy.jobs.skew_layout import (
    BLOCK_SIZE_OPTION,
    GROUP_BLOCK_BYTES,
    GROUP_COLUMN,
    STAGING,
    RecordingCatalog,
    layout_amender,
    list_files,
    location_map,
    place_groups,
    verify,
)
from hmsproxy.jobs.swap import Catalog, Written, fetch, swap_in
from hmsproxy.jobs.tables import Target


def recorded_layout(catalog: Catalog, target: Target) -> LayoutRecord | None:
    """The layout record skew-layout left on the partition (or unpartitioned table), if any."""
    return from_parameters(fetch(catalog, target).parameters)


def still_laid_out(record: LayoutRecord, storage: Storage, location: str) -> bool:
    """The record describes the partition's files exactly (a streamed or inserted file voids it)."""
    return matches_files(record, list_files(storage, location))


def forgetting_layout(catalog: Catalog) -> RecordingCatalog:
    """The swap's catalog for a partition whose record no longer describes its files: the flat rewrite
    drops the record too, so the partition is plainly not laid out (SHOW SKEW says so)."""

    def drop(obj: Any) -> None:
        obj.parameters = {k: v for k, v in (obj.parameters or {}).items() if k != LAYOUT_PARAMETER}

    return RecordingCatalog(catalog, drop)


def files_per_group(record: LayoutRecord, files: int, target_file_mb: int | None) -> list[int]:
    """Each group's file count after the rewrite: `files`, or enough of about `target_file_mb` for its bytes;
    never more than it has (a group of fewer files is not split up)."""
    return [min(len(g.files), files_for(sum(f.size for f in g.files), target_file_mb, files)) for g in record.groups]


def compact_groups(
    spark: Any,
    storage: Storage,
    catalog: Catalog,
    fmt: str,
    target: Target,
    record: LayoutRecord,
    files: int,
    *,
    target_file_mb: int | None = None,
    token: str | None = None,
) -> ItemResult:
    """Compact one laid-out partition (or unpartitioned table) group by group; raises with it left as it was."""
    wanted = files_per_group(record, files, target_file_mb)
    if all(len(g.files) == n for g, n in zip(record.groups, wanted)):
        return ItemResult(SKIPPED, note=f"{len(record.files)} file(s) in {len(record.groups)} groups already, none to merge")
    values = record.skewed_values
    made: dict[str, Any] = {}

    def write(new_location: str) -> Written:
        source = [join(target.location, f.name) for f in record.files]
        data_columns = list(read_files(spark, fmt, source).columns)  # the columns skew-layout wrote, in its order
        for index, (group, n) in enumerate(zip(record.groups, wanted)):
            if group.files:  # staged as skew-layout stages its groups, so place_groups names and places them
                frame = read_files(spark, fmt, [join(target.location, f.name) for f in group.files]).select(*data_columns)
                staged = join(new_location, f"{STAGING}/{GROUP_COLUMN}={index}")
                write_files(compact_frame(frame, n), fmt, staged, {BLOCK_SIZE_OPTION[fmt]: GROUP_BLOCK_BYTES})
        placed = place_groups(storage, job_mover(spark), fmt, new_location, record.columns, values, record.subdirectories)
        counts = verify(spark, fmt, new_location, data_columns, record.columns, values, placed)
        rows, checksum = [r for r, _ in counts], str(sum(s for _, s in counts))
        if rows != [g.rows for g in record.groups] or checksum != record.checksum:
            raise JobError(
                f"wrote {rows} rows per group (checksum {checksum}) but the layout records "
                f"{[g.rows for g in record.groups]} (checksum {record.checksum}); not swapped"
            )
        groups = tuple(replace(g, files=tuple(f)) for g, f in zip(record.groups, placed))
        made["record"] = to_parameter(replace(record, groups=groups))
        if record.subdirectories:
            made["locations"] = location_map(new_location, record.columns, values)
        new_files = [f for group in placed for f in group]
        return Written(record.rows, len(new_files), sum(f.size for f in new_files))

    amend = layout_amender(made, record.columns, values, record.subdirectories)
    snapshot = data_files(storage.list(target.location))
    swapped = swap_in(target, write, storage=storage, catalog=RecordingCatalog(catalog, amend), snapshot=snapshot, job=NAME, token=token)
    w = swapped.written
    note = f"{len(record.files)} → {w.files} files in {len(record.groups)} groups, layout kept"
    if swapped.warning:
        note += f"; warning: {swapped.warning}"
    return ItemResult(OK, rows=w.rows, bytes=w.bytes, note=note)

"""Swap a batch of built index partitions in with a few metastore calls, not one per partition.

rebuild_pass.py has written each piece's index files into a fresh directory of its own, its build's
manifest beside them (`Staged`). Then, for the pieces of one partitioned index table:

1. never-built pieces are added with one `add_partitions` per `CALL_BATCH` (the metastore adds all
   of them or none), each carrying its build as a partition parameter, which the proxy takes off and
   records once the metastore accepted the call (add_partitions has no EnvironmentContext);
2. existing ones are read again with one `get_partitions_by_names`, and each whose location or files
   changed while the job ran is left as it was, its fresh directory removed (as swap.py does);
3. one `alter_partitions_with_environment_context` per `CALL_BATCH` re-points the existing ones at
   their fresh directories, each partition's location changing at once for its readers (old files
   or new, never a mix or none), and carries every piece's build, which the proxy records once the
   metastore accepted the call;
4. the old directories are removed.

A batched call that fails is made again one piece per call (a single rebuild's calls, each with its
own build), so a piece the metastore refuses fails alone and the others are swapped in. Where it
can't be told whether a call was applied, both directories of that piece are kept.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from hmsproxy.features.indexes.builds import BUILD_CONTEXT_KEY, BUILDS_CONTEXT_KEY, IndexBuild, builds_to_json
from hmsproxy.files.storage import Entry, Storage
from hmsproxy.jobs.errors import JobError, error_text, one_line
from hmsproxy.jobs.partition_swaps import CALL_BATCH  # one size for every job's batched calls
from hmsproxy.jobs.progress import FAILED, OK, ItemResult
from hmsproxy.jobs.rebuild_index import Index, Plan, built_note, new_partition
from hmsproxy.jobs.swap import Written, check_unchanged, discard, relocated
from hmsproxy.jobs.tables import Target

#: Threads listing old directories and removing them.
FILE_THREADS = 16


@dataclass(frozen=True)
class Staged:
    """A piece whose index is written and described, waiting for its swap."""

    plan: Plan
    location: str  # its fresh directory
    build: IndexBuild
    written: Written
    #: The old directory's data files before the new ones were written (none when never built).
    snapshot: list[Entry]

    @property
    def name(self) -> str:
        return self.plan.piece.name

    def done(self, warning: str = "") -> ItemResult:
        note = built_note(self.plan) + (f"; {warning}" if warning else "")
        return ItemResult(OK, rows=self.written.rows, bytes=self.written.bytes, note=note)


def swap_batch(ms: Any, index: Index, staged: list[Staged], storage: Storage) -> Iterator[tuple[Staged, ItemResult]]:
    """Swap every staged piece in (module doc); yields each with its result, in no set order."""
    for chunk in _chunks([s for s in staged if s.plan.existing is None]):
        yield from _add(ms, index, chunk, storage)
    ready: list[tuple[Staged, Any]] = []
    for chunk in _chunks([s for s in staged if s.plan.existing is not None]):
        yield from _recheck(ms, index, chunk, storage, ready)
    for chunk in _chunks(ready):
        yield from _alter(ms, index, chunk, storage)


def _chunks(items: list) -> Iterator[list]:
    for first in range(0, len(items), CALL_BATCH):
        yield items[first : first + CALL_BATCH]


def _add(ms: Any, index: Index, chunk: list[Staged], storage: Storage) -> Iterator[tuple[Staged, ItemResult]]:
    """Add the never-built pieces, each carrying its build (module doc, 1)."""
    parts = [new_partition(index, s.plan.piece.values, s.location) for s in chunk]
    try:
        ms.add_partitions([_carrying(part, s.build) for s, part in zip(chunk, parts)])
    except Exception:  # one piece the metastore refuses: each on its own, with its build
        for s, part in zip(chunk, parts):
            yield s, _add_one(ms, index, s, part, storage)
        return
    yield from ((s, s.done()) for s in chunk)


def _carrying(part: Any, build: IndexBuild) -> Any:
    carrier = copy.copy(part)
    carrier.parameters = dict(part.parameters or {}, **{BUILD_CONTEXT_KEY: build.to_json()})
    return carrier


def _add_one(ms: Any, index: Index, s: Staged, part: Any, storage: Storage) -> ItemResult:
    t = index.table
    try:
        ms.add_partition(part, {BUILD_CONTEXT_KEY: s.build.to_json()})
        return s.done()
    except Exception as e:
        try:
            there = ms.find_partition(t.dbName, t.tableName, list(s.plan.piece.values))
        except Exception:
            return ItemResult(
                FAILED, note=f"adding it failed ({one_line(error_text(e))}) and it can't be told whether it was; {s.location} is kept"
            )
        if there is not None and there.sd.location == s.location:
            return s.done()  # added after all (the answer was lost)
        return _left_as_it_was(storage, s, e, f"the metastore refused the new partition: {one_line(error_text(e))}")


def _recheck(ms: Any, index: Index, chunk: list[Staged], storage: Storage, ready: list) -> Iterator[tuple[Staged, ItemResult]]:
    """Each existing piece as the metastore has it now, re-pointed at its fresh directory (to `ready`);
    one changed meanwhile is left as it was."""
    t = index.table
    current = {tuple(p.values): p for p in ms.partitions_by_names(t.dbName, t.tableName, [s.name for s in chunk])}

    def problem(s: Staged) -> Exception | None:
        now = current.get(s.plan.piece.values)
        if now is None:
            return JobError("it was dropped while the job ran")
        try:
            check_unchanged(now, _target(index, s), storage, s.snapshot)
        except Exception as e:
            return e
        return None

    with ThreadPoolExecutor(FILE_THREADS) as pool:
        problems = list(pool.map(problem, chunk))
    for s, e in zip(chunk, problems):
        if e is None:
            ready.append((s, relocated(current[s.plan.piece.values], s.location, s.written)))
        else:
            yield s, _left_as_it_was(storage, s, e, one_line(e))


def _alter(ms: Any, index: Index, chunk: list[tuple[Staged, Any]], storage: Storage) -> Iterator[tuple[Staged, ItemResult]]:
    t = index.table
    context = {BUILDS_CONTEXT_KEY: builds_to_json(s.build for s, _ in chunk)}
    try:
        ms.alter_partitions_with_context(t.dbName, t.tableName, [part for _, part in chunk], context)
    except Exception:  # each on its own (an applied one is applied again, the same): the refused one fails alone
        for s, part in chunk:
            yield s, _alter_one(ms, index, s, part, storage)
        return
    with ThreadPoolExecutor(FILE_THREADS) as pool:
        yield from zip([s for s, _ in chunk], pool.map(lambda pair: _retire(pair[0], storage), chunk))


def _alter_one(ms: Any, index: Index, s: Staged, part: Any, storage: Storage) -> ItemResult:
    t = index.table
    try:
        ms.alter_partition_with_context(t.dbName, t.tableName, part, {BUILD_CONTEXT_KEY: s.build.to_json()})
        return _retire(s, storage)
    except Exception as e:
        try:
            now = ms.get_partition(t.dbName, t.tableName, list(s.plan.piece.values)).sd.location
        except Exception:
            old = s.plan.existing.sd.location
            return ItemResult(
                FAILED,
                note=f"the metastore call failed ({one_line(error_text(e))}) and it can't be told whether it was applied; both {old} and {s.location} are kept",
            )
        if now == s.location:
            return _retire(s, storage)  # applied (the answer was lost)
        return _left_as_it_was(storage, s, e, f"the metastore refused the new location: {one_line(error_text(e))}")


def _retire(s: Staged, storage: Storage) -> ItemResult:
    """The piece is swapped in: its old directory goes."""
    if s.plan.existing is None:
        return s.done()
    old = s.plan.existing.sd.location
    try:
        storage.delete(old)
    except Exception as e:  # the index is consistent; only an unreferenced directory is left behind
        return s.done(f"could not remove the old directory {old}: {one_line(e)}")
    return s.done()


def _target(index: Index, s: Staged) -> Target:
    t = index.table
    return Target(t.dbName, t.tableName, s.name, s.plan.existing.sd.location, s.plan.piece.values)


def _left_as_it_was(storage: Storage, s: Staged, cause: Exception, note: str) -> ItemResult:
    """The piece failed before its swap: its fresh directory goes (or the failure says where it is)."""
    try:
        discard(storage, s.location, cause)
    except Exception as e:
        note = one_line(e)
    return ItemResult(FAILED, note=note)

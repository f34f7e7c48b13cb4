"""Swap many partitions of one table to their fresh directories with a few metastore calls (issue 46).

compact's and skew-layout's passes have put each partition's new files into a fresh sibling directory
(`Ready`); here, for a batch of one table's partitions, under the exclusive lock the caller holds on
all of them:

1. one `get_partitions_by_names` per batch reads them again, and each whose location or files changed
   while the job ran is left as it was, its fresh directory removed (swap.py's check);
2. one `alter_partitions` per `CALL_BATCH` re-points the others, each partition's location (with its
   file statistics and what `amend` adds: skew-layout's record and SkewedInfo) changing at once for
   its readers: old files or new, never a mix or none;
3. the old directories are removed, in threads.

A batched call that fails is made again one partition per call, so the partition the metastore
refuses fails alone, left as it was, and the others are swapped in. Where it can't be told whether a
call was applied, both directories of that partition are kept (as swap.py does for one).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from hmsproxy.files.storage import Entry, Storage
from hmsproxy.jobs.errors import JobError, error_text, one_line
from hmsproxy.jobs.staged_pass import in_threads
from hmsproxy.jobs.swap import Swapped, Written, check_unchanged, discard, relocated
from hmsproxy.jobs.tables import Target

T = TypeVar("T")
R = TypeVar("R")

#: Partitions per lock and alter_partitions call: one metastore transaction and message each.
CALL_BATCH = 500


@dataclass(frozen=True)
class Ready:
    """A partition whose new files are in their fresh directory, checked, waiting for its swap."""

    target: Target
    location: str  # the fresh directory
    written: Written
    #: Its data files as listed before the new ones were written (the swap checks they are still those).
    snapshot: list[Entry]
    #: Adds to the re-pointed Partition what must reach the metastore in the same call.
    amend: Callable[[Any], None] | None = None


def swap_staged(
    ms: Any,
    storage: Storage,
    connect: Callable[[], Any],
    items: list[T],
    target_of: Callable[[T], Target],
    stage: Callable[[T], Ready | None],
    alone: Callable[[T], R],
) -> Iterator[tuple[T, Swapped | R | Exception]]:
    """Every item's partition swapped in, CALL_BATCH at a time under one exclusive lock on all of them
    (beside streaming writers, jobs/locks.py): `stage(item)` puts its new files in place (in threads),
    giving its Ready, or None when its files changed since the pass read them (then `alone(item)` does
    it on its own, under the same lock); then the module doc's swap. Yields each item with its Swapped,
    what alone gave, or the exception saying why it was left as it was."""
    from hmsproxy.jobs.locks import beside_writers  # Thrift: not for `hmsproxy --help`

    for first in range(0, len(items), CALL_BATCH):
        chunk = items[first : first + CALL_BATCH]
        done: dict[int, Swapped | R | Exception] = {}
        try:
            with beside_writers(ms, [target_of(item) for item in chunk], connect):
                _stage_and_swap(ms, storage, chunk, stage, alone, done)
        except Exception as e:  # the lock was not had (or not let go): what is not done fails with it
            for k in range(len(chunk)):
                done.setdefault(k, e)
        yield from ((item, done[k]) for k, item in enumerate(chunk))


def _stage_and_swap(ms, storage, chunk: list, stage, alone, done: dict) -> None:
    ready: list[Ready] = []
    at: dict[int, int] = {}  # id(Ready) -> its item's place in the chunk
    for k, staged in enumerate(in_threads(stage, chunk)):
        if isinstance(staged, Ready):
            ready.append(staged)
            at[id(staged)] = k
        elif staged is None:
            done[k] = _outcome(alone, chunk[k])
        else:
            done[k] = staged
    if ready:
        for r, outcome in _swap_chunk(ms, ready, storage):
            done[at[id(r)]] = outcome


def _swap_chunk(ms: Any, chunk: list[Ready], storage: Storage) -> Iterator[tuple[Ready, Swapped | Exception]]:
    t = chunk[0].target
    try:
        current = {tuple(p.values): p for p in ms.partitions_by_names(t.db, t.table, [r.target.name for r in chunk])}
    except Exception as e:  # nothing was changed: every fresh directory goes
        yield from ((r, _left_as_it_was(storage, r, e)) for r in chunk)
        return

    def recheck(r: Ready) -> Any:
        now = current.get(tuple(r.target.values or ()))
        if now is None:
            raise JobError("it was dropped while the job ran; left as it was")
        check_unchanged(now, r.target, storage, r.snapshot)
        updated = relocated(now, r.location, r.written)
        if r.amend is not None:
            r.amend(updated)
        return updated

    pairs: list[tuple[Ready, Any]] = []
    for r, updated in zip(chunk, in_threads(recheck, chunk)):
        if isinstance(updated, Exception):
            yield r, _left_as_it_was(storage, r, updated)
        else:
            pairs.append((r, updated))
    if not pairs:
        return
    try:
        ms.alter_partitions(t.db, t.table, [part for _, part in pairs])
    except Exception:  # each on its own (an applied one is applied again, the same): the refused one fails alone
        for r, part in pairs:  # one connection: in turn
            yield r, _outcome(_alter_one, ms, r, part, storage)
        return
    yield from zip([r for r, _ in pairs], in_threads(lambda pair: retire(pair[0], storage), pairs))


def _outcome(work: Callable[..., R], *args: Any) -> R | Exception:
    try:
        return work(*args)
    except Exception as e:
        return e


def _alter_one(ms: Any, r: Ready, part: Any, storage: Storage) -> Swapped:
    """One partition's own alter_partition, after its batch's call failed."""
    t = r.target
    try:
        ms.alter_partition(t.db, t.table, part)
        return retire(r, storage)
    except Exception as e:
        try:
            now = ms.get_partition(t.db, t.table, list(t.values or ())).sd.location
        except Exception:
            raise JobError(
                f"the metastore call failed ({one_line(error_text(e))}) and it can't be told whether it was applied; "
                f"both {t.location} and {r.location} are kept"
            ) from e
        if now == r.location:
            return retire(r, storage)  # applied (the answer was lost)
        raise _left_as_it_was(storage, r, JobError(f"the metastore refused the new location: {one_line(error_text(e))}")) from e


def retire(r: Ready, storage: Storage) -> Swapped:
    """The partition is swapped in: its old directory goes."""
    old = r.target.location
    try:
        storage.delete(old)
    except Exception as e:  # the data is consistent; only an unreferenced directory is left behind
        return Swapped(r.target, old, r.location, r.written, warning=f"could not remove the old directory {old}: {one_line(e)}")
    return Swapped(r.target, old, r.location, r.written)


def _left_as_it_was(storage: Storage, r: Ready, cause: Exception) -> Exception:
    """The partition is not swapped: its fresh directory goes (or the failure says where it is)."""
    try:
        discard(storage, r.location, cause)
    except Exception as e:
        return e
    return cause

"""A reader of every partition of a table in a loop while a job swaps them (issue 46's batched swaps):
what each read of a location that was still the partition's found there, to hold against the old
and the new files (never a mix, never none)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pyarrow.parquet as pq

from hmsproxy.files.storage import ArrowStorage, Entry, arrow_filesystem, data_files
from hmsproxy.jobs import partition_swaps
from hmsproxy.jobs.metastore import MetastoreClient


def rows_in(path: str) -> int:
    filesystem, inner = arrow_filesystem(path)
    with filesystem.open_input_file(inner) as source:
        return pq.ParquetFile(source).metadata.num_rows


def rows_of(files: list[Entry]) -> int:
    return sum(rows_in(f.path) for f in files)


class Reads:
    """(first partition value, what `look` made of its files) per read of a location still current."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, Any]] = []
        self.moved: list[str] = []  # reads whose location had changed by the time they ended

    def partitions(self) -> set[str]:
        return {value for value, _ in self.seen}


@contextmanager
def reading_partitions(
    uri: str, db: str, table: str, look: Callable[[list[Entry]], Any] = rows_of, limit_s: float = 300
) -> Iterator[Reads]:
    """For the block, a thread reads every partition of db.table in turn (its location from the
    metastore, its data files, `look(files)`, its location again) until the block ends (or `limit_s`)."""
    reads, stop = Reads(), threading.Event()

    def read_all() -> None:
        storage = ArrowStorage()
        with MetastoreClient(uri) as ms:
            deadline = time.monotonic() + limit_s
            while not stop.is_set() and time.monotonic() < deadline:
                for p in ms.partitions(db, table):
                    try:
                        found = look(data_files(storage.list(p.sd.location)))
                    except (FileNotFoundError, OSError):
                        continue  # the old directory went away after the swap: read it again next round
                    # A reader that planned on the old location re-plans once it moved (the old
                    # directory is removed after the swap): only reads of the current one count.
                    if ms.get_partition(db, table, p.values).sd.location == p.sd.location:
                        reads.seen.append((p.values[0], found))
                    else:
                        reads.moved.append(p.values[0])

    reader = threading.Thread(target=read_all, daemon=True)
    reader.start()
    try:
        yield reads
    finally:
        stop.set()
        reader.join(60)
    assert not reader.is_alive(), "the reader did not stop"


class Started(threading.Event):
    """Set once the slowed function started; `calls` counts its calls."""

    calls = 0


def slowed(monkeypatch, module: Any, name: str, before_s: float = 1, after_s: float = 2) -> Started:
    """`module.name` (a generator function: the batched swap) with a pause before and after it, so a
    reader reads before, during and after it; the event is set once it started."""
    started, real = Started(), getattr(module, name)

    def paused(*args, **kwargs):
        started.calls += 1
        started.set()
        time.sleep(before_s)
        yield from real(*args, **kwargs)
        time.sleep(after_s)

    monkeypatch.setattr(module, name, paused)
    return started


#: Partitions per swap in the refused-swap tests: their tables' dozen partitions cross batch
#: boundaries as a production table's thousands cross CALL_BATCH's 500.
REFUSED_BATCH = 5


def refused_in_the_batch(monkeypatch, value: str) -> None:
    """The metastore refuses the partition `value` in a batched alter_partitions: its new version
    carries a parameter longer than Hive's column holds (4,000 characters), so the whole call of its
    batch (REFUSED_BATCH partitions) fails and partition_swaps alters each of that batch alone."""
    monkeypatch.setattr(partition_swaps, "CALL_BATCH", REFUSED_BATCH)
    real = partition_swaps.relocated

    def relocated(current, location, written):
        new = real(current, location, written)
        if current.values == [value]:
            new.parameters = dict(new.parameters or {}, too_long="x" * 5000)
        return new

    monkeypatch.setattr(partition_swaps, "relocated", relocated)


def swapped_while_read(monkeypatch, uri: str, table: str, run_job: Callable[[], Any]) -> tuple[Any, Reads]:
    """What `run_job()` returned, and what a reader of every partition of `table` saw while its
    batched swap ran (slowed, so reads fall before, during and after it)."""
    db, name = table.split(".")
    swapping = slowed(monkeypatch, partition_swaps, "_swap_chunk")
    with reading_partitions(uri, db, name, lambda files: (rows_of(files), len(files))) as reads:
        result = run_job()
    assert swapping.is_set(), "the batched swap never ran"
    batches = -(-len(reads.partitions()) // partition_swaps.CALL_BATCH)
    assert swapping.calls == batches, f"{swapping.calls} batched swaps, not one per {partition_swaps.CALL_BATCH} partitions"
    return result, reads


def assert_failed_alone_in_the_batch(ctx, done: str, value: str, partitions: int) -> None:
    """The job's report: every other partition `done`, the refused one failed and left as it was."""
    assert f"{partitions - 1} {done}, 0 skipped, 1 failed" in ctx.stdout.getvalue()
    last = ctx.stderr.getvalue().strip().splitlines()[-1]
    assert f"failed for 1 of {partitions} partitions (left as they were); ds={value}: the metastore refused the new location" in last

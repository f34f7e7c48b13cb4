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


def slowed(monkeypatch, module: Any, name: str, before_s: float = 1, after_s: float = 2) -> threading.Event:
    """`module.name` (a generator function: the batched swap) with a pause before and after it, so a
    reader reads before, during and after it; the event is set once it started."""
    started, real = threading.Event(), getattr(module, name)

    def paused(*args, **kwargs):
        started.set()
        time.sleep(before_s)
        yield from real(*args, **kwargs)
        time.sleep(after_s)

    monkeypatch.setattr(module, name, paused)
    return started

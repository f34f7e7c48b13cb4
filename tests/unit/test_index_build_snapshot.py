"""Index builds recorded by this proxy reach its snapshot without re-reading the store
(features/indexes/snapshot.py, GenerationCache.apply), while a second proxy's builds on the same
store are still seen: a real SQLite store, two repositories over it as two proxies."""

from __future__ import annotations

import pytest

from hmsproxy.features.identity import TableRef
from hmsproxy.features.indexes.builds import IndexBuild
from hmsproxy.features.indexes.model import IndexRecord
from hmsproxy.features.indexes.snapshot import IndexSnapshot, current
from hmsproxy.features.indexes.store import INDEXES_SCHEMA, IndexRepository
from hmsproxy.store import Store

BASE = TableRef("hive", "db", "events")
RECORD = IndexRecord(BASE, "by_user", "COMPACT", True, TableRef("hive", "db", "events_by_user"), (("user_id", "bigint"),), b"")


class CountingRepository(IndexRepository):
    """The repository, counting whole-store reads."""

    loads = 0

    def snapshot(self) -> IndexSnapshot:
        self.loads += 1
        return super().snapshot()


@pytest.fixture
def stores(tmp_path):
    url = f"sqlite:///{tmp_path / 'hmsproxy.db'}"
    a, b = Store(url, [INDEXES_SCHEMA]), Store(url, [INDEXES_SCHEMA])
    yield a, b
    a.close()
    b.close()


def build(partition: str, rows: int = 1) -> IndexBuild:
    return IndexBuild(partition, 1, rows, 1, ((partition, "d"),))


def record(repository: IndexRepository, cache, builds: list[IndexBuild]) -> None:
    """What BuildRecording does: forget, then record, each applied to the cache."""
    partitions = [b.partition for b in builds]
    generation = repository.forget_builds(BASE, RECORD.name, partitions)
    cache.apply(generation, lambda s: s.with_builds(generation, BASE, RECORD.name, forgotten=partitions))
    generation = repository.record_builds(BASE, RECORD.name, builds)
    cache.apply(generation, lambda s: s.with_builds(generation, BASE, RECORD.name, recorded=builds))


def test_own_builds_reach_the_snapshot_without_reading_the_store_again(stores):
    mine = CountingRepository(stores[0])
    mine.create(RECORD)
    cache = current(mine)
    before = cache.get()
    for n in range(50):
        record(mine, cache, [build(f"ds={n}")])
    assert mine.loads == 1  # only the first load: not one per build
    assert sorted(cache.get().builds_of(RECORD)) == sorted(f"ds={n}" for n in range(50))
    assert before.builds_of(RECORD) == {}  # a reader's old snapshot is left as it was
    assert cache.get().builds_of(RECORD) == mine.snapshot().builds_of(RECORD)  # as the store has it


def test_a_batch_of_builds_is_one_store_change(stores):
    mine = CountingRepository(stores[0])
    mine.create(RECORD)
    cache = current(mine)
    cache.get()
    start = mine.generation()
    record(mine, cache, [build(f"ds={n}", rows=n) for n in range(3)])
    assert mine.generation() == start + 2  # one forget, one record, for the three
    assert {p: b.rows for p, b in cache.get().builds_of(RECORD).items()} == {"ds=0": 0, "ds=1": 1, "ds=2": 2}
    assert mine.loads == 1


def test_another_proxys_build_between_is_seen(stores):
    mine, theirs = CountingRepository(stores[0]), IndexRepository(stores[1])
    mine.create(RECORD)
    cache = current(mine)
    cache.get()
    theirs.record_build(BASE, RECORD.name, build("ds=theirs"))
    record(mine, cache, [build("ds=mine")])
    assert sorted(cache.get().builds_of(RECORD)) == ["ds=mine", "ds=theirs"]
    assert mine.loads == 2  # the other proxy's change made this one read the store again


def test_forgotten_builds_leave_the_snapshot(stores):
    mine = CountingRepository(stores[0])
    mine.create(RECORD)
    cache = current(mine)
    cache.get()
    record(mine, cache, [build("ds=1"), build("ds=2")])
    generation = mine.forget_builds(BASE, RECORD.name, ["ds=1", "ds=2"])
    cache.apply(generation, lambda s: s.with_builds(generation, BASE, RECORD.name, forgotten=["ds=1", "ds=2"]))
    assert cache.get().builds_of(RECORD) == {}
    assert mine.snapshot().builds_of(RECORD) == {}

"""GenerationCache (hmsproxy/store/snapshot.py) on a fake clock: the store's generation is read at
most once per check interval, a moved generation reloads the value, refresh() reads at once, and a
store that fails keeps the last value."""

from __future__ import annotations

from hmsproxy.store.snapshot import GenerationCache


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Records:
    """A component's records in the store: a generation counter and the value it loads; counts the queries."""

    def __init__(self):
        self.generation = 0
        self.failing = False
        self.asked = 0
        self.loads = 0

    def read_generation(self) -> int:
        self.asked += 1
        if self.failing:
            raise OSError("the store is away")
        return self.generation

    def load(self) -> str:
        self.loads += 1
        return f"records of generation {self.generation}"


def cache_over(records: Records, clock: Clock) -> GenerationCache[str]:
    return GenerationCache(records.read_generation, records.load, "nothing yet", what="records", check_interval_s=1.0, clock=clock)


def test_another_writers_change_is_seen_once_the_interval_has_passed():
    clock, records = Clock(), Records()
    cache = cache_over(records, clock)
    assert cache.get() == "records of generation 0"
    records.generation = 1  # another proxy on the same store writes
    clock.now += 0.5
    assert cache.get() == "records of generation 0"  # within the interval: not even the generation is read
    assert records.asked == 1
    clock.now += 0.5
    assert cache.get() == "records of generation 1"
    assert (records.asked, records.loads) == (2, 2)
    clock.now += 1.0
    assert cache.get() == "records of generation 1"  # the generation did not move: nothing is reloaded
    assert (records.asked, records.loads) == (3, 2)


def test_refresh_reads_at_once():
    clock, records = Clock(), Records()
    cache = cache_over(records, clock)
    cache.get()
    records.generation = 7  # this proxy wrote
    assert cache.refresh() == "records of generation 7"


def test_a_failing_store_keeps_the_last_value_and_is_asked_again_an_interval_later():
    clock, records = Clock(), Records()
    cache = cache_over(records, clock)
    cache.get()
    records.generation, records.failing = 1, True
    clock.now += 1.0
    assert cache.get() == "records of generation 0"
    assert records.asked == 2
    records.failing = False
    assert cache.get() == "records of generation 0"  # the failed check counts: no query until the interval passed
    assert records.asked == 2
    clock.now += 1.0
    assert cache.get() == "records of generation 1"


def test_own_change_is_applied_in_memory_when_it_is_the_only_one_since_the_load():
    clock, records = Clock(), Records()
    cache = cache_over(records, clock)
    cache.get()
    records.generation = 1  # this proxy wrote
    assert cache.apply(1, lambda value: value + " + mine") == "records of generation 0 + mine"
    assert records.loads == 1
    clock.now += 1.0
    assert cache.get() == "records of generation 0 + mine"  # the generation it applied is the store's: no reload
    assert records.loads == 1


def test_own_change_after_another_writers_reloads_everything():
    clock, records = Clock(), Records()
    cache = cache_over(records, clock)
    cache.get()
    records.generation = 2  # another proxy wrote (1), then this one (2)
    assert cache.apply(2, lambda value: value + " + mine") == "records of generation 2"
    assert records.loads == 2


def test_own_change_a_load_already_saw_is_not_applied_again():
    clock, records = Clock(), Records()
    cache = cache_over(records, clock)
    records.generation = 3
    cache.get()
    assert cache.apply(2, lambda value: value + " + mine") == "records of generation 3"
    assert records.loads == 1

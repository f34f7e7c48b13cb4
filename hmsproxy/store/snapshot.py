"""A value read from the store and kept in memory until its component's generation moves.

Features keep their records as an immutable snapshot that every call can read without a
query: the generation counter is read at most once per `check_interval_s`, so a second proxy
on the same store sees a change within about that long, and `refresh()` after a proxy's own
write makes it see the change at once. A writer that knows what it changed calls `apply()`
instead: its change is applied to the value in memory when it is the only one since the value
was loaded (the generation moved by exactly one), else everything is re-read as by `refresh()`;
a store with many records is then not re-read whole after each small write.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")

log = logging.getLogger(__name__)


class GenerationCache(Generic[T]):
    """`clock` (monotonic seconds) times the checks; tests give a fake one."""

    def __init__(
        self,
        generation: Callable[[], int],
        load: Callable[[], T],
        empty: T,
        *,
        what: str,
        check_interval_s: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ):
        self._generation = generation
        self._clock = clock
        self._load = load
        self._what = what
        self.check_interval_s = check_interval_s
        self._value = empty
        self._loaded_generation: int | None = None
        self._checked_at = float("-inf")
        self._lock = threading.Lock()

    def get(self) -> T:
        """The current value; asks the store (one cheap query) if the last check is older than the interval."""
        if self._clock() - self._checked_at < self.check_interval_s:
            return self._value
        with self._lock:
            if self._clock() - self._checked_at < self.check_interval_s:
                return self._value
            try:
                generation = self._generation()
                if generation != self._loaded_generation:
                    self._value = self._load()
                    self._loaded_generation = generation
            except Exception as e:  # a store hiccup must not fail calls that don't need these records
                log.warning("can't read %s from the store (keeping the last view): %s", self._what, e)
            self._checked_at = self._clock()
            return self._value

    def refresh(self) -> T:
        """Re-read now (after this proxy changed the store)."""
        with self._lock:
            self._checked_at = float("-inf")
        return self.get()

    def apply(self, generation: int, change: Callable[[T], T]) -> T:
        """This proxy's own write made the component's generation `generation`: `change(value)` is the
        value after it. Applied in memory when no other change came between (the generation moved by
        one since the value was loaded); nothing to do when a load already saw that generation; else
        (another writer's change between) a full re-read. `change` must give a new value (readers may
        hold the old one) and be idempotent: a load may already hold the change it applies."""
        with self._lock:
            loaded = self._loaded_generation
            if loaded is not None and generation <= loaded:
                return self._value
            if loaded is not None and generation == loaded + 1:
                self._value = change(self._value)
                self._loaded_generation = generation
                return self._value
        return self.refresh()


class Records(Generic[R, T]):
    """A feature's records room: its repository and the snapshot of it that `cache` keeps, the one
    thing the feature's parts are given to read (`snapshot()`) and write (`repository`, then `refresh()`)."""

    def __init__(self, repository: R, cache: GenerationCache[T]):
        self.repository = repository
        self._cache = cache

    def snapshot(self) -> T:
        """The current records; asks the store (cheaply) if the last check is older than the interval."""
        return self._cache.get()

    def refresh(self) -> T:
        """This proxy changed the records: see them at once (other proxies' changes within the interval)."""
        return self._cache.refresh()

"""jobs/partition_swaps.py on an in-memory metastore (a fake: the Spark tests of compact and skew-layout
over many partitions run it on Hive 2.3) and real directories: a batch costs one lock, one read and one
alter_partitions whatever its size; a partition the metastore refuses, whose files changed, or whose
staging failed is left as it was while the others are swapped in."""

from __future__ import annotations

import contextlib
import copy
from pathlib import Path

from hmsproxy.files.storage import ArrowStorage, data_files
from hmsproxy.jobs import partition_swaps
from hmsproxy.jobs.partition_swaps import Ready, swap_staged
from hmsproxy.jobs.swap import Swapped, Written
from hmsproxy.jobs.tables import Target
from hmsproxy.protocol import idl

hive = idl.hive


class Metastore:
    """Partitions of one table by their values; each call all or nothing, as Hive's; locks granted at once."""

    user = "job"

    def __init__(self, refused: frozenset[str] = frozenset()):
        self.parts: dict[tuple[str, ...], object] = {}
        self.calls: list[str] = []
        self.refused = refused  # partition values the metastore refuses to re-point

    def _accept(self, method: str, parts: list) -> None:
        self.calls.append(method)
        if any(p.values[0] in self.refused for p in parts):
            raise hive.MetaException(message=f"{method} refused")
        for p in parts:
            self.parts[tuple(p.values)] = copy.deepcopy(p)

    def alter_partitions(self, db, table, parts):
        self._accept("alter_partitions", parts)

    def alter_partition(self, db, table, part):
        self._accept("alter_partition", [part])

    def partitions_by_names(self, db, table, names):
        self.calls.append("partitions_by_names")
        return [copy.deepcopy(p) for v, p in self.parts.items() if f"ds={v[0]}" in names]

    def get_partition(self, db, table, values):
        return copy.deepcopy(self.parts[tuple(values)])

    def lock(self, request):
        self.calls.append("lock")
        return hive.LockResponse(lockid=1, state=hive.LockState.ACQUIRED)

    def locks_on(self, db, table, partition):
        return []

    def unlock(self, lockid):
        self.calls.append("unlock")

    def heartbeat_lock(self, lockid):
        pass

    def open_txns_info(self):
        return []


def partition(tmp_path, ms: Metastore, day: str) -> Target:
    """ds=<day>: a directory with one file, registered."""
    old = tmp_path / "t" / f"ds={day}"
    old.mkdir(parents=True)
    (old / "part-0.parquet").write_bytes(b"old")
    ms.parts[(day,)] = hive.Partition(
        values=[day], dbName="db", tableName="t", sd=hive.StorageDescriptor(location=f"file:{old}"), parameters={}
    )
    return Target("db", "t", f"ds={day}", f"file:{old}", (day,))


def staged(target: Target, amend=None) -> Ready:
    """Its new files in a fresh sibling directory, as a pass leaves them."""
    path = Path(target.location.removeprefix("file:") + ".hmsproxy-new")
    path.mkdir()
    (path / "part-new.parquet").write_bytes(b"new!")
    return Ready(target, f"file:{path}", Written(1, 1, 4), data_files(ArrowStorage().list(target.location)), amend)


def swap(ms, targets, stage=staged, alone=lambda t: "alone") -> dict[str, object]:
    found = swap_staged(ms, ArrowStorage(), lambda: contextlib.nullcontext(ms), targets, lambda t: t, stage, alone)
    return {t.name: outcome for t, outcome in found}


def test_a_batch_costs_a_lock_a_read_and_one_alter_whatever_its_size(tmp_path):
    ms = Metastore()
    targets = [partition(tmp_path, ms, f"d{i:02}") for i in range(40)]
    results = swap(ms, targets, lambda t: staged(t, amend=lambda p: p.parameters.update(record=p.values[0])))
    assert all(isinstance(r, Swapped) for r in results.values()) and len(results) == 40
    assert ms.calls == ["lock", "partitions_by_names", "alter_partitions", "unlock"]
    for t in targets:
        now = ms.parts[t.values]
        assert now.sd.location == results[t.name].new_location and now.parameters["record"] == t.values[0]  # amended in the same call
        assert not ArrowStorage().exists(t.location)  # the old directory went


def test_the_partition_the_metastore_refuses_fails_alone_and_is_left_as_it_was(tmp_path):
    ms = Metastore(refused=frozenset({"d02"}))
    targets = [partition(tmp_path, ms, f"d{i:02}") for i in range(5)]
    results = swap(ms, targets)
    refused = results.pop("ds=d02")
    assert isinstance(refused, Exception) and "the metastore refused the new location" in str(refused)
    assert all(isinstance(r, Swapped) for r in results.values())
    assert ms.calls.count("alter_partitions") == 1 and ms.calls.count("alter_partition") == 5  # then each on its own
    assert ms.parts[("d02",)].sd.location == targets[2].location and ArrowStorage().exists(targets[2].location)
    assert not ArrowStorage().exists(targets[2].location + ".hmsproxy-new")  # its new directory removed


def test_changed_files_go_alone_and_a_failed_staging_fails_alone(tmp_path):
    ms = Metastore()
    targets = [partition(tmp_path, ms, f"d{i:02}") for i in range(4)]

    def stage(t: Target):
        if t.values == ("d01",):
            return None  # its files changed since the pass read them
        if t.values == ("d02",):
            raise RuntimeError("injected: the move failed")
        return staged(t)

    results = swap(ms, targets, stage)
    assert results["ds=d01"] == "alone"
    assert isinstance(results["ds=d02"], RuntimeError)
    assert isinstance(results["ds=d00"], Swapped) and isinstance(results["ds=d03"], Swapped)
    assert ms.parts[("d01",)].sd.location == targets[1].location and ms.parts[("d02",)].sd.location == targets[2].location


def test_files_changed_after_staging_leave_the_partition_as_it_was(tmp_path):
    ms = Metastore()
    targets = [partition(tmp_path, ms, f"d{i:02}") for i in range(3)]

    def stage(t: Target):
        ready = staged(t)
        if t.values == ("d01",):  # a write lands between staging and the swap's own look
            (tmp_path / "t" / "ds=d01" / "part-late.parquet").write_bytes(b"late")
        return ready

    results = swap(ms, targets, stage)
    assert "its files changed while the job ran" in str(results["ds=d01"])
    assert ms.parts[("d01",)].sd.location == targets[1].location
    assert not ArrowStorage().exists(targets[1].location + ".hmsproxy-new")
    assert sum(isinstance(r, Swapped) for r in results.values()) == 2


def test_batches_of_call_batch(tmp_path, monkeypatch):
    monkeypatch.setattr(partition_swaps, "CALL_BATCH", 4)
    ms = Metastore()
    targets = [partition(tmp_path, ms, f"d{i:02}") for i in range(10)]
    results = swap(ms, targets)
    assert all(isinstance(r, Swapped) for r in results.values()) and len(results) == 10
    assert ms.calls.count("lock") == 3 and ms.calls.count("alter_partitions") == 3

"""jobs/index_swaps.py on an in-memory metastore (a fake: the Spark test of many partitions runs it on
Hive 2.3) and real directories: a batch costs a few metastore calls whatever its size, carrying every
build; a piece the metastore refuses, or whose files changed meanwhile, fails alone and is left as it
was while the others are swapped in."""

from __future__ import annotations

import copy
import json

import pytest

from hmsproxy.features.indexes.builds import BUILD_CONTEXT_KEY, BUILDS_CONTEXT_KEY, IndexBuild
from hmsproxy.files.storage import ArrowStorage, data_files
from hmsproxy.jobs.index_swaps import Staged, swap_batch
from hmsproxy.jobs.progress import FAILED, OK
from hmsproxy.jobs.rebuild_index import Index, Piece, Plan
from hmsproxy.jobs.swap import Written
from hmsproxy.protocol import idl

hive = idl.hive


class Metastore:
    """Partitions of one index table by their values; each call all or nothing, as Hive's."""

    def __init__(self, refused: set[str] = frozenset()):
        self.parts: dict[tuple[str, ...], object] = {}
        self.calls: list[str] = []
        self.recorded: dict[str, str] = {}  # partition name -> the build its last accepted call carried
        self.refused = refused  # partition values the metastore refuses to add or re-point

    def _accept(self, method: str, parts: list, context: dict | None = None) -> None:
        self.calls.append(method)
        if any(p.values[0] in self.refused for p in parts):
            raise hive.MetaException(message=f"{method} refused")
        carried = [
            json.loads(p.parameters.pop(BUILD_CONTEXT_KEY)) for p in parts if BUILD_CONTEXT_KEY in (p.parameters or {})
        ]  # as the proxy
        for p in parts:
            self.parts[tuple(p.values)] = copy.deepcopy(p)
        carried += json.loads((context or {}).get(BUILDS_CONTEXT_KEY, "[]"))
        carried += [json.loads(context[BUILD_CONTEXT_KEY])] if context and BUILD_CONTEXT_KEY in context else []
        self.recorded.update({b["partition"]: b for b in carried})

    def add_partitions(self, parts):
        self._accept("add_partitions", [copy.deepcopy(p) for p in parts])

    def add_partition(self, part, context):
        self._accept("add_partition", [part], context)

    def alter_partitions_with_context(self, db, table, parts, context):
        self._accept("alter_partitions", parts, context)

    def alter_partition_with_context(self, db, table, part, context):
        self._accept("alter_partition", [part], context)

    def partitions_by_names(self, db, table, names):
        self.calls.append("partitions_by_names")
        return [copy.deepcopy(p) for v, p in self.parts.items() if f"ds={v[0]}" in names]

    def get_partition(self, db, table, values):
        return copy.deepcopy(self.parts[tuple(values)])

    def find_partition(self, db, table, values):
        return copy.deepcopy(self.parts.get(tuple(values)))


def directory(path, rows: int) -> str:
    path.mkdir(parents=True)
    (path / "part-0.parquet").write_bytes(b"x" * rows)
    return f"file:{path}"


@pytest.fixture
def index(tmp_path):
    sd = hive.StorageDescriptor(location=f"file:{tmp_path}/idx", serdeInfo=hive.SerDeInfo(parameters={}))
    table = hive.Table(dbName="db", tableName="idx", sd=sd, partitionKeys=[hive.FieldSchema(name="ds", type="string")])
    return Index("i", None, ("user_id",), None, table, "parquet", "parquet")


def stage(tmp_path, ms: Metastore, day: str, *, built_before: bool) -> Staged:
    """ds=<day> written anew beside its old directory (made and registered if `built_before`)."""
    existing = None
    if built_before:
        old = directory(tmp_path / "idx" / f"ds={day}", 1)
        existing = hive.Partition(values=[day], dbName="db", tableName="idx", sd=hive.StorageDescriptor(location=old), parameters={})
        ms.parts[(day,)] = copy.deepcopy(existing)
    new = directory(tmp_path / "idx" / f"ds={day}.hmsproxy-new", 2)
    plan = Plan(Piece(f"ds={day}", (day,)), existing, ((f"ds={day}", "d"),), [f"base/ds={day}/f"])
    snapshot = data_files(ArrowStorage().list(existing.sd.location)) if existing else []
    return Staged(plan, new, IndexBuild(f"ds={day}", 1, 2, 1, ((f"ds={day}", "d"),)), Written(2, 1, 2), snapshot)


def swapped(ms, index, staged) -> dict[str, object]:
    return {s.name: result for s, result in swap_batch(ms, index, staged, ArrowStorage())}


def test_a_batch_costs_a_few_calls_whatever_its_size_and_carries_every_build(tmp_path, index):
    """New pieces carry their builds in add_partitions, existing ones in alter_partitions: one call each."""
    ms = Metastore()
    staged = [stage(tmp_path, ms, f"d{i:02}", built_before=i % 2 == 0) for i in range(40)]
    results = swapped(ms, index, staged)
    assert {r.status for r in results.values()} == {OK} and len(results) == 40
    assert ms.calls == ["add_partitions", "partitions_by_names", "alter_partitions"]
    assert sorted(ms.recorded) == sorted(s.name for s in staged)
    for s in staged:
        assert ms.parts[s.plan.piece.values].sd.location == s.location
        if s.plan.existing is not None:
            assert not ArrowStorage().exists(s.plan.existing.sd.location)  # the old directory went


def test_a_piece_the_metastore_refuses_fails_alone_and_is_left_as_it_was(tmp_path, index):
    ms = Metastore(refused={"d02", "d03"})
    staged = [stage(tmp_path, ms, f"d{i:02}", built_before=i != 3) for i in range(6)]
    results = swapped(ms, index, staged)
    refused_old, refused_new = staged[2], staged[3]
    assert results.pop("ds=d02").status == FAILED and results.pop("ds=d03").status == FAILED
    assert {r.status for r in results.values()} == {OK}
    assert ms.parts[("d02",)].sd.location == refused_old.plan.existing.sd.location  # still its old files
    assert ArrowStorage().exists(refused_old.plan.existing.sd.location)
    assert not ArrowStorage().exists(refused_old.location)  # its new directory removed
    assert ("d03",) not in ms.parts and not ArrowStorage().exists(refused_new.location)
    assert "ds=d02" not in ms.recorded and "ds=d03" not in ms.recorded
    for s in staged[:2] + staged[4:]:
        assert ms.parts[s.plan.piece.values].sd.location == s.location
        assert s.name in ms.recorded


def test_a_piece_whose_old_files_changed_meanwhile_is_left_as_it_was(tmp_path, index):
    ms = Metastore()
    staged = [stage(tmp_path, ms, f"d{i}", built_before=True) for i in range(3)]
    (tmp_path / "idx" / "ds=d1" / "part-late.parquet").write_bytes(b"late")  # another writer's file
    results = swapped(ms, index, staged)
    assert results["ds=d1"].status == FAILED and "files changed" in results["ds=d1"].note
    assert ms.parts[("d1",)].sd.location == staged[1].plan.existing.sd.location
    assert not ArrowStorage().exists(staged[1].location)
    assert results["ds=d0"].status == results["ds=d2"].status == OK

"""The indexes feature: index metadata owned by the proxy (for every backend, Hive 3+ included,
which dropped indexes), the Thrift index calls, the statements, and index tables kept safe."""

from __future__ import annotations

from hmsproxy.features.dropped_partitions import METHODS as PARTITION_DROPS
from hmsproxy.features.indexes.calls import METHODS, IndexCalls
from hmsproxy.features.indexes.hive_rebuild import GUARDED_METHOD, HiveRebuildRefusal, RebuildGuard
from hmsproxy.features.indexes.index_tables import IndexTables
from hmsproxy.features.indexes.model import IndexRecord
from hmsproxy.features.indexes.protection import Protection
from hmsproxy.features.indexes.recording import METHODS as BUILD_CALLS
from hmsproxy.features.indexes.recording import BuildRecording
from hmsproxy.features.indexes.runners import Runners
from hmsproxy.features.indexes.snapshot import IndexSnapshot, current
from hmsproxy.features.indexes.statements import STATEMENTS
from hmsproxy.features.indexes.store import INDEXES_SCHEMA, IndexRepository
from hmsproxy.features.indexes.structure import StructureGuard
from hmsproxy.pipeline.call import Call
from hmsproxy.pipeline.platform import Feature, Platform
from hmsproxy.routing.methods import MethodSpec


class Indexes(Feature):
    name = "indexes"
    memoizable_verdict = True  # its verdicts read only the call, the caller and its records
    statements = STATEMENTS
    store_schema = INDEXES_SCHEMA
    #: An index changes its index table's database (IN TABLE may name a writable one beside a
    #: read-only base table); calls.py checks that one.
    checks_own_writes = METHODS

    def __init__(self, platform: Platform):
        super().__init__(platform)
        self.repository = IndexRepository(platform.store)
        self._cache = current(self.repository)
        self.index_tables = IndexTables(self)
        self._calls = IndexCalls(self)
        self._protection = Protection(self)
        self._recording = BuildRecording(self)
        self._hive_rebuild = HiveRebuildRefusal(self)
        self._structure = StructureGuard(self)

    def wants(self, spec: MethodSpec) -> bool:
        return (
            spec.name in METHODS
            or spec.name == GUARDED_METHOD
            or spec.name in PARTITION_DROPS
            or spec.name in BUILD_CALLS
            or spec.drops_table
            or spec.alters_table
            or spec.drops_database
        )

    # -- shared by the parts ----------------------------------------------------------------

    def snapshot(self) -> IndexSnapshot:
        return self._cache.get()

    def changed(self) -> None:
        """This proxy changed the records: see them at once (others within a second)."""
        self._cache.refresh()

    def builds_changed(self, record: IndexRecord, generation: int, *, forgotten=(), recorded=()) -> None:
        """This proxy forgot or recorded builds of the index (the store's generation is now `generation`):
        applied to the snapshot in memory, not by re-reading every index and build (snapshot.py)."""
        self._cache.apply(generation, lambda s: s.with_builds(generation, record.base, record.name, forgotten, recorded))

    # -- seams --------------------------------------------------------------------------------

    def statement_runners(self) -> dict:
        return Runners(self).runners()

    def new_session_state(self) -> RebuildGuard:
        return RebuildGuard()

    def on_routed(self, call: Call):
        self._hive_rebuild.check(call)
        if call.method == GUARDED_METHOD:
            return None
        if call.method in METHODS:
            result = self._calls.answer(call)
            if call.method == "get_index_by_name":
                self._hive_rebuild.arm(call)
            return result
        self._structure.check(call)  # first: a refused call records no build
        if call.method in BUILD_CALLS:
            self._recording.on_routed(call)
        return self._protection.on_routed(call)

    def needs_result(self, call: Call) -> bool:
        return self._protection.needs_result(call) or self._recording.needs_result(call)

    def on_response(self, call: Call, result) -> None:
        self._recording.on_response(call, result)
        self._protection.on_response(call, result)

    def describe(self) -> list[str]:
        snapshot = self.snapshot()
        count = sum(len(named) for named in snapshot.by_base.values())
        return [f"Indexes: {count} on {len(snapshot.by_base)} table(s)"]

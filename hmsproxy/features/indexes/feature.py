"""The indexes feature: index metadata owned by the proxy (for every backend, Hive 3+ included,
which dropped indexes), the Thrift index calls, the statements, and index tables kept safe."""

from __future__ import annotations

from hmsproxy.features.dropped_partitions import METHODS as PARTITION_DROPS
from hmsproxy.features.indexes.calls import METHODS, IndexCalls
from hmsproxy.features.indexes.hive_rebuild import GUARDED_METHOD, HiveRebuildRefusal, RebuildGuard
from hmsproxy.features.indexes.index_tables import IndexTables
from hmsproxy.features.indexes.protection import Protection
from hmsproxy.features.indexes.recording import METHODS as BUILD_CALLS
from hmsproxy.features.indexes.recording import BuildRecording
from hmsproxy.features.indexes.runners import Runners
from hmsproxy.features.indexes.snapshot import IndexRecords
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
        # Each part is given what it uses, never this feature: its records, how to call metastores
        # as the caller (client_for), the router, the access feature.
        self.records = IndexRecords(IndexRepository(platform.store))
        client_for = platform.client_for
        index_tables = IndexTables(self.records, platform.router, client_for)
        self._calls = IndexCalls(self.records, index_tables, client_for, lambda: platform.features.get("access"))
        self._protection = Protection(self.records, index_tables, client_for)
        self._recording = BuildRecording(self.records)
        self._hive_rebuild = HiveRebuildRefusal(self.records, lambda call: call.session.state(self))
        self._structure = StructureGuard(self.records, client_for)

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

    # -- seams --------------------------------------------------------------------------------

    def statement_runners(self) -> dict:
        return Runners(self.records, self.platform.router).runners()

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
        snapshot = self.records.snapshot()
        count = sum(len(named) for named in snapshot.by_base.values())
        return [f"Indexes: {count} on {len(snapshot.by_base)} table(s)"]

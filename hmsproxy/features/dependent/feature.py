"""The dependent-tables feature: statements, the view each dependent table is served as, drop
protection and lineage (see the modules of this package for each)."""

from __future__ import annotations

from hmsproxy.features.catalog import VirtualTable
from hmsproxy.features.dependent import lineage, partitions, view
from hmsproxy.features.dependent.config import SECTION
from hmsproxy.features.dependent.protection import NOTE, Protection
from hmsproxy.features.dependent.runners import Runners
from hmsproxy.features.dependent.snapshot import DependentRecords
from hmsproxy.features.dependent.statements import STATEMENTS
from hmsproxy.features.dependent.store import DEPENDENT_SCHEMA, DependentRepository
from hmsproxy.pipeline.call import Call
from hmsproxy.pipeline.platform import Feature, Platform
from hmsproxy.routing.methods import MethodSpec


class Dependent(Feature):
    name = "dependent"
    memoizable_verdict = True  # its verdicts read only the call, the caller and its records
    statements = STATEMENTS
    store_schema = DEPENDENT_SCHEMA
    config_section = SECTION

    def __init__(self, platform: Platform):
        super().__init__(platform)
        # Each part is given what it uses, never this feature: its records, the router, the lineage emitter.
        self.records = DependentRecords(DependentRepository(platform.store))
        self._sink = lineage.LineageSink()
        self._protection = Protection(self.records, platform.router, self.emit, platform.client_for)

    def wants(self, spec: MethodSpec) -> bool:
        return spec.writes or spec.name in partitions.READS

    def emit(self, event: dict) -> None:
        """A lineage event to the configured sink, and to the audit log."""
        self._sink.emit(self.settings(self.platform.config()).lineage, event)
        audit = self.platform.features.get("audit")
        if audit is not None:
            audit.record({"event": "lineage", "lineage": event})

    # -- seams --------------------------------------------------------------------------------

    def statement_runners(self) -> dict:
        return Runners(self.records, self.platform.router, self.emit, lambda: self.platform.features.get("access")).runners()

    def on_routed(self, call: Call):
        if call.spec.name in partitions.READS:  # a dependent table's partitions are the proxy's to answer
            return partitions.on_routed(call, self.records.snapshot())
        return self._protection.on_routed(call)

    def needs_result(self, call: Call) -> bool:
        return NOTE in call.notes  # a change the notify policy let through, recorded once it is done

    def on_response(self, call: Call, result) -> None:
        self._protection.on_response(call, result)

    def virtual_tables(self, call: Call, db: str | None) -> list[VirtualTable]:
        return view.virtual_tables(self.records.snapshot(), call.router, db)

    def describe(self) -> list[str]:
        snapshot = self.records.snapshot()
        published = sum(len(p) for p in snapshot.partitions.values())
        return [f"Dependent tables: {len(snapshot.tables)}, {published} published partition(s)"]

    def close(self) -> None:
        self._sink.close()

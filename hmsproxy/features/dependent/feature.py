"""The dependent-tables feature: statements, the view each dependent table is served as, drop
protection and lineage (see the modules of this package for each)."""

from __future__ import annotations

import logging

from hmsproxy.features import identity
from hmsproxy.features.catalog import VirtualTable
from hmsproxy.features.dependent import lineage, view
from hmsproxy.features.dependent.model import DependentSnapshot
from hmsproxy.features.dependent.protection import Protection
from hmsproxy.features.dependent.runners import Runners
from hmsproxy.features.dependent.statements import STATEMENTS
from hmsproxy.features.dependent.store import DEPENDENT_SCHEMA, DependentRepository
from hmsproxy.pipeline.call import Call
from hmsproxy.pipeline.platform import Feature, Platform
from hmsproxy.routing.methods import MethodSpec
from hmsproxy.store.snapshot import GenerationCache

log = logging.getLogger(__name__)


class Dependent(Feature):
    name = "dependent"
    statements = STATEMENTS
    store_schema = DEPENDENT_SCHEMA
    config_section = lineage.SECTION

    def __init__(self, platform: Platform):
        super().__init__(platform)
        self.repository = DependentRepository(platform.store)
        # Checked twice a second: another proxy's change is served within a second (one cheap query per check).
        self._cache = GenerationCache(
            self.repository.generation, self.repository.snapshot, DependentSnapshot(), what="dependent tables", check_interval_s=0.5
        )
        self._sink = lineage.LineageSink()
        self._protection = Protection(self)

    def wants(self, spec: MethodSpec) -> bool:
        return spec.writes

    # -- shared by the parts ----------------------------------------------------------------

    def snapshot(self) -> DependentSnapshot:
        return self._cache.get()

    def changed(self) -> None:
        """This proxy changed the records: see them at once (others within a second)."""
        self._cache.refresh()

    def router(self):
        return self.platform.router()

    def emit(self, event: dict) -> None:
        self._sink.emit(self.settings(self.platform.config()).lineage, event)
        audit = self.platform.features.get("audit")
        if audit is not None:
            audit.record({"event": "lineage", "lineage": event})

    # -- seams --------------------------------------------------------------------------------

    def statement_runners(self) -> dict:
        return Runners(self).runners()

    def on_routed(self, call: Call):
        return self._protection.on_routed(call)

    def needs_result(self, call: Call) -> bool:
        return "dependent" in call.notes  # a change the notify policy let through, recorded once it is done

    def on_response(self, call: Call, result) -> None:
        self._protection.on_response(call, result)

    def virtual_tables(self, call: Call, db: str | None) -> list[VirtualTable]:
        snapshot = self.snapshot()
        if not snapshot.tables:
            return []
        router = call.router
        if db is not None:
            key = identity.db_key(router, db)
            refs = [t for t in snapshot.tables if (t.metastore, t.db) == key] if key in snapshot.by_database else []
        else:
            refs = list(snapshot.tables)
        found = []
        for ref in refs:
            client_db = db if db is not None else identity.client_db(router, ref.metastore, ref.db)
            if client_db is not None:
                found.append(VirtualTable(client_db, ref.table, self._loader(snapshot, ref, client_db)))
        return found

    def _loader(self, snapshot: DependentSnapshot, ref, client_db: str):
        def load(call: Call):
            return view.as_table(call.router, client_db, snapshot.tables[ref], snapshot.partitions.get(ref, ()))

        return load

    def describe(self) -> list[str]:
        snapshot = self.snapshot()
        published = sum(len(p) for p in snapshot.partitions.values())
        return [f"Dependent tables: {len(snapshot.tables)}, {published} published partition(s)"]

    def close(self) -> None:
        self._sink.close()

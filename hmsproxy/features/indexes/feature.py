"""The indexes feature: index metadata owned by the proxy (for every backend, Hive 3+ included,
which dropped indexes), the Thrift index calls, the statements, and index tables kept safe."""

from __future__ import annotations

import logging

from hmsproxy.features import identity
from hmsproxy.features.dropped_partitions import METHODS as PARTITION_DROPS
from hmsproxy.features.indexes import compact
from hmsproxy.features.indexes.calls import METHODS, IndexCalls
from hmsproxy.features.indexes.model import IndexRecord, IndexSnapshot
from hmsproxy.features.indexes.protection import Protection
from hmsproxy.features.indexes.recording import METHODS as BUILD_CALLS
from hmsproxy.features.indexes.recording import BuildRecording
from hmsproxy.features.indexes.runners import Runners
from hmsproxy.features.indexes.statements import STATEMENTS
from hmsproxy.features.indexes.store import INDEXES_SCHEMA, IndexRepository
from hmsproxy.pipeline.call import Call
from hmsproxy.pipeline.errors import ProxyError
from hmsproxy.pipeline.platform import Feature, Platform
from hmsproxy.routing.methods import MethodSpec
from hmsproxy.store.snapshot import GenerationCache

log = logging.getLogger(__name__)


def as_ordinary_table(client, db: str, table: str) -> None:
    """An INDEX_TABLE becomes a MANAGED_TABLE (its marker parameter stays): Hive 2.3 metastores
    refuse to drop an INDEX_TABLE themselves ("Please do drop index instead")."""
    found = client.call("get_table", dbname=db, tbl_name=table)
    if found.tableType == compact.INDEX_TABLE:
        found.tableType = "MANAGED_TABLE"
        client.call("alter_table", dbname=db, tbl_name=table, new_tbl=found)


class Indexes(Feature):
    name = "indexes"
    statements = STATEMENTS
    store_schema = INDEXES_SCHEMA
    #: An index changes its index table's database (IN TABLE may name a writable one beside a
    #: read-only base table); calls.py checks that one.
    checks_own_writes = METHODS

    def __init__(self, platform: Platform):
        super().__init__(platform)
        self.repository = IndexRepository(platform.store)
        # Checked twice a second: another proxy's change is seen within a second (one cheap query per check).
        self._cache = GenerationCache(
            self.repository.generation, self.repository.snapshot, IndexSnapshot(), what="indexes", check_interval_s=0.5
        )
        self._calls = IndexCalls(self)
        self._protection = Protection(self)
        self._recording = BuildRecording(self)

    def wants(self, spec: MethodSpec) -> bool:
        return (
            spec.name in METHODS
            or spec.name in PARTITION_DROPS
            or spec.name in BUILD_CALLS
            or spec.drops_table
            or spec.alters_table
            or spec.drops_database
        )

    def snapshot(self) -> IndexSnapshot:
        return self._cache.get()

    def changed(self) -> None:
        """This proxy changed the records: see them at once (others within a second)."""
        self._cache.refresh()

    def drop_index_table(self, call: Call, record: IndexRecord, *, delete_data: bool, strict: bool = False) -> None:
        """Drop an index table as `call`'s client (its record is gone already, so it is an ordinary table now).
        A failure is logged, or with `strict` raised naming the table left behind."""
        table = record.index_table
        db = identity.client_db(self.platform.router(), table.metastore, table.db)
        if db is None:
            log.warning("index table %s.%s (metastore %s) is not visible here: left in place", table.db, table.table, table.metastore)
            return
        with self.platform.client_for(call) as client:
            try:
                as_ordinary_table(client, db, table.table)
                client.call("drop_table", dbname=db, name=table.table, deleteData=delete_data)
            except ProxyError as e:
                if strict:
                    raise type(e)(f"hmsproxy: index {record.name} is dropped, but its index table {db}.{table.table} is left: {e}") from e
                log.warning("index %s: dropping its index table %s.%s failed: %s", record.name, db, table.table, e)

    def release_index_tables(self, call: Call, metastore: str, db: str) -> None:
        """Before DROP DATABASE: index tables in it become ordinary tables, which a Hive 2.3 metastore
        drops (it refuses to drop an INDEX_TABLE whose index it does not know)."""
        client_db = identity.client_db(self.platform.router(), metastore, db)
        tables = [t for t in self.snapshot().by_index_table if (t.metastore, t.db) == (metastore, db)]
        if client_db is None or not tables:
            return
        with self.platform.client_for(call) as client:
            for t in tables:
                try:
                    as_ordinary_table(client, client_db, t.table)
                except ProxyError as e:
                    log.warning("index table %s.%s: can't make it an ordinary table before DROP DATABASE: %s", client_db, t.table, e)

    # -- seams --------------------------------------------------------------------------------

    def statement_runners(self) -> dict:
        return Runners(self).runners()

    def on_routed(self, call: Call):
        if call.method in METHODS:
            return self._calls.answer(call)
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

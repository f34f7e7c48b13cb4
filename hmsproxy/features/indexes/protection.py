"""Index tables and base tables against any client (Spark, the Hive CLI, any Thrift client).

DROP TABLE of an index table is refused (DROP INDEX drops it). After a base table is dropped,
its indexes and their index tables go too; after it is renamed, its indexes follow it; after
DROP DATABASE, no index of a table in it is left; after base partitions are dropped, so are the
matching partitions of index tables partitioned like the base table.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from hmsproxy.features import identity
from hmsproxy.features.dropped_partitions import METHODS as PARTITION_DROPS
from hmsproxy.features.dropped_partitions import dropped_values
from hmsproxy.features.identity import TableRef
from hmsproxy.files.partition_names import partition_name
from hmsproxy.pipeline.call import Call, accepted_note
from hmsproxy.pipeline.errors import InvalidRequest, NotFound

if TYPE_CHECKING:
    from hmsproxy.features.indexes.index_tables import IndexTables
    from hmsproxy.features.indexes.snapshot import IndexRecords
    from hmsproxy.pipeline.internal_client import InternalClient

log = logging.getLogger(__name__)

NOTE = "indexes"


class Protection:
    def __init__(self, records: IndexRecords, index_tables: IndexTables, client_for: Callable[[Call], InternalClient]):
        self._records = records
        self._index_tables = index_tables
        self._client_for = client_for

    def on_routed(self, call: Call):
        spec = call.spec
        if spec.drops_database:
            db = identity.routed_db(call.route)
            if self._records.snapshot().in_database(*db):
                call.notes[NOTE] = ("database", db)
            self._index_tables.release(call, *db)
            return None
        if not call.table:
            return None
        ref = identity.routed(call.route, call.table)
        snapshot = self._records.snapshot()
        if spec.name in PARTITION_DROPS:
            if any(r.index_table is not None for r in snapshot.of(ref)):
                dropped = dropped_values(call, lambda: self._client_for(call))
                call.notes[NOTE] = ("partitions", ref, dropped)
            return None
        if spec.drops_table:
            index = snapshot.by_index_table.get(ref)
            if index is not None:
                base = identity.client_name(call.router, index.base)
                raise InvalidRequest(
                    f"hmsproxy: {call.client_db}.{ref.table} is the index table of index {index.name} on {base}: "
                    f"DROP INDEX {index.name} ON {base} drops it"
                )
            if snapshot.of(ref):
                call.notes[NOTE] = ("drop", ref)
        elif spec.alters_table and snapshot.of(ref):
            new = spec.altered_table(call.args)
            if new is not None and (new.dbName, new.tableName) != (None, None):
                renamed = identity.ref_of(call.router, new.dbName or call.client_db, new.tableName or ref.table)
                if renamed != ref:
                    call.notes[NOTE] = ("rename", ref, renamed)
        return None

    def needs_result(self, call: Call) -> bool:
        return NOTE in call.notes

    def on_response(self, call: Call, result) -> None:
        note = accepted_note(call, NOTE, result)
        if note is None:
            return
        kind = note[0]
        if kind == "partitions":
            self._drop_index_partitions(call, note[1], note[2])
            return
        if kind == "rename":
            self._records.repository.rename_base(note[1], note[2])
            self._records.refresh()
            return
        if kind == "drop":
            doomed = self._records.snapshot().of(note[1])
            self._records.repository.drop_all(note[1])
        else:  # the database: its tables are gone, and so are index tables in it; those elsewhere are dropped here
            metastore, db = note[1]
            doomed = [
                r for r in self._records.snapshot().in_database(metastore, db) if r.index_table is not None and r.index_table.db != db
            ]
            self._records.repository.drop_database(metastore, db)
        self._records.refresh()  # first: the index tables are ordinary tables now, which may be dropped
        for record in doomed:
            if record.index_table is not None:
                self._index_tables.drop(call, record, delete_data=True)

    def _drop_index_partitions(self, call: Call, base: TableRef, dropped: list[tuple[str, ...]]) -> None:
        """Index partitions with the values of dropped base partitions go too, where the index table is
        partitioned like the base table (an index partitioned by fewer columns spans partitions that
        are not all gone: it is left as it is)."""
        router = call.router
        with self._client_for(call) as client:
            for record in self._records.snapshot().of(base):
                table = record.index_table
                db = identity.client_db(router, table.metastore, table.db) if table is not None else None
                if db is None:
                    continue
                keys = [k.name.lower() for k in client.call("get_table", dbname=db, tbl_name=table.table).partitionKeys or []]
                gone = []
                for values in dropped:
                    if len(values) != len(keys):
                        continue
                    try:
                        client.call("drop_partition", db_name=db, tbl_name=table.table, part_vals=list(values), deleteData=True)
                    except NotFound:
                        pass  # never built for that partition
                    gone.append(partition_name(keys, dict(zip(keys, values))))
                if gone:
                    generation = self._records.repository.forget_builds(record.base, record.name, gone)
                    self._records.builds_changed(record, generation, forgotten=gone)

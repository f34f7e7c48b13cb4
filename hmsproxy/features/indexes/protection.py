"""Index tables and base tables against any client (Spark, the Hive CLI, any Thrift client).

DROP TABLE of an index table is refused (DROP INDEX drops it). After a base table is dropped,
its indexes and their index tables go too; after it is renamed, its indexes follow it; after
DROP DATABASE, no index of a table in it is left.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from hmsproxy.call import Call
from hmsproxy.errors import InvalidRequest
from hmsproxy.features import identity
from hmsproxy.features.identity import TableRef

if TYPE_CHECKING:
    from hmsproxy.features.indexes.feature import Indexes

log = logging.getLogger(__name__)

NOTE = "indexes"


def _failed(result) -> bool:
    return any(v is not None for k, v in vars(result).items() if k != "success")


class Protection:
    def __init__(self, feature: Indexes):
        self.feature = feature

    def on_routed(self, call: Call):
        spec = call.spec
        if spec.drops_database:
            db = (call.route.metastore.name, call.route.backend_db.lower())
            if self.feature.snapshot().in_database(*db):
                call.notes[NOTE] = ("database", db)
            self.feature.release_index_tables(call.session.user, *db)
            return None
        if not call.table:
            return None
        ref = TableRef(call.route.metastore.name, call.route.backend_db.lower(), call.table.lower())
        snapshot = self.feature.snapshot()
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
        note = call.notes.get(NOTE)
        if note is None or _failed(result):
            return
        kind = note[0]
        if kind == "rename":
            self.feature.repository.rename_base(note[1], note[2])
            self.feature.changed()
            return
        if kind == "drop":
            doomed = self.feature.snapshot().of(note[1])
            self.feature.repository.drop_all(note[1])
        else:  # the database: its tables are gone, and so are index tables in it; those elsewhere are dropped here
            metastore, db = note[1]
            doomed = [r for r in self.feature.snapshot().in_database(metastore, db) if r.index_table is not None and r.index_table.db != db]
            self.feature.repository.drop_database(metastore, db)
        self.feature.changed()  # first: the index tables are ordinary tables now, which may be dropped
        for record in doomed:
            if record.index_table is not None:
                self.feature.drop_index_table(call.session.user, record, delete_data=True)

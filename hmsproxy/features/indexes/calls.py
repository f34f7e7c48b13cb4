"""The Hive 2.3 Thrift index calls, answered from the proxy's store for every backend.

`add_index` (what the Hive CLI's CREATE INDEX sends, and what hmsproxy's own CREATE INDEX runs
through) checks the base table, creates the index table on the base table's metastore as the
caller (access control and every feature's hooks apply) and records the index; `drop_index_by_name`
forgets it and drops its index table; `alter_index` changes what may change; `get_index_by_name`,
`get_indexes` and `get_index_names` read the records. Names in and out are the client's.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from thriftpy2.utils import deserialize, serialize

from hmsproxy.features import identity
from hmsproxy.features.identity import TableRef
from hmsproxy.features.indexes import compact
from hmsproxy.features.indexes.auto_rebuild import check_auto_rebuild
from hmsproxy.features.indexes.handlers import get_handler
from hmsproxy.features.indexes.model import IndexRecord
from hmsproxy.features.remote_marks import is_link
from hmsproxy.pipeline.call import Call
from hmsproxy.pipeline.errors import Conflict, InvalidRequest, NotFound
from hmsproxy.protocol import idl
from hmsproxy.store import AlreadyExists

if TYPE_CHECKING:
    from hmsproxy.features.indexes.index_tables import IndexTables
    from hmsproxy.features.indexes.snapshot import IndexRecords
    from hmsproxy.pipeline.internal_client import InternalClient
    from hmsproxy.pipeline.platform import Feature

A = idl.HmsProxy
hive = idl.hive

METHODS = frozenset({"add_index", "alter_index", "drop_index_by_name", "get_index_by_name", "get_indexes", "get_index_names"})
VIEWS = ("VIRTUAL_VIEW", "MATERIALIZED_VIEW")


class IndexCalls:
    """`access()`: the access feature (None without one), which checks the writes these calls answer."""

    def __init__(
        self,
        records: IndexRecords,
        index_tables: IndexTables,
        client_for: Callable[[Call], InternalClient],
        access: Callable[[], Feature | None],
    ):
        self._records = records
        self._index_tables = index_tables
        self._client_for = client_for
        self._access = access

    def answer(self, call: Call):
        """The call's `<method>_result`, answered here (never by the backend)."""
        result = getattr(A, call.method + "_result")()
        result.success = getattr(self, call.method)(call, call.args)
        return result

    # -- names --------------------------------------------------------------------------------

    @staticmethod
    def _base(call: Call, table: str | None) -> TableRef:
        if not table:
            raise InvalidRequest(f"hmsproxy: {call.method} needs a table name")
        return identity.routed(call.route, table)

    def _required(self, call: Call, table: str, name: str | None) -> IndexRecord:
        if not name:
            raise InvalidRequest(f"hmsproxy: {call.method} needs an index name")
        record = self._records.snapshot().get(self._base(call, table), name)
        if record is None:
            raise NotFound(f"hmsproxy: no index {name.lower()} on {call.client_db}.{table.lower()}")
        return record

    def as_index(self, call: Call, record: IndexRecord):
        """The Index struct a client sees for `record`."""
        router = call.router
        db = identity.client_db(router, record.base.metastore, record.base.db) or record.base.db
        index_table = None
        if record.index_table is not None:
            same_db = record.index_table.db == record.base.db
            index_db = identity.client_db(router, record.index_table.metastore, record.index_table.db) or record.index_table.db
            index_table = record.index_table.table if same_db else f"{index_db}.{record.index_table.table}"
        return hive.Index(
            indexName=record.name,
            indexHandlerClass=record.handler,
            dbName=db,
            origTableName=record.base.table,
            createTime=record.created_at,
            lastAccessTime=record.last_access,
            indexTableName=index_table,
            sd=deserialize(hive.StorageDescriptor(), record.sd),
            parameters=record.params,
            deferredRebuild=record.deferred,
        )

    # -- reads ----------------------------------------------------------------------------------

    def get_index_by_name(self, call: Call, args):
        return self.as_index(call, self._required(call, args.tbl_name, args.index_name))

    def get_indexes(self, call: Call, args):
        records = self._records.snapshot().of(self._base(call, args.tbl_name))
        return [self.as_index(call, r) for r in _limited(records, args.max_indexes)]

    def get_index_names(self, call: Call, args):
        return [r.name for r in _limited(self._records.snapshot().of(self._base(call, args.tbl_name)), args.max_indexes)]

    # -- changes --------------------------------------------------------------------------------

    def add_index(self, call: Call, args):
        index, table = args.new_index, args.index_table
        if index is None or not index.indexName or not index.origTableName:
            raise InvalidRequest("hmsproxy: add_index needs an index name and its base table")
        name = index.indexName.lower()
        base_name = index.origTableName.lower()
        base_ref = self._base(call, base_name)
        snapshot = self._records.snapshot()
        if snapshot.get(base_ref, name) is not None:
            raise Conflict(f"hmsproxy: index {name} on {call.client_db}.{base_name} exists already")
        handler = get_handler(index.indexHandlerClass or "")
        check_auto_rebuild(index.parameters, name)
        self._check_writable(call, (table.dbName if table is not None else None) or call.client_db)
        columns = [(c.name.lower(), c.type) for c in (index.sd.cols if index.sd else None) or []]
        with self._client_for(call) as client:
            base = client.call("get_table", dbname=call.client_db, tbl_name=base_name)
            self._check_base(call, base, base_ref, columns)
            columns = _with_types(base, columns)
            if table is not None and not handler.uses_index_table():
                raise InvalidRequest(f"hmsproxy: index handler {handler.class_name} keeps no index table: leave out IN TABLE and storage")
            handler.analyze(base, index, table)
            index_table = None
            if table is not None:
                table.dbName = table.dbName or call.client_db
                table.tableName = (table.tableName or compact.default_index_table_name(call.client_db, base_name, name)).lower()
                index_table = identity.ref_of(call.router, table.dbName, table.tableName)
                if index_table.metastore != base_ref.metastore:
                    raise InvalidRequest(f"hmsproxy: an index table must be on the base table's metastore ({base_ref.metastore})")
                self._mark_index_table(call, table, base_ref, name)
                client.call("create_table", tbl=table)
            now = int(time.time())
            record = IndexRecord(
                base_ref,
                name,
                handler.class_name,
                bool(index.deferredRebuild),
                index_table,
                tuple(columns),
                serialize(index.sd or compact.index_sd(columns)),
                tuple(sorted((index.parameters or {}).items())),
                index.createTime or now,
                index.lastAccessTime or now,
            )
            try:
                self._records.repository.create(record)
            except AlreadyExists as e:  # another proxy won the race: its index stays, this table goes
                if table is not None:
                    client.call("drop_table", dbname=table.dbName, name=table.tableName, deleteData=True)
                raise Conflict(f"hmsproxy: {e}") from None
            except Exception:
                if table is not None:
                    client.call("drop_table", dbname=table.dbName, name=table.tableName, deleteData=True)
                raise
        self._records.refresh()
        return self.as_index(call, record)

    def _check_base(self, call: Call, base, ref: TableRef, columns: list[tuple[str, str]]) -> None:
        what = f"{call.client_db}.{ref.table}"
        if base.tableType in VIEWS:
            raise InvalidRequest(f"hmsproxy: {what} is a view: indexes are on tables")
        if is_link(base.parameters):
            raise InvalidRequest(f"hmsproxy: {what} is a remote table, read-only here: index it where it lives")
        if (
            self._records.snapshot().by_index_table.get(ref) is not None
            or compact.INDEX_OF in (base.parameters or {})
            or base.tableType == compact.INDEX_TABLE
        ):
            raise InvalidRequest(f"hmsproxy: {what} is an index table: indexes are on base tables")
        if not columns:
            raise InvalidRequest("hmsproxy: an index needs at least one column")
        data = {c.name.lower() for c in base.sd.cols or []}
        missing = [n for n, _ in columns if n not in data]
        if missing:
            raise InvalidRequest(f"hmsproxy: {what} has no data column {', '.join(missing)}")

    def _mark_index_table(self, call: Call, table, base: TableRef, name: str) -> None:
        """INDEX_TABLE where the backend knows it (Hive 2.3); a managed table with a marker on Hive 3+."""
        table.parameters = dict(table.parameters or {})
        table.parameters[compact.INDEX_OF] = f"{base.db}.{base.table}.{name}"
        if call.session.knows_catalogs(call.route.metastore):
            table.tableType = "MANAGED_TABLE"
        else:
            table.tableType = compact.INDEX_TABLE

    def _check_writable(self, call: Call, db: str) -> None:
        """An index writes where its index table is (else its base table's database): the write rules apply there."""
        access = self._access()
        if access is not None and call.spec.writes:
            access.check(call.spec, call.router.route(db), db)

    def _check_record_writable(self, call: Call, record: IndexRecord) -> None:
        table = record.index_table or record.base
        self._check_writable(call, identity.client_db(call.router, table.metastore, table.db) or call.client_db)

    def alter_index(self, call: Call, args):
        record = self._required(call, args.base_tbl_name, args.idx_name)
        self._check_record_writable(call, record)
        new = args.new_idx
        if new is None:
            raise InvalidRequest("hmsproxy: alter_index needs the index")
        if (new.indexName or record.name).lower() != record.name or (new.origTableName or record.base.table).lower() != record.base.table:
            raise InvalidRequest("hmsproxy: an index cannot be renamed or moved to another table (DROP INDEX, then CREATE INDEX)")
        check_auto_rebuild(new.parameters, record.name)
        self._records.repository.replace(
            IndexRecord(
                record.base,
                record.name,
                record.handler,
                bool(new.deferredRebuild) if new.deferredRebuild is not None else record.deferred,
                record.index_table,
                record.columns,
                record.sd,
                tuple(sorted((new.parameters if new.parameters is not None else record.params).items())),
                record.created_at,
                new.lastAccessTime or record.last_access,
            )
        )
        self._records.refresh()

    def drop_index_by_name(self, call: Call, args):
        record = self._required(call, args.tbl_name, args.index_name)
        self._check_record_writable(call, record)
        self._records.repository.drop(record.base, record.name)  # first: then its table is an ordinary one to drop
        self._records.refresh()
        if record.index_table is not None:
            self._index_tables.drop(call, record, delete_data=bool(args.deleteData), strict=True)
        get_handler(record.handler).drop(self.as_index(call, record))
        return True


def _limited(records: list[IndexRecord], max_count: int | None) -> list[IndexRecord]:
    return records if max_count is None or max_count < 0 else records[:max_count]


def _with_types(base, columns: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The indexed columns with the base table's types (a client may leave them out)."""
    types = {c.name.lower(): c.type for c in base.sd.cols or []}
    return [(n, types[n]) for n, _ in columns]

"""What the index statements do: each is the Thrift index call a Hive client would send, made
through the proxy as the user (calls.py checks and records it), so hmsproxy sql, the Python
client, the Spark helper and the Hive CLI meet the same rules."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from hmsproxy import idl
from hmsproxy.ddl.executor import StatementContext, status
from hmsproxy.ddl.results import ResultSet
from hmsproxy.errors import InvalidRequest, NotFound
from hmsproxy.features.indexes import compact
from hmsproxy.features.indexes import statements as st

if TYPE_CHECKING:
    from hmsproxy.features.indexes.feature import Indexes

hive = idl.hive

#: SHOW INDEX's columns, as Hive prints them; FORMATTED adds the rest.
SHOW_COLUMNS = ["idx_name", "tab_name", "col_names", "idx_tab_name", "idx_type", "comment"]
FORMATTED_COLUMNS = [*SHOW_COLUMNS, "deferred_rebuild", "created", "last_access", "idx_properties"]
COMMENT_KEY = "comment"
NOT_YET = "the rebuild job (hmsproxy job rebuild-index) is not in this version of hmsproxy"


class Runners:
    def __init__(self, feature: Indexes):
        self.feature = feature

    def runners(self) -> dict:
        return {
            st.CreateIndex: self.create,
            st.DropIndex: self.drop,
            st.SetIndexProperties: self.set_properties,
            st.RebuildIndex: self.rebuild,
            st.ShowIndexes: self.show,
        }

    @staticmethod
    def _name(ctx: StatementContext, name: st.Name) -> tuple[str, str]:
        return name[0] or ctx.database, name[1]

    def create(self, s: st.CreateIndex, ctx: StatementContext) -> ResultSet:
        if not s.deferred:
            raise InvalidRequest(f"hmsproxy: building index {s.name} right away needs a rebuild, and {NOT_YET}: add WITH DEFERRED REBUILD")
        handler = compact.handler_class(s.handler)
        db, table = self._name(ctx, s.table)
        base = ctx.client.call("get_table", dbname=db, tbl_name=table)
        types = {c.name.lower(): c.type for c in base.sd.cols or []}
        columns = [(c, types.get(c, "")) for c in s.columns]
        index_db, index_name = self._name(ctx, s.in_table) if s.in_table else (db, compact.default_index_table_name(db, table, s.name))
        table_properties = dict(s.table_properties)
        if s.comment is not None:
            table_properties[COMMENT_KEY] = s.comment
        index_table = None
        if all(t for _, t in columns):  # else add_index refuses the missing column by name
            index_table = compact.index_table(
                base,
                s.name,
                columns,
                db=index_db,
                name=index_name,
                partitioned_by=list(s.partitioned_by) if s.partitioned_by is not None else None,
                stored_as=s.stored_as,
                location=s.location,
                properties=table_properties,
            )
        parameters = dict(s.properties)
        if s.comment is not None:
            parameters[COMMENT_KEY] = s.comment
        index = hive.Index(
            indexName=s.name,
            indexHandlerClass=handler,
            dbName=db,
            origTableName=table,
            indexTableName=index_name,
            sd=compact.index_sd([(c, t or "string") for c, t in columns], s.stored_as),
            parameters=parameters,
            deferredRebuild=s.deferred,
        )
        ctx.client.call("add_index", new_index=index, index_table=index_table)
        return status(f"index {s.name} created on {db}.{table} (index table {index_db}.{index_name}); ALTER INDEX ... REBUILD builds it")

    def drop(self, s: st.DropIndex, ctx: StatementContext) -> ResultSet:
        db, table = self._name(ctx, s.table)
        try:
            ctx.client.call("drop_index_by_name", db_name=db, tbl_name=table, index_name=s.name, deleteData=True)
        except NotFound:
            if s.if_exists:
                return status(f"no index {s.name} on {db}.{table}: nothing to drop")
            raise
        return status(f"index {s.name} on {db}.{table} dropped, with its index table")

    def set_properties(self, s: st.SetIndexProperties, ctx: StatementContext) -> ResultSet:
        db, table = self._name(ctx, s.table)
        index = ctx.client.call("get_index_by_name", db_name=db, tbl_name=table, index_name=s.name)
        index.parameters = {**(index.parameters or {}), **dict(s.properties)}
        ctx.client.call("alter_index", dbname=db, base_tbl_name=table, idx_name=s.name, new_idx=index)
        return status(f"index {s.name} on {db}.{table}: {len(s.properties)} propert{'y' if len(s.properties) == 1 else 'ies'} set")

    def rebuild(self, s: st.RebuildIndex, ctx: StatementContext) -> ResultSet:
        db, table = self._name(ctx, s.table)
        ctx.client.call("get_index_by_name", db_name=db, tbl_name=table, index_name=s.name)  # NotFound first
        raise InvalidRequest(f"hmsproxy: ALTER INDEX {s.name} ON {db}.{table} REBUILD: {NOT_YET}")

    def show(self, s: st.ShowIndexes, ctx: StatementContext) -> ResultSet:
        db, table = self._name(ctx, s.table)
        ctx.client.call("get_table", dbname=db, tbl_name=table)  # NotFound for a table that is not there
        indexes = ctx.client.call("get_indexes", db_name=db, tbl_name=table, max_indexes=-1) or []
        rows = []
        for index in indexes:
            params = dict(index.parameters or {})
            row = [
                index.indexName,
                index.origTableName,
                ", ".join(c.name for c in index.sd.cols or []),
                index.indexTableName or "",
                "compact" if index.indexHandlerClass == compact.COMPACT else index.indexHandlerClass,
                params.pop(COMMENT_KEY, ""),
            ]
            if s.formatted:
                row += [
                    "true" if index.deferredRebuild else "false",
                    _when(index.createTime),
                    _when(index.lastAccessTime),
                    ", ".join(f"{k}={v}" for k, v in sorted(params.items())),
                ]
            rows.append(row)
        return ResultSet(list(FORMATTED_COLUMNS if s.formatted else SHOW_COLUMNS), rows)


def _when(seconds: int | None) -> str:
    return dt.datetime.fromtimestamp(seconds, dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC") if seconds else ""

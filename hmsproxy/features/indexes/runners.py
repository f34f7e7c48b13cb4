"""What the index statements do: each is the Thrift index call a Hive client would send, made
through the proxy as the user (calls.py checks and records it), so hmsproxy sql, the Python
client, the Spark helper and the Hive CLI meet the same rules."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import TYPE_CHECKING

from hmsproxy.ddl.executor import StatementContext, status
from hmsproxy.ddl.results import ResultSet
from hmsproxy.features import identity
from hmsproxy.features.indexes import builds, compact
from hmsproxy.features.indexes import statements as st
from hmsproxy.features.indexes.auto_rebuild import AUTO_REBUILD_KEY
from hmsproxy.features.indexes.handlers import get_handler
from hmsproxy.files.partition_names import NAMES_PER_CALL, partition_name
from hmsproxy.files.storage import ArrowStorage, data_files
from hmsproxy.pipeline.errors import InvalidRequest, NotFound
from hmsproxy.protocol import idl

if TYPE_CHECKING:
    from hmsproxy.features.indexes.snapshot import IndexRecords
    from hmsproxy.routing.router import Router

hive = idl.hive

#: SHOW INDEX's columns, as Hive prints them; FORMATTED adds the rest, a row per base partition.
SHOW_COLUMNS = ["idx_name", "tab_name", "col_names", "idx_tab_name", "idx_type", "comment"]
FORMATTED_COLUMNS = [*SHOW_COLUMNS, "deferred_rebuild", "created", "last_access", "idx_properties", "partition", "state", "last_rebuild"]
COMMENT_KEY = "comment"
#: Where a rebuild runs: on Spark, next to the client, never in the proxy.
REBUILD_ELSEWHERE = (
    "runs on Spark, beside the client: from hmsproxy sql, hmsproxy.clients.spark.sql, HmsProxyClient.execute, or hmsproxy job rebuild-index"
)


class Runners:
    def __init__(self, records: IndexRecords, router: Callable[[], Router]):
        self._records = records
        self._router = router

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
        handler = get_handler(s.handler)
        db, table = self._name(ctx, s.table)
        base = ctx.client.call("get_table", dbname=db, tbl_name=table)
        types = {c.name.lower(): c.type for c in base.sd.cols or []}
        columns = [(c, types.get(c, "")) for c in s.columns]
        index_db, index_name = self._name(ctx, s.in_table) if s.in_table else (db, compact.default_index_table_name(db, table, s.name))
        table_properties = dict(s.table_properties)
        if s.comment is not None:
            table_properties[COMMENT_KEY] = s.comment
        index_table = None
        if handler.uses_index_table() and all(t for _, t in columns):  # else add_index refuses the missing column by name
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
        if s.auto_rebuild:
            parameters[AUTO_REBUILD_KEY] = "true"
        if s.comment is not None:
            parameters[COMMENT_KEY] = s.comment
        index = hive.Index(
            indexName=s.name,
            indexHandlerClass=handler.class_name,
            dbName=db,
            origTableName=table,
            indexTableName=index_name,
            sd=compact.index_sd([(c, t or "string") for c, t in columns], s.stored_as),
            parameters=parameters,
            deferredRebuild=s.deferred,
        )
        ctx.client.call("add_index", new_index=index, index_table=index_table)
        then = "ALTER INDEX ... REBUILD builds it" if s.deferred else "built next by the client"
        if s.auto_rebuild:
            then += ", then kept fresh by hmsproxy job rebuild-index --watch"
        return status(f"index {s.name} created on {db}.{table} (index table {index_db}.{index_name}); {then}")

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
        raise InvalidRequest(f"hmsproxy: ALTER INDEX {s.name} ON {db}.{table} REBUILD {REBUILD_ELSEWHERE}")

    def show(self, s: st.ShowIndexes, ctx: StatementContext) -> ResultSet:
        db, table = self._name(ctx, s.table)
        base = ctx.client.call("get_table", dbname=db, tbl_name=table)  # NotFound for a table that is not there
        indexes = ctx.client.call("get_indexes", db_name=db, tbl_name=table, max_indexes=-1) or []
        partitions = base_partitions(ctx.client, base) if s.formatted and indexes else []
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
            if not s.formatted:
                rows.append(row)
                continue
            row += [
                "true" if index.deferredRebuild else "false",
                _when(index.createTime),
                _when(index.lastAccessTime),
                ", ".join(f"{k}={v}" for k, v in sorted(params.items())),
            ]
            rows += [row + line for line in self._partition_states(ctx, db, table, index, partitions)]
        return ResultSet(list(FORMATTED_COLUMNS if s.formatted else SHOW_COLUMNS), rows)

    def _partition_states(self, ctx: StatementContext, db: str, table: str, index, partitions) -> list[list[str]]:
        """[partition, state, last rebuild] per base partition, from the builds the store holds and a
        listing of the partition now (the listing a rebuild took)."""
        snapshot = self._records.snapshot()
        record = snapshot.get(identity.ref_of(self._router(), db, table), index.indexName)
        built = snapshot.builds_of(record) if record is not None else {}
        index_keys = []
        if index.indexTableName:
            index_db, _, index_table = index.indexTableName.rpartition(".")
            found = ctx.client.call("get_table", dbname=index_db or db, tbl_name=index_table)
            index_keys = [k.name.lower() for k in found.partitionKeys or []]
        lines = []
        for name, values, location in partitions:
            build = built.get(partition_name(index_keys, values) if index_keys else "")
            try:
                entries = ArrowStorage().list(location) if location and ArrowStorage().exists(location) else []
                found_state = builds.state(build, name, builds.digest(data_files(entries)))
            except Exception as e:  # storage the proxy can't reach: say so rather than guess
                found_state = f"unknown: {e}"
            lines.append([name, found_state, _when(build.built_at) if build is not None and found_state != builds.NEVER_BUILT else ""])
        return lines or [["", "", ""]]


def base_partitions(client, base) -> list[tuple[str, dict[str, str], str]]:
    """(name, values, location) of each base partition; ('', {}, location) for an unpartitioned table."""
    keys = [k.name.lower() for k in base.partitionKeys or []]
    if not keys:
        return [("", {}, base.sd.location)]
    names = client.call("get_partition_names", db_name=base.dbName, tbl_name=base.tableName, max_parts=-1) or []
    found = []
    for i in range(0, len(names), NAMES_PER_CALL):
        chunk = names[i : i + NAMES_PER_CALL]
        for p in client.call("get_partitions_by_names", db_name=base.dbName, tbl_name=base.tableName, names=chunk) or []:
            values = dict(zip(keys, p.values))
            found.append((partition_name(keys, values), values, p.sd.location))
    return sorted(found)


def _when(seconds: int | None) -> str:
    return dt.datetime.fromtimestamp(seconds, dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC") if seconds else ""

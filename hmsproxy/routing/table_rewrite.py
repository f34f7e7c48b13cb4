"""Table names inside Thrift structs, found and rewritten generically (remote tables).

The sibling of rewrite.py for table names: `TABLE_NAME_FIELDS` is the one list
of (struct, field) pairs holding a table name (a string, or a list of strings
such as GetTablesRequest.tblNames); routing/walker.py follows them. Plain arguments of service methods are found by
name (`TABLE_NAME_ARGS`). A contract test proves the list complete.

A remote table is one table: `local_db.local_tbl` on the client side is
`remote_db.remote_tbl` on its metastore. The db names are rewritten by
rewrite.py; this module renames the table wherever the call names it.
"""

from __future__ import annotations

from thriftpy2.thrift import TType

from hmsproxy.protocol import idl
from hmsproxy.routing.walker import NameWalker, Rename

#: Struct name -> the fields of that struct that hold a table name (or a list of them).
TABLE_NAME_FIELDS: dict[str, frozenset[str]] = {
    name: frozenset(fields)
    for name, fields in {
        "AddDynamicPartitions": {"tablename"},
        "AddPartitionsRequest": {"tblName"},
        "AllocateTableWriteIdsRequest": {"tableName"},
        "AlterPartitionsRequest": {"tableName"},
        "AlterTableRequest": {"tableName"},
        "AppendPartitionsRequest": {"tableName"},
        "CacheFileMetadataRequest": {"tblName"},
        "ColumnStatisticsDesc": {"tableName"},
        "CompactionRequest": {"tablename"},
        "DropConstraintRequest": {"tablename"},
        "DropPartitionRequest": {"tblName"},
        "DropPartitionsRequest": {"tblName"},
        "DropTableRequest": {"tableName"},
        "FireEventRequest": {"tableName"},
        "ForeignKeysRequest": {"parent_tbl_name", "foreign_tbl_name"},
        "GetFieldsRequest": {"tblName"},
        "GetPartitionNamesPsRequest": {"tblName"},
        "GetPartitionRequest": {"tblName"},
        "GetPartitionsByFilterRequest": {"tblName"},
        "GetPartitionsByNamesRequest": {"tbl_name"},
        "GetPartitionsPsWithAuthRequest": {"tblName"},
        "GetSchemaRequest": {"tblName"},
        "GetTableRequest": {"tblName"},
        "GetTablesRequest": {"tblNames"},
        "Index": {"origTableName"},
        "LockComponent": {"tablename"},
        "NotificationEvent": {"tableName"},
        "Partition": {"tableName"},
        "PartitionSpec": {"tableName"},
        "PartitionValuesRequest": {"tblName"},
        "PartitionsByExprRequest": {"tblName"},
        "PartitionsRequest": {"tblName"},
        "PartitionsStatsRequest": {"tblName"},
        "PrimaryKeysRequest": {"tbl_name"},
        "ReplLastIdInfo": {"table"},
        "RenamePartitionRequest": {"tableName"},
        "SQLCheckConstraint": {"table_name"},
        "SQLDefaultConstraint": {"table_name"},
        "SQLForeignKey": {"pktable_name", "fktable_name"},
        "SQLNotNullConstraint": {"table_name"},
        "SQLPrimaryKey": {"table_name"},
        "SQLUniqueConstraint": {"table_name"},
        "ShowCompactResponseElement": {"tablename"},
        "ShowLocksRequest": {"tablename"},
        "ShowLocksResponseElement": {"tablename"},
        "Table": {"tableName"},
        "TableMeta": {"tableName"},
        "TableStatsRequest": {"tblName"},
        "WriteEventInfo": {"table"},
    }.items()
}

#: Fields that look like table names but are not the table a call is about.
NOT_TABLE_NAMES = frozenset(
    {
        ("Index", "indexTableName"),  # the index's own storage table, a different table
        ("HiveObjectRef", "objectName"),  # a db, table, partition or column depending on objectType
        ("Table", "tableType"),
        ("TableMeta", "tableType"),
        ("WriteEventInfo", "tableObj"),  # the table as JSON, not its name
        # "db.table" strings: the transactions feature renames them (features/transactions/write_ids.py).
        ("GetValidWriteIdsRequest", "fullTableNames"),
        ("TableValidWriteIds", "fullTableName"),
        # Filters of a notification log (features/notifications/filters.py compares them with the events').
        ("NotificationEventRequest", "tableNames"),
        ("NotificationEventsCountRequest", "tableNames"),
    }
)

#: Plain arguments of service methods that hold a table name (or a list of them).
TABLE_NAME_ARGS = frozenset({"tbl_name", "table_name", "base_tbl_name", "source_table_name", "dest_table_name", "tableName", "tbl_names"})
#: Methods whose argument called `name` is a table name.
TABLE_NAMED_BY_NAME_ARG = frozenset({"drop_table", "drop_table_with_environment_context"})


def _is_name(ttype: int, nested) -> bool:
    return ttype == TType.STRING or (ttype in (TType.LIST, TType.SET) and nested == TType.STRING)


def args_table_fields(method: str) -> frozenset[str]:
    """The top-level arguments of `method` that are table names (strings or lists of strings)."""
    spec = getattr(idl.HmsProxy, method + "_args").thrift_spec
    found = set()
    for v in spec.values():
        nested = v[2] if len(v) > 3 else None
        if not _is_name(v[0], nested):
            continue
        if v[1] in TABLE_NAME_ARGS or (v[1] == "name" and method in TABLE_NAMED_BY_NAME_ARG):
            found.add(v[1])
    return frozenset(found)


#: The walker for table names (strings, or lists of them such as GetTablesRequest.tblNames).
TABLE_NAMES = NameWalker(TABLE_NAME_FIELDS, args_table_fields)
rewrite_tables = TABLE_NAMES.rewrite_struct
rewrite_table_value = TABLE_NAMES.rewrite_value


def table_renamer(old: str, new: str) -> Rename:
    """A rename that turns `old` (any case) into `new` and leaves every other name alone."""
    old_l = old.lower()

    def rename(name: str) -> str:
        return new if name.lower() == old_l else name

    return rename

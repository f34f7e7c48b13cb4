"""Database names inside Thrift structs, found and rewritten generically.

`DB_NAME_FIELDS` is the one list of (struct, field) pairs that hold a database
name; routing/walker.py follows them through any struct. A contract test
proves the list complete against the IDL.
"""

from __future__ import annotations

from thriftpy2.thrift import TType

from hmsproxy.protocol import idl
from hmsproxy.routing.walker import NameWalker

#: Struct name -> the fields of that struct that hold a database name.
DB_NAME_FIELDS: dict[str, frozenset[str]] = {
    name: frozenset(fields)
    for name, fields in {
        "AddDynamicPartitions": {"dbname"},
        "AddPartitionsRequest": {"dbName"},
        "AllocateTableWriteIdsRequest": {"dbName"},
        "AlterDatabaseRequest": {"oldDbName"},
        "AlterPartitionsRequest": {"dbName"},
        "AlterTableRequest": {"dbName"},
        "AppendPartitionsRequest": {"dbName"},
        "CacheFileMetadataRequest": {"dbName"},
        "ColumnStatisticsDesc": {"dbName"},
        "CompactionRequest": {"dbname"},
        "CreateDatabaseRequest": {"databaseName"},
        "Database": {"name"},
        "DropConstraintRequest": {"dbname"},
        "DropDatabaseRequest": {"name"},
        "DropPartitionRequest": {"dbName"},
        "DropPartitionsRequest": {"dbName"},
        "DropTableRequest": {"dbName"},
        "FireEventRequest": {"dbName"},
        "ForeignKeysRequest": {"parent_db_name", "foreign_db_name"},
        "Function": {"dbName"},
        "GetDatabaseRequest": {"name"},
        "GetFieldsRequest": {"dbName"},
        "GetPartitionNamesPsRequest": {"dbName"},
        "GetPartitionRequest": {"dbName"},
        "GetPartitionsByFilterRequest": {"dbName"},
        "GetPartitionsByNamesRequest": {"db_name"},
        "GetPartitionsPsWithAuthRequest": {"dbName"},
        "GetSchemaRequest": {"dbName"},
        "GetTableRequest": {"dbName"},
        "GetTablesRequest": {"dbName"},
        "HiveObjectRef": {"dbName"},
        "Index": {"dbName"},
        "LockComponent": {"dbname"},
        "NotificationEvent": {"dbName"},
        "Partition": {"dbName"},
        "PartitionSpec": {"dbName"},
        "PartitionValuesRequest": {"dbName"},
        "PartitionsByExprRequest": {"dbName"},
        "PartitionsRequest": {"dbName"},
        "PartitionsStatsRequest": {"dbName"},
        "PrimaryKeysRequest": {"db_name"},
        "RenamePartitionRequest": {"dbName"},
        "ReplLastIdInfo": {"database"},
        "SQLCheckConstraint": {"table_db"},
        "SQLDefaultConstraint": {"table_db"},
        "SQLForeignKey": {"pktable_db", "fktable_db"},
        "SQLNotNullConstraint": {"table_db"},
        "SQLPrimaryKey": {"table_db"},
        "SQLUniqueConstraint": {"table_db"},
        "ShowCompactResponseElement": {"dbname"},
        "ShowLocksRequest": {"dbname"},
        "ShowLocksResponseElement": {"dbname"},
        "Table": {"dbName"},
        "TableMeta": {"dbName"},
        "TableStatsRequest": {"dbName"},
        "WriteEventInfo": {"database"},
    }.items()
}

#: Plain string arguments of service methods that hold a database name.
DB_NAME_ARGS = frozenset({"dbname", "db_name", "dbName", "source_db", "dest_db"})
#: Methods whose argument called `name` is a database name.
DB_NAMED_BY_NAME_ARG = frozenset({"get_database", "drop_database"})


def _is_db_arg(method: str, field: str) -> bool:
    return field in DB_NAME_ARGS or (field == "name" and method in DB_NAMED_BY_NAME_ARG)


def args_db_fields(method: str) -> frozenset[str]:
    """The top-level arguments of `method` that are database names."""
    spec = getattr(idl.HmsProxy, method + "_args").thrift_spec
    return frozenset(v[1] for v in spec.values() if v[0] == TType.STRING and _is_db_arg(method, v[1]))


#: The walker for database names; the module-level functions are its methods.
DB_NAMES = NameWalker(DB_NAME_FIELDS, args_db_fields)
rewrite_struct = DB_NAMES.rewrite_struct
rewrite_value = DB_NAMES.rewrite_value
holds_db_names = DB_NAMES.holds_names

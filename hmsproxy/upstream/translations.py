"""Calls one Hive version has and another lacks, and how to make each from what the backend has.

Two directions, one table:

- **removed**: Hive 4.0.1 dropped ``get_table`` and ``get_table_objects_by_name``; Hive 2.3
  clients (Spark) still send them, so they go to a 4.0.1+ metastore as their ``*_req`` form.
- **added**: Hive 4's HiveMetaStoreClient sends ``*_req`` calls (``get_database_req``,
  ``create_table_req``, ``get_partitions_req``, …) and ``get_catalogs`` that Hive 2.3 and 3.1
  metastores do not have; they go to those as the older call that does the same.

Backends.call uses a translation when the metastore's configured version needs it, or
after the metastore answered "Invalid method name" once. A backend that has the call
gets it unchanged, with every field the newer client sent.

A translation that cannot keep what the client asked for (a constraint Hive 2.3 cannot
store, a catalog other than the default) fails with the call's declared exception
instead of dropping it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from hmsproxy.protocol import idl
from hmsproxy.routing.default_catalog import DEFAULT_CATALOG
from hmsproxy.routing.methods import database_from_request
from hmsproxy.upstream.insert_event_layout import answer as insert_event_answer
from hmsproxy.upstream.insert_event_layout import hive3_fire_listener_event

hive = idl.hive
P = idl.HmsProxy


@dataclass(frozen=True)
class Translation:
    """How to answer `method` with a call the backend has, and map the answer back."""

    #: client args -> the args struct of the call to make (its class names the call).
    build: Callable
    #: (that call's success, client args) -> the client call's success.
    unwrap: Callable = lambda success, args: success
    #: Backends of this Hive version or newer lack the method.
    removed_in: tuple[int, ...] = ()
    #: Backends older than this Hive version lack the method.
    added_in: tuple[int, ...] = ()
    #: True when a NoSuchObjectException of the target call is no error for the client
    #: (drop_database_req's ignoreUnknownDb).
    ignores_missing: Callable = lambda args: False

    def needed_on(self, version: tuple[int, ...]) -> bool:
        if not version:
            return False
        if self.removed_in and version >= self.removed_in:
            return True
        return bool(self.added_in) and version < self.added_in

    def target(self, args) -> str:
        """The name of the call made for `args`."""
        return type(self.build(args)).__name__.removesuffix("_args")


class Untranslatable(Exception):
    """The backend cannot do what the client asked; `error` is the declared exception to answer."""

    def __init__(self, error):
        super().__init__(getattr(error, "message", str(error)))
        self.error = error


# ------------------------------------------------------------------ Hive 4.0.1 removed


def _removed(build, unwrap) -> Translation:
    return Translation(build, unwrap, removed_in=(4, 0, 1))


REMOVED_IN_4_0_1 = {
    "get_table": _removed(
        lambda a: P.get_table_req_args(req=hive.GetTableRequest(dbName=a.dbname, tblName=a.tbl_name)),
        lambda r, a: r.table,
    ),
    "get_table_objects_by_name": _removed(
        lambda a: P.get_table_objects_by_name_req_args(req=hive.GetTablesRequest(dbName=a.dbname, tblNames=a.tbl_names)),
        lambda r, a: r.tables,
    ),
}


# ----------------------------------------------------- Hive 4.0 added (to 2.3 and 3.1)

HIVE_4 = (4, 0, 0)


def _added(build, unwrap=lambda success, args: success, **kw) -> Translation:
    return Translation(build, unwrap, added_in=HIVE_4, **kw)


def _default_catalog_only(catalog: str | None, error_cls):
    if catalog and catalog.lower() != DEFAULT_CATALOG:
        raise Untranslatable(
            error_cls(
                message=f"catalog {catalog} not found: this metastore is older than Hive 3 and has only the default catalog '{DEFAULT_CATALOG}'"
            )
        )


#: The fields a Hive 3/4 request names its catalog in.
CATALOG_FIELDS = ("catName", "catalogName", "cat_name")


def check_catalog(args, declared: dict) -> None:
    """Untranslatable unless the request names the default catalog or none: an older call has no
    catalog, and would act on the default catalog's object of the same name (drop it, even).
    `declared`: the exceptions the client's method declares (protocol.results.declared_fields)."""
    error_cls = hive.NoSuchObjectException if hive.NoSuchObjectException in declared else hive.InvalidObjectException
    for name in args.thrift_spec.values():
        request = getattr(args, name[1], None)
        for field in CATALOG_FIELDS:
            catalog = getattr(request, field, None)
            if isinstance(catalog, str):
                _default_catalog_only(catalog, error_cls)


def _create_database(a):
    r = a.createDatabaseRequest
    _default_catalog_only(r.catalogName, hive.InvalidObjectException)
    return P.create_database_args(database=database_from_request(r))


def _create_table(a):
    r = a.request
    unsupported = [n for n in ("uniqueConstraints", "notNullConstraints", "defaultConstraints", "checkConstraints") if getattr(r, n)]
    if unsupported:
        raise Untranslatable(
            hive.InvalidObjectException(
                message=f"this metastore is older than Hive 3 and cannot store {', '.join(unsupported)}; create the table without them"
            )
        )
    if r.primaryKeys or r.foreignKeys:
        return P.create_table_with_constraints_args(tbl=r.table, primaryKeys=r.primaryKeys or [], foreignKeys=r.foreignKeys or [])
    return P.create_table_with_environment_context_args(tbl=r.table, environment_context=r.envContext)


def _alter_table(a):
    r = a.req
    if r.expectedParameterKey is not None:
        # Hive 4 checks the parameter and alters in one transaction; the proxy cannot make that atomic.
        raise Untranslatable(
            hive.InvalidOperationException(
                message="alter_table with an expected parameter value needs a Hive 4 metastore; this one is older"
            )
        )
    return P.alter_table_with_environment_context_args(
        dbname=r.dbName, tbl_name=r.tableName, new_tbl=r.table, environment_context=r.environmentContext
    )


def _append_partition(a):
    r = a.appendPartitionsReq
    if r.partVals:
        return P.append_partition_with_environment_context_args(
            db_name=r.dbName, tbl_name=r.tableName, part_vals=r.partVals, environment_context=r.environmentContext
        )
    return P.append_partition_by_name_with_environment_context_args(
        db_name=r.dbName, tbl_name=r.tableName, part_name=r.name, environment_context=r.environmentContext
    )


def _drop_partition(a):
    r = a.dropPartitionReq
    delete = True if r.deleteData is None else r.deleteData
    if r.partVals:
        return P.drop_partition_with_environment_context_args(
            db_name=r.dbName, tbl_name=r.tblName, part_vals=r.partVals, deleteData=delete, environment_context=r.environmentContext
        )
    return P.drop_partition_by_name_with_environment_context_args(
        db_name=r.dbName, tbl_name=r.tblName, part_name=r.partName, deleteData=delete, environment_context=r.environmentContext
    )


def _max(parts) -> int:
    return -1 if parts is None else parts


def _catalog_of(a) -> str:
    """get_catalog(s) is answered from the default database: its location is the warehouse root."""
    name = getattr(getattr(a, "catName", None), "name", None)
    _default_catalog_only(name, hive.NoSuchObjectException)
    return P.get_database_args(name="default")


def _catalog(db, a):
    return hive.GetCatalogResponse(
        catalog=hive.Catalog(name=DEFAULT_CATALOG, description="Hive's default catalog", locationUri=db.locationUri)
    )


ADDED_IN_4_0 = {
    "create_database_req": _added(_create_database),
    "alter_database_req": _added(lambda a: P.alter_database_args(dbname=a.alterDbReq.oldDbName, db=a.alterDbReq.newDb)),
    "drop_database_req": _added(
        lambda a: P.drop_database_args(name=a.req.name, deleteData=a.req.deleteData, cascade=a.req.cascade),
        ignores_missing=lambda a: bool(a.req.ignoreUnknownDb),
    ),
    "get_database_req": _added(lambda a: P.get_database_args(name=a.request.name)),
    "create_table_req": _added(_create_table),
    "alter_table_req": _added(_alter_table, lambda r, a: hive.AlterTableResponse()),
    "drop_table_req": _added(
        lambda a: P.drop_table_with_environment_context_args(
            dbname=a.dropTableReq.dbName,
            name=a.dropTableReq.tableName,
            deleteData=True if a.dropTableReq.deleteData is None else a.dropTableReq.deleteData,
            environment_context=a.dropTableReq.envContext,
        )
    ),
    "append_partition_req": _added(_append_partition),
    "drop_partition_req": _added(_drop_partition),
    "rename_partition_req": _added(
        lambda a: P.rename_partition_args(db_name=a.req.dbName, tbl_name=a.req.tableName, part_vals=a.req.partVals, new_part=a.req.newPart),
        lambda r, a: hive.RenamePartitionResponse(),
    ),
    "alter_partitions_req": _added(
        lambda a: P.alter_partitions_with_environment_context_args(
            db_name=a.req.dbName, tbl_name=a.req.tableName, new_parts=a.req.partitions, environment_context=a.req.environmentContext
        ),
        lambda r, a: hive.AlterPartitionsResponse(),
    ),
    "get_partition_req": _added(
        lambda a: P.get_partition_args(db_name=a.req.dbName, tbl_name=a.req.tblName, part_vals=a.req.partVals),
        lambda r, a: hive.GetPartitionResponse(partition=r),
    ),
    "get_partitions_req": _added(
        lambda a: P.get_partitions_args(db_name=a.req.dbName, tbl_name=a.req.tblName, max_parts=_max(a.req.maxParts)),
        lambda r, a: hive.PartitionsResponse(partitions=r),
    ),
    "fetch_partition_names_req": _added(
        lambda a: P.get_partition_names_args(
            db_name=a.partitionReq.dbName, tbl_name=a.partitionReq.tblName, max_parts=_max(a.partitionReq.maxParts)
        )
    ),
    "get_partitions_by_filter_req": _added(
        lambda a: P.get_partitions_by_filter_args(
            db_name=a.req.dbName, tbl_name=a.req.tblName, filter=a.req.filter, max_parts=_max(a.req.maxParts)
        )
    ),
    "get_partitions_by_names_req": _added(
        lambda a: P.get_partitions_by_names_args(db_name=a.req.db_name, tbl_name=a.req.tbl_name, names=a.req.names or []),
        lambda r, a: hive.GetPartitionsByNamesResult(partitions=r),
    ),
    "get_partitions_ps_with_auth_req": _added(
        lambda a: P.get_partitions_ps_with_auth_args(
            db_name=a.req.dbName,
            tbl_name=a.req.tblName,
            part_vals=a.req.partVals or [],
            max_parts=_max(a.req.maxParts),
            user_name=a.req.userName,
            group_names=a.req.groupNames,
        ),
        lambda r, a: hive.GetPartitionsPsWithAuthResponse(partitions=r),
    ),
    "get_partition_names_ps_req": _added(
        lambda a: P.get_partition_names_ps_args(
            db_name=a.req.dbName, tbl_name=a.req.tblName, part_vals=a.req.partValues or [], max_parts=_max(a.req.maxParts)
        ),
        lambda r, a: hive.GetPartitionNamesPsResponse(names=r),
    ),
    "get_fields_req": _added(
        lambda a: P.get_fields_with_environment_context_args(
            db_name=a.req.dbName, table_name=a.req.tblName, environment_context=a.req.envContext
        ),
        lambda r, a: hive.GetFieldsResponse(fields=r),
    ),
    "get_schema_req": _added(
        lambda a: P.get_schema_with_environment_context_args(
            db_name=a.req.dbName, table_name=a.req.tblName, environment_context=a.req.envContext
        ),
        lambda r, a: hive.GetSchemaResponse(fields=r),
    ),
    # Hive 3 added catalogs (so 3.1 has these); 2.3 has one unnamed catalog.
    "get_catalogs": Translation(_catalog_of, lambda db, a: hive.GetCatalogsResponse(names=[DEFAULT_CATALOG]), added_in=(3, 0, 0)),
    "get_catalog": Translation(_catalog_of, _catalog, added_in=(3, 0, 0)),
}

#: Every translation, by the client's method.
# ------------------------------------------- Hive 3.0 moved InsertEventRequestData's fields

#: Not a missing call: the same call in Hive 3's layout (insert_event_layout.py).
LAYOUT_OF_3_0 = {"fire_listener_event": Translation(hive3_fire_listener_event, insert_event_answer, removed_in=(3, 0))}

TRANSLATIONS: dict[str, Translation] = {**REMOVED_IN_4_0_1, **ADDED_IN_4_0, **LAYOUT_OF_3_0}

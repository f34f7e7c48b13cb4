"""A catalog client behind the Connection the proxy's upstream speaks (upstream/wire.Connection).

A catalog's metastore config carries `connector(maker)` as its own connection factory, so Backends
hands sessions a CatalogConnection in place of a Thrift connection. `call(method, args)` answers Hive 2.3's read methods (the
configured version "2.3" makes Backends translate Hive 3/4 forms into these) from the client's
databases, tables and partitions, as `<method>_result` structs a metastore would send: a missing
object is the method's NoSuchObjectException, a refusal its MetaException, a catalog out of reach
BackendUnavailable (so the breaker and health treat it like a metastore that is down). Writes are
refused, except an Iceberg writer's `alter_table` on a client that commits (catalogs/client.py's
CommittingCatalog): such catalogs are otherwise read-only here.
"""

from __future__ import annotations

import threading

from hmsproxy.catalogs.client import CatalogClient, CatalogError, CatalogMaker, CatalogNotFound, CatalogRefused, CatalogUnavailable
from hmsproxy.protocol import idl
from hmsproxy.protocol.results import declared_fields, put_exception
from hmsproxy.routing.methods import METHOD_SPECS
from hmsproxy.routing.patterns import hive_match
from hmsproxy.upstream.wire import BackendUnavailable

hive = idl.hive

#: The Hive version a catalog connection answers as: Backends translates newer clients' calls to it.
SERVED_VERSION = "2.3"

#: Calls answered without asking the catalog (a session's opening ones, the breaker's probe).
_WITHOUT_CATALOG = frozenset({"getVersion", "set_ugi"})

#: Answers with nothing in them: constraints, statistics and privileges a catalog has none of.
_EMPTY_ANSWERS = {
    "get_primary_keys": lambda a: hive.PrimaryKeysResponse(primaryKeys=[]),
    "get_foreign_keys": lambda a: hive.ForeignKeysResponse(foreignKeys=[]),
    "get_indexes": lambda a: [],
    "get_index_names": lambda a: [],
    "get_table_statistics_req": lambda a: hive.TableStatsResult(tableStats=[]),
    "get_partitions_statistics_req": lambda a: hive.PartitionsStatsResult(partStats={}),
    "get_aggr_stats_for": lambda a: hive.AggrStats(colStats=[], partsFound=0),
    "show_locks": lambda a: hive.ShowLocksResponse(locks=[]),  # a catalog's locks are the primary's (remotes/routes.py)
    "get_privilege_set": lambda a: hive.PrincipalPrivilegeSet(userPrivileges={}, groupPrivileges={}, rolePrivileges={}),
}


def connector(maker: CatalogMaker):
    """The connection factory (upstream/backends.ConnectionFactory) of a catalog whose clients `maker` makes."""

    def connect(metastore: str, uris: tuple[str, ...], *, connect_timeout_s: float, call_timeout_s: float) -> CatalogConnection:
        return CatalogConnection(metastore, uris, maker, connect_timeout_s=connect_timeout_s, call_timeout_s=call_timeout_s)

    return connect


class CatalogConnection:
    """One session's connection to one catalog (upstream/wire.Connection). Not thread-safe, as a socket."""

    def __init__(self, metastore: str, uris: tuple[str, ...], maker: CatalogMaker, *, connect_timeout_s: float, call_timeout_s: float):
        self.metastore = metastore
        self.uris = tuple(uris)
        self.uri: str | None = None
        self.avoid = None  # as ThriftConnection's: one URI here, so nothing to order
        self._make = lambda: maker(connect_timeout_s, call_timeout_s)
        self._client: CatalogClient | None = None
        self._cut: tuple[str, str] | None = None
        #: Why the catalog refused this connection's handshake (credentials): every call's MetaException.
        self._refused: str | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<CatalogConnection {self.metastore}{' open' if self.is_open else ''}>"

    @property
    def is_open(self) -> bool:
        return self._client is not None

    @property
    def _where(self) -> str:
        return self.uri or ", ".join(self.uris) or self.metastore

    def open(self) -> None:
        if self._cut is not None:
            raise BackendUnavailable(self.metastore, *self._cut, cut=True)
        client = self._make()
        self._refused = None
        try:
            client.open()
        except CatalogRefused as e:  # it answered: not down, but every call on this connection is refused so
            self._refused = e.message
        except CatalogError as e:
            client.close()
            raise BackendUnavailable(self.metastore, self._where, e.message) from None
        self._client, self.uri = client, (self.uris[0] if self.uris else None)

    def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            client.close()

    def closed_by_peer(self) -> bool:
        return False  # each request is its own HTTP exchange: nothing kept can die between calls

    def cut(self, uri: str, reason: str) -> None:
        """End the call in flight: its client is closed (an HTTP request waiting on it fails) and the
        call raises BackendUnavailable(cut=True); the connection never carries another."""
        with self._lock:
            if self._cut is None:
                self._cut = (uri, reason)
        client = self._client
        if client is not None:
            client.close()

    def relay(self, method: str, args, sink, catalog_field=None, exchanged=None):
        """Never used: remotes are routed by their feature, whose calls are always decoded (pipeline/fastpath.py)."""
        raise BackendUnavailable(self.metastore, self._where, f"{method}: a catalog's answers are not relayed as bytes")

    def call(self, method: str, args):
        if self._cut is not None:
            raise BackendUnavailable(self.metastore, *self._cut, cut=True)
        if self._client is None:
            self.open()
        result = getattr(idl.HmsProxy, method + "_result")()
        if self._refused is not None and method not in _WITHOUT_CATALOG:
            put_exception(result, hive.MetaException(message=self._refused))
            return result
        answer = _ANSWERS.get(method)
        if answer is None:
            answer = _EMPTY_ANSWERS.get(method)
            answer = answer and (lambda client, a, f=answer: f(a))
        if answer is None:
            put_exception(result, hive.MetaException(message=self._unserved(method)))
            return result
        try:
            value = answer(self._client, args)
        except CatalogUnavailable as e:
            if self._cut is not None:
                raise BackendUnavailable(self.metastore, *self._cut, cut=True) from None
            raise BackendUnavailable(self.metastore, self._where, e.message) from None
        except CatalogNotFound as e:
            put_exception(result, _not_found(result, e.message))
            return result
        except CatalogError as e:
            put_exception(result, hive.MetaException(message=e.message))
            return result
        if self._cut is not None:  # answered after all, but the breaker or a fan-out gave up on it
            raise BackendUnavailable(self.metastore, *self._cut, cut=True)
        if 0 in result.thrift_spec:
            result.success = value
        return result

    def _unserved(self, method: str) -> str:
        spec = METHOD_SPECS.get(method)
        what = getattr(self._client, "description", self.metastore)
        if spec is not None and not spec.reads:
            return f"hmsproxy: {what} is read-only through the proxy ({method}): write through the catalog itself"
        return f"hmsproxy: {method} is not served for {what}"


def _not_found(result, message: str):
    """The 'no such object' exception `result` declares: NoSuchObjectException, or Hive's older Unknown* ones."""
    declared = declared_fields(result)
    for cls in (hive.NoSuchObjectException, hive.UnknownTableException, hive.UnknownDBException):
        if cls in declared:
            return cls(message=message)
    return hive.MetaException(message=message)


# -- the read methods, answered from the client -----------------------------------------------


def _matching(names: list[str], pattern: str | None) -> list[str]:
    return [n for n in names if hive_match(pattern, n)]


def _tables(client: CatalogClient, db: str, names) -> list:
    """The tables of `names` that exist, in that order (get_table_objects_by_name skips missing ones)."""
    found = []
    for name in names or ():
        try:
            found.append(client.table(db, name))
        except CatalogNotFound:
            pass
    return found


def _schema(table) -> list:
    return list(table.sd.cols or ()) + list(table.partitionKeys or ())


def _partitions(client: CatalogClient, db: str, table: str, max_parts: int | None = -1, filter: str | None = None) -> list:
    """The table's partitions; an unpartitioned table (or a catalog without partitions) has none."""
    if getattr(client, "partitions", None) is None:
        client.table(db, table)  # a missing table is still NoSuchObject
        if filter:
            raise CatalogNotFound(f"{db}.{table} has no partitions to filter")
        return []
    limit = -1 if max_parts is None else max_parts
    return client.partitions(db, table, limit, filter) if filter else client.partitions(db, table, limit)


def _name_of(table, partition) -> str:
    return "/".join(f"{k.name}={v}" for k, v in zip(table.partitionKeys or (), partition.values or ()))


def _named_partitions(client, db, table, max_parts=-1) -> list[tuple[str, object]]:
    """(name, partition) of the table's partitions, the table asked for once (its keys make the names)."""
    t = client.table(db, table)
    return [(_name_of(t, p), p) for p in _partitions(client, db, table, max_parts)]


def _partition_names(client, db, table, max_parts=-1) -> list[str]:
    return [name for name, _ in _named_partitions(client, db, table, max_parts)]


def _partitions_ps(client, a) -> list[tuple[str, object]]:
    """get_partitions_ps' and get_partition_names_ps' (name, partition) pairs: the values given match, at most max_parts."""
    matching = [(n, p) for n, p in _named_partitions(client, a.db_name, a.tbl_name) if _prefix_matches(p.values, a.part_vals)]
    return _limited(matching, a.max_parts)


def _prefix_matches(values, wanted) -> bool:
    """get_partitions_ps' rule: each given value matches, "" (or none) matches anything."""
    return all(not w or w == v for v, w in zip(values or (), wanted or ()))


def _partition(client, db, table, values):
    for p in _partitions(client, db, table):
        if list(p.values or ()) == list(values or ()):
            return p
    raise CatalogNotFound(f"partition {values} of {db}.{table} does not exist")


def _partition_by_name(client, db, table, name):
    for found, p in _named_partitions(client, db, table):
        if found == name:
            return p
    raise CatalogNotFound(f"partition {name} of {db}.{table} does not exist")


def _limited(items: list, max_parts) -> list:
    return items if max_parts is None or max_parts < 0 else items[:max_parts]


def _table_meta(client, db_patterns, tbl_patterns, tbl_types) -> list:
    metas = []
    for db in _matching(client.databases(), db_patterns):
        for name in _matching(client.tables(db), tbl_patterns):
            t = client.table(db, name)
            if not tbl_types or t.tableType in tbl_types:
                metas.append(hive.TableMeta(dbName=db, tableName=name, tableType=t.tableType, comments=(t.parameters or {}).get("comment")))
    return metas


def _commit(client, db: str, name: str, new_table, context=None):
    """An Iceberg writer's alter_table: its swap of metadata_location, if the client commits."""
    commit = getattr(client, "commit", None)
    if commit is None:
        raise CatalogRefused(
            f"hmsproxy: {client.description} is read-only through the proxy (alter_table): write through the catalog itself"
        )
    if new_table is None or (new_table.tableName or name).lower() != name.lower():
        raise CatalogRefused(f"hmsproxy: {client.description}: a table can't be renamed through the proxy")
    parameters = dict(new_table.parameters or {})
    expected = (context.properties or {}) if context is not None else {}
    # Iceberg's Java HiveCatalog names the version it replaces in the context; pyiceberg in a parameter.
    if expected.get("expected_parameter_key") == "metadata_location":
        previous = expected.get("expected_parameter_value")
    else:
        previous = parameters.get("previous_metadata_location")
    commit(db, name, parameters, previous)


_ANSWERS = {
    "getVersion": lambda c, a: SERVED_VERSION,
    "set_ugi": lambda c, a: [a.user_name, *(a.group_names or ())],
    "get_all_databases": lambda c, a: c.databases(),
    "get_databases": lambda c, a: _matching(c.databases(), a.pattern),
    "get_database": lambda c, a: c.database(a.name),
    "get_all_tables": lambda c, a: c.tables(a.db_name),
    "get_tables": lambda c, a: _matching(c.tables(a.db_name), a.pattern),
    "get_tables_by_type": lambda c, a: [
        n for n in _matching(c.tables(a.db_name), a.pattern) if not a.tableType or c.table(a.db_name, n).tableType == a.tableType
    ],
    "get_table_meta": lambda c, a: _table_meta(c, a.db_patterns, a.tbl_patterns, a.tbl_types),
    "get_table": lambda c, a: c.table(a.dbname, a.tbl_name),
    "alter_table": lambda c, a: _commit(c, a.dbname, a.tbl_name, a.new_tbl),
    "alter_table_with_environment_context": lambda c, a: _commit(c, a.dbname, a.tbl_name, a.new_tbl, a.environment_context),
    "get_table_req": lambda c, a: hive.GetTableResult(table=c.table(a.req.dbName, a.req.tblName)),
    "get_table_objects_by_name": lambda c, a: _tables(c, a.dbname, a.tbl_names),
    "get_table_objects_by_name_req": lambda c, a: hive.GetTablesResult(tables=_tables(c, a.req.dbName, a.req.tblNames)),
    "get_fields": lambda c, a: list(c.table(a.db_name, a.table_name).sd.cols or ()),
    "get_fields_with_environment_context": lambda c, a: list(c.table(a.db_name, a.table_name).sd.cols or ()),
    "get_schema": lambda c, a: _schema(c.table(a.db_name, a.table_name)),
    "get_schema_with_environment_context": lambda c, a: _schema(c.table(a.db_name, a.table_name)),
    "get_partitions": lambda c, a: _partitions(c, a.db_name, a.tbl_name, a.max_parts),
    "get_partitions_with_auth": lambda c, a: _partitions(c, a.db_name, a.tbl_name, a.max_parts),
    "get_partitions_by_filter": lambda c, a: _partitions(c, a.db_name, a.tbl_name, a.max_parts, a.filter),
    "get_partition_names": lambda c, a: _partition_names(c, a.db_name, a.tbl_name, a.max_parts),
    "get_partition": lambda c, a: _partition(c, a.db_name, a.tbl_name, a.part_vals),
    "get_partition_with_auth": lambda c, a: _partition(c, a.db_name, a.tbl_name, a.part_vals),
    "get_partition_by_name": lambda c, a: _partition_by_name(c, a.db_name, a.tbl_name, a.part_name),
    "get_partitions_by_names": lambda c, a: [p for name, p in _named_partitions(c, a.db_name, a.tbl_name) if name in set(a.names or ())],
    "get_partitions_ps": lambda c, a: [p for _, p in _partitions_ps(c, a)],
    "get_partitions_ps_with_auth": lambda c, a: [p for _, p in _partitions_ps(c, a)],
    "get_partition_names_ps": lambda c, a: [name for name, _ in _partitions_ps(c, a)],
    "get_table_column_statistics": lambda c, a: _no_statistics(c, a.db_name, a.tbl_name, a.col_name),
}


def _no_statistics(client, db, table, column):
    client.table(db, table)
    raise CatalogNotFound(f"no statistics of column {column} of {db}.{table}")

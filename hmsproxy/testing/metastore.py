"""FakeMetastore: an in-memory Hive metastore for unit tests, no JVM needed.

It keeps databases, tables and partitions and answers the common calls with
Hive 2.3's answers and declared exceptions (messages as a real 2.3 metastore
words them). Deliberate differences, each simpler than the real thing:

* ``get_table_names_by_filter`` treats every filter as matching all tables, and
  ``get_partitions_by_filter`` all partitions;
* ``drop_database`` of a missing database raises NoSuchObjectException (2.3
  answers a MetaException wrapping a NullPointerException there);
* no warehouse: locations are made up, nothing is checked on ``sd`` and
  EXTERNAL_TABLE is kept as given (2.3 wants ``EXTERNAL=TRUE`` too);
* "Partition already exists" names the partition, not Java's ``toString``.

Every other method, and every method listed in ``missing``, is answered
"Invalid method name" (TApplicationException UNKNOWN_METHOD), as a Java
server answers a call it does not have (e.g. Hive 4.0.1+ lacking get_table).
"""

from __future__ import annotations

import copy
import re
import threading
import time
from dataclasses import dataclass, field

from thriftpy2.thrift import TApplicationException, TException, TType

from hmsproxy.protocol import idl

hive = idl.hive

SUPPORTED = frozenset(
    {
        "getVersion",
        "set_ugi",
        "get_all_databases",
        "get_databases",
        "get_database",
        "create_database",
        "drop_database",
        "get_all_tables",
        "get_tables",
        "get_tables_by_type",
        "get_table",
        "get_table_req",
        "get_table_objects_by_name",
        "get_table_objects_by_name_req",
        "get_table_meta",
        "get_table_names_by_filter",
        "create_table",
        "create_table_with_environment_context",
        "drop_table",
        "drop_table_with_environment_context",
        "alter_table",
        "alter_table_with_environment_context",
        "add_partition",
        "add_partitions",
        "get_partitions",
        "get_partitions_by_filter",
        "get_partitions_by_names",
        "get_partitions_ps",
        "get_partition_names",
        "alter_partition",
        "drop_partition",
    }
)

_VALID_NAME = re.compile(r"[A-Za-z0-9_]+")  # MetaStoreUtils.validateName: Java's ASCII \w
# FileUtils.escapePathName's characters, escaped as %XX in partition names.
_ESCAPED = set("\"#%'*/:=?\\\x7f{[]^") | {chr(c) for c in range(1, 32)}


@dataclass
class ClientState:
    """What a metastore remembers about one client connection: its set_ugi identity."""

    user: str | None = None
    groups: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class RecordedCall:
    method: str
    args: object  # the `<method>_args` struct as the metastore received it
    user: str | None  # the connection's set_ugi user at the time, None before set_ugi


def _matches(pattern: str | None, name: str) -> bool:
    """Hive's name patterns ('*' any text, '|' alternatives, case-insensitive), written apart
    from hmsproxy.routing.patterns so a bug there is not mirrored here."""
    if pattern is None:
        return True
    return any(re.fullmatch(alt.replace("*", ".*"), name, re.IGNORECASE) for alt in pattern.split("|"))


def _escape(text: str) -> str:
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in text)


def partition_name(keys, values) -> str:
    """Hive's partition name, e.g. 'ds=2024-01-01/country=a%2Fb'."""
    return "/".join(f"{_escape(k.name)}={_escape(v)}" for k, v in zip(keys, values))


def _limit(items: list, max_items: int | None) -> list:
    return items if max_items is None or max_items < 0 else items[:max_items]


def _java_list(values) -> str:
    return "[" + ", ".join(values) + "]"


class FakeMetastore:
    """An in-memory metastore. Seed it by calling its IDL methods directly (not recorded);
    clients reach it through `handle` (recorded), normally via FakeConnection."""

    def __init__(self, name: str = "fake", *, version: str = "3.0", missing=(), databases=("default",)):
        self.name = name
        #: What getVersion answers; a real Hive 2.3 metastore answers "3.0".
        self.version = version
        #: Methods answered "Invalid method name", e.g. {"get_table"} for a Hive 4-like backend.
        self.missing: set[str] = set(missing)
        self.calls: list[RecordedCall] = []
        self.up = True
        self.down_reason = ""
        self._lock = threading.RLock()  # fan-outs call from several threads
        self._databases: dict[str, object] = {}
        self._tables: dict[tuple[str, str], object] = {}
        self._partitions: dict[tuple[str, str], dict[tuple[str, ...], object]] = {}
        for db in databases:
            self.create_database(hive.Database(name=db, parameters={}))

    def __repr__(self) -> str:
        return f"<FakeMetastore {self.name} {'up' if self.up else 'DOWN'}>"

    # -- for tests ----------------------------------------------------------------------

    def go_down(self, reason: str = "connection refused") -> None:
        """Every connection attempt and call fails with BackendUnavailable until come_up()."""
        self.up, self.down_reason = False, reason

    def come_up(self) -> None:
        self.up, self.down_reason = True, ""

    def calls_to(self, method: str) -> list[RecordedCall]:
        return [c for c in self.calls if c.method == method]

    @property
    def methods_called(self) -> list[str]:
        return [c.method for c in self.calls]

    # -- the server side ------------------------------------------------------------------

    def handle(self, method: str, args, client: ClientState):
        """Answer one call as a metastore would: the `<method>_result` struct, with a declared
        exception in its field. Raises TApplicationException as a Java server does.

        Any other Python exception a method raises (e.g. a test's subclass raising
        RuntimeError) propagates unchanged, standing for a bug inside the proxy's process.
        """
        result_cls = getattr(idl.HmsProxy, method + "_result")
        with self._lock:
            # Recorded even when answered "Invalid method name": tests check the proxy asked once.
            self.calls.append(RecordedCall(method, args, client.user))
            if method not in SUPPORTED or method in self.missing:
                raise TApplicationException(TApplicationException.UNKNOWN_METHOD, f"Invalid method name: '{method}'")
            kwargs = {spec[1]: getattr(args, spec[1]) for spec in type(args).thrift_spec.values()}
            result = result_cls()
            try:
                if method == "set_ugi":
                    success = self._set_ugi(client, **kwargs)
                else:
                    success = getattr(self, method)(**kwargs)
            except TApplicationException:
                raise
            except TException as e:
                declared = [
                    s[1] for s in result_cls.thrift_spec.values() if s[0] == TType.STRUCT and s[1] != "success" and isinstance(e, s[2])
                ]
                if not declared:  # Java turns an undeclared exception into this
                    raise TApplicationException(TApplicationException.INTERNAL_ERROR, f"Internal error processing {method}") from e
                setattr(result, declared[0], e)
                return result
            result.success = copy.deepcopy(success)
        return result

    def _set_ugi(self, client: ClientState, user_name, group_names):
        client.user, client.groups = user_name, list(group_names or [])
        return [*client.groups, user_name]  # Hive 2.3 answers the groups plus the user

    # -- fb303 and databases ------------------------------------------------------------

    def getVersion(self):
        return self.version

    def get_all_databases(self):
        return sorted(self._databases)

    def get_databases(self, pattern):
        return [d for d in sorted(self._databases) if _matches(pattern, d)]

    def get_database(self, name):
        db = self._databases.get((name or "").lower())
        if db is None:
            raise hive.NoSuchObjectException(message=name)
        return db

    def create_database(self, database):
        name = database.name or ""
        if not _VALID_NAME.fullmatch(name):
            raise hive.InvalidObjectException(message=f"{name} is not a valid database name")
        if name.lower() in self._databases:
            raise hive.AlreadyExistsException(message=f"Database {name.lower()} already exists")
        db = copy.deepcopy(database)
        db.name = name.lower()
        db.parameters = db.parameters or {}
        db.locationUri = db.locationUri or f"file:/fake-warehouse/{db.name}.db"
        self._databases[db.name] = db

    def drop_database(self, name, deleteData, cascade):
        db = self.get_database(name).name
        if db == "default":
            raise hive.MetaException(message="Can not drop default database")
        tables = [key for key in self._tables if key[0] == db]
        if tables and not cascade:
            raise hive.InvalidOperationException(message=f"Database {db} is not empty. One or more tables exist.")
        for key in tables:
            del self._tables[key]
            self._partitions.pop(key, None)
        del self._databases[db]

    # -- tables -----------------------------------------------------------------------------

    def _table_names(self, db_name) -> list[str]:
        db = (db_name or "").lower()
        return sorted(t for (d, t) in self._tables if d == db)

    def get_all_tables(self, db_name):
        return self._table_names(db_name)  # a missing database has no tables, no error

    def get_tables(self, db_name, pattern):
        return [t for t in self._table_names(db_name) if _matches(pattern, t)]

    def get_tables_by_type(self, db_name, pattern, tableType):
        db = (db_name or "").lower()
        return [t for t in self.get_tables(db, pattern) if not tableType or self._tables[db, t].tableType == tableType]

    def get_table_names_by_filter(self, dbname, filter, max_tables):
        return _limit(self._table_names(dbname), max_tables)  # every filter matches everything (see module doc)

    def _table(self, dbname, tbl_name):
        table = self._tables.get(((dbname or "").lower(), (tbl_name or "").lower()))
        if table is None:
            raise hive.NoSuchObjectException(message=f"{dbname}.{tbl_name} table not found")
        return table

    def get_table(self, dbname, tbl_name):
        return self._table(dbname, tbl_name)

    def get_table_req(self, req):
        return hive.GetTableResult(table=self._table(req.dbName, req.tblName))

    def get_table_objects_by_name(self, dbname, tbl_names):
        if not dbname:
            raise hive.UnknownDBException(message="DB name is null or empty")
        if dbname.lower() not in self._databases:
            raise hive.UnknownDBException(message=f"Could not find database {dbname}")
        if tbl_names is None:
            raise hive.InvalidOperationException(message=f"{dbname} cannot find null tables")
        wanted = dict.fromkeys(t.lower() for t in tbl_names)  # missing tables are left out
        return [self._tables[dbname.lower(), t] for t in wanted if (dbname.lower(), t) in self._tables]

    def get_table_objects_by_name_req(self, req):
        return hive.GetTablesResult(tables=self.get_table_objects_by_name(req.dbName, req.tblNames))

    def get_table_meta(self, db_patterns, tbl_patterns, tbl_types):
        return [
            hive.TableMeta(dbName=d, tableName=t, tableType=table.tableType, comments=(table.parameters or {}).get("comment"))
            for (d, t), table in sorted(self._tables.items())
            if _matches(db_patterns, d) and _matches(tbl_patterns, t) and (not tbl_types or table.tableType in tbl_types)
        ]

    def create_table(self, tbl):
        name = tbl.tableName or ""
        if not _VALID_NAME.fullmatch(name):
            raise hive.InvalidObjectException(message=f"{name} is not a valid object name")
        db = (tbl.dbName or "").lower()
        if db not in self._databases:
            raise hive.InvalidObjectException(message=tbl.dbName)  # 2.3 words it so
        if (db, name.lower()) in self._tables:
            raise hive.AlreadyExistsException(message=f"Table {name.lower()} already exists")
        table = copy.deepcopy(tbl)
        table.dbName, table.tableName = db, name.lower()
        table.createTime = table.createTime or int(time.time())
        table.parameters = table.parameters or {}
        table.partitionKeys = table.partitionKeys or []
        table.tableType = table.tableType or "MANAGED_TABLE"
        self._tables[db, table.tableName] = table
        self._partitions[db, table.tableName] = {}

    def create_table_with_environment_context(self, tbl, environment_context):
        self.create_table(tbl)

    def drop_table(self, dbname, name, deleteData):
        table = self._table(dbname, name)
        key = (table.dbName, table.tableName)
        del self._tables[key]
        self._partitions.pop(key, None)

    def drop_table_with_environment_context(self, dbname, name, deleteData, environment_context):
        self.drop_table(dbname, name, deleteData)

    def alter_table(self, dbname, tbl_name, new_tbl):
        try:
            old = self._table(dbname, tbl_name)
        except hive.NoSuchObjectException as e:
            raise hive.InvalidOperationException(message=e.message) from None
        old_key = (old.dbName, old.tableName)
        new_key = ((new_tbl.dbName or old.dbName).lower(), (new_tbl.tableName or old.tableName).lower())
        if new_key != old_key and new_key in self._tables:
            raise hive.InvalidOperationException(message=f"new table {new_key[0]}.{new_key[1]} already exists")
        table = copy.deepcopy(new_tbl)
        table.dbName, table.tableName = new_key
        del self._tables[old_key]
        self._tables[new_key] = table
        partitions = self._partitions.pop(old_key, {})
        for p in partitions.values():  # a rename carries the partitions along
            p.dbName, p.tableName = new_key
        self._partitions[new_key] = partitions

    def alter_table_with_environment_context(self, dbname, tbl_name, new_tbl, environment_context):
        self.alter_table(dbname, tbl_name, new_tbl)

    # -- partitions ---------------------------------------------------------------------

    def _check_partition(self, part):
        key = ((part.dbName or "").lower(), (part.tableName or "").lower())
        table = self._tables.get(key)
        if table is None:
            raise hive.InvalidObjectException(message="Unable to add partition because table or database do not exist")
        values = list(part.values or [])
        if len(values) != len(table.partitionKeys):
            keys = "".join(f"{k.name}, " for k in table.partitionKeys)
            raise hive.MetaException(message=f"Invalid partition key & values; keys [{keys}], values [{''.join(v + ', ' for v in values)}]")
        if tuple(values) in self._partitions[key]:
            raise hive.AlreadyExistsException(message=f"Partition already exists: {key[0]}.{key[1]} {_java_list(values)}")
        return key

    def _store_partition(self, key, part):
        stored = copy.deepcopy(part)
        stored.dbName, stored.tableName = key
        stored.createTime = stored.createTime or int(time.time())
        stored.parameters = stored.parameters or {}
        self._partitions[key][tuple(stored.values)] = stored
        return stored

    def add_partition(self, new_part):
        return self._store_partition(self._check_partition(new_part), new_part)

    def add_partitions(self, new_parts):
        keys = [self._check_partition(p) for p in new_parts or []]
        seen = set()
        for key, p in zip(keys, new_parts or []):  # all or nothing, as Hive's one transaction
            if (key, tuple(p.values)) in seen:
                raise hive.AlreadyExistsException(message=f"Partition already exists: {key[0]}.{key[1]} {_java_list(p.values)}")
            seen.add((key, tuple(p.values)))
        for key, p in zip(keys, new_parts or []):
            self._store_partition(key, p)
        return len(keys)

    def _sorted_partitions(self, db_name, tbl_name) -> list[tuple[str, object]]:
        table = self._table(db_name, tbl_name)
        parts = self._partitions[table.dbName, table.tableName].values()
        return sorted((partition_name(table.partitionKeys, p.values), p) for p in parts)

    def get_partitions(self, db_name, tbl_name, max_parts):
        return _limit([p for _, p in self._sorted_partitions(db_name, tbl_name)], max_parts)

    def get_partitions_ps(self, db_name, tbl_name, part_vals, max_parts):
        """Partitions whose leading values are `part_vals` ('' matches any value, as in Hive)."""
        wanted = list(part_vals or [])
        found = [p for _, p in self._sorted_partitions(db_name, tbl_name) if all(w in ("", v) for w, v in zip(wanted, p.values))]
        return _limit(found, max_parts)

    def get_partitions_by_filter(self, db_name, tbl_name, filter, max_parts):  # noqa: A002 (the IDL's name)
        """Every partition: the filter is not read (the module doc's differences)."""
        return self.get_partitions(db_name, tbl_name, max_parts)

    def get_partitions_by_names(self, db_name, tbl_name, names):
        wanted = set(names or [])
        return [p for n, p in self._sorted_partitions(db_name, tbl_name) if n in wanted]

    def get_partition_names(self, db_name, tbl_name, max_parts):
        try:
            names = [n for n, _ in self._sorted_partitions(db_name, tbl_name)]
        except hive.NoSuchObjectException:
            # Hive 2.3 fails with a NullPointerException here, which its server answers so.
            raise TApplicationException(TApplicationException.INTERNAL_ERROR, "Internal error processing get_partition_names") from None
        return _limit(names, max_parts)

    def alter_partition(self, db_name, tbl_name, new_part):
        key = ((db_name or "").lower(), (tbl_name or "").lower())
        if key not in self._tables:
            raise hive.InvalidOperationException(message="Unable to alter partition because table or database does not exist.")
        if tuple(new_part.values or []) not in self._partitions[key]:
            raise hive.InvalidOperationException(message="alter is not possible")
        self._store_partition(key, new_part)

    def drop_partition(self, db_name, tbl_name, part_vals, deleteData):
        parts = self._partitions.get(((db_name or "").lower(), (tbl_name or "").lower()), {})
        if parts.pop(tuple(part_vals or []), None) is None:
            raise hive.NoSuchObjectException(message=f"partition values={_java_list(part_vals or [])}")
        return True

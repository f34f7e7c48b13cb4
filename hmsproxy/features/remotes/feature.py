"""Remote databases and tables at run time: routing, listing, read-only, DDL through plain clients.

A remote database `local` is a synonym for database `remote` in another
metastore; a remote table `local_db.local_tbl` is a synonym for
`remote_db.remote_tbl` there. Both live in the proxy's store (hmsproxy/store)
and are seen through a cached view (remotes/registry.py). This feature:

- routes every call on a remote to its target metastore (remotes/targets.py),
  renaming the database (a MANUAL naming with an alias) and, for tables, the
  table (routing/table_rewrite.py) in both directions;
- lists remotes: database lists, table lists of local databases,
  get_table_meta and get_table_objects_by_name;
- refuses every write on a remote (only the link can be dropped);
- shows the link as parameters of get_database / get_table answers
  (hmsproxy.remote.uris, .database, .table, .factory), so DESCRIBE EXTENDED has it;
- turns CREATE DATABASE ... WITH DBPROPERTIES ('hmsproxy.remote.uris'=...) and
  CREATE TABLE ... TBLPROPERTIES (...) into new remotes, and DROP into unlinking.
"""

from __future__ import annotations

import copy
import logging
import threading
import time
from dataclasses import dataclass, replace

from hmsproxy import idl
from hmsproxy.call import Call
from hmsproxy.config_model import DatabaseResolution
from hmsproxy.ddl import statements as st
from hmsproxy.errors import UNAVAILABLE_TYPES, AccessDenied, Conflict, InvalidRequest, ProxyError
from hmsproxy.features.remotes.cache import RemotesCache
from hmsproxy.features.remotes.factories import URIS_PROPERTY, UnknownFactory
from hmsproxy.features.remotes.targets import (
    LINK_DATABASE,
    LINK_FACTORY,
    LINK_TABLE,
    LINK_URIS,
    Targets,
    describe_target,
    is_link,
    link_properties,
    normalize_factory,
)
from hmsproxy.features.remotes.tunnels import TunnelError
from hmsproxy.routing.methods import TABLE_CREATING, Kind
from hmsproxy.routing.naming import MetastoreNaming, join_catalog, split_catalog
from hmsproxy.routing.patterns import hive_match
from hmsproxy.routing.router import Route, UnknownDatabase
from hmsproxy.routing.table_rewrite import rewrite_table_value, rewrite_tables, table_renamer
from hmsproxy.session import Session

log = logging.getLogger(__name__)

DROP_TABLE = frozenset({"drop_table", "drop_table_with_environment_context"})
TABLE_LISTS = frozenset({"get_all_tables", "get_tables"})
#: Where a remote managed table's own type is kept (clients see it as EXTERNAL_TABLE).
REMOTE_TABLE_TYPE = "hmsproxy.remote.table.type"
#: Seconds a target that failed during a listing is left out of further listings.
LISTING_BACKOFF_S = 5.0


class RemoteUnavailable(ProxyError):
    preferred = UNAVAILABLE_TYPES
    outcome = "unavailable"


@dataclass(frozen=True)
class Link:
    """One call's remote: what it is called here and where it points."""

    kind: str  # "database" or "table"
    local: str  # "db" or "db.tbl"
    remote_db: str
    remote_table: str | None
    factory: str
    properties: dict

    @property
    def subject(self) -> str:
        return f"remote {self.kind} {self.local}"

    @property
    def where(self) -> str:
        return describe_target(self.factory, self.properties)

    @property
    def remote(self) -> str:
        return f"{self.remote_db}.{self.remote_table}" if self.remote_table else self.remote_db

    def parameters(self, table: str | None = None) -> dict[str, str]:
        params = {
            LINK_URIS: self.properties.get(URIS_PROPERTY, ""),
            LINK_DATABASE: self.remote_db,
            LINK_FACTORY: self.factory,
        }
        if self.remote_table or table:
            params[LINK_TABLE] = self.remote_table or table
        if self.properties.get("ssh.tunnel.route"):
            params["hmsproxy.remote.ssh.tunnel.route"] = self.properties["ssh.tunnel.route"]
        return params


def _db_link(rd) -> Link:
    return Link("database", rd.local_name, rd.remote_name, None, rd.factory, rd.properties)


def _table_link(rt) -> Link:
    return Link("table", f"{rt.local_db}.{rt.local_name}", rt.remote_db, rt.remote_name, rt.factory, rt.properties)


class Remotes:
    def __init__(self, handler, store, *, check_interval_s: float = 1.0):
        self.handler = handler
        self.store = store
        self.cache = RemotesCache(store.remotes, check_interval_s)
        self.targets = Targets(handler.backends, lambda: handler.config.server.connect_timeout_s)
        self._backoff: dict[str, float] = {}
        self._backoff_lock = threading.Lock()
        # The proxy's own connections, for existence checks outside client calls (DDL statements).
        self._session = Session(handler.backends, "remotes")
        self._session_lock = threading.Lock()
        handler.closers.append(self.close)

    def close(self) -> None:
        self.targets.close()
        self._session.close()

    def on_complete(self, call: Call) -> None:
        # hmsproxy_execute (features/ddl.py) may have changed remotes: see them at once.
        if call.method == "hmsproxy_execute":
            self.cache.refresh()

    def describe(self) -> list[str]:
        """Lines for hmsproxy_describe (`hmsproxy status`): the remotes and their targets' health."""
        snap = self.cache.view(self.handler.config.remotes)
        lines = [f"remotes: {len(snap.databases)} databases, {len(snap.tables)} tables (store generation {snap.generation})"]
        targets = {}
        for rd in snap.databases.values():
            targets.setdefault(self.targets.key(normalize_factory(rd.factory), rd.properties), []).append(rd.local_name)
        for rt in snap.tables.values():
            targets.setdefault(self.targets.key(normalize_factory(rt.factory), rt.properties), []).append(f"{rt.local_db}.{rt.local_name}")
        for key, users in sorted(targets.items()):
            st = self.handler.backends.state(key)
            state = {None: "not contacted", True: "up", False: "DOWN"}[st.up]
            err = f" (last error: {st.last_error})" if st.up is False and st.last_error else ""
            lines.append(f"  {key}: {state}{err}; serves {', '.join(sorted(users))}")
        return lines

    # -- what the DDL statements ask (features/ddl.py) ------------------------------------

    def exists_locally(self, db: str) -> bool:
        """Does a real (non-remote) database `db` exist in the federation? (True if unsure.)"""
        with self._session_lock:
            found = _database_exists(self._session, self.handler.router, db)
        return found is not False

    def table_exists_locally(self, db: str, table: str) -> bool:
        """Does a real table db.table exist in the federation? (False if unsure.)"""
        try:
            route = self.handler.router.route(db)
        except UnknownDatabase:
            return False
        args = idl.HmsProxy.get_table_args(dbname=route.backend_db, tbl_name=table)
        try:
            with self._session_lock:
                result = self._session.call(route.metastore, "get_table", args, read_only=True)
        except Exception as e:
            log.info("can't tell whether table %s.%s exists: %s", db, table, e)
            return False
        return getattr(result, "success", None) is not None

    def _view(self, call: Call):
        """The remotes this call sees: the store's plus the config's (remotes.databases / .tables)."""
        return self.cache.view(call.router.config.remotes)

    # -- routing -------------------------------------------------------------------

    def on_request(self, call: Call):
        spec = call.spec
        if spec.kind is not Kind.ROUTED:
            return None
        if spec.name == "create_database" and call.args.database is not None and is_link(call.args.database.parameters):
            return self._create_database(call, call.args.database)
        if spec.name in TABLE_CREATING and call.args.tbl is not None and is_link(call.args.tbl.parameters):
            return self._create_table(call, call.args.tbl)
        snap = self._view(call)
        if snap.empty:
            return None
        catalog = split_catalog(call.client_db)[0] if call.client_db else None
        rd = snap.database(call.client_db)
        if rd is not None:
            link = _db_link(rd)
            if spec.name == "drop_database":
                static = rd.local_name in snap.static_databases
                return self._unlink(call, link, st.DropRemoteDatabase(rd.local_name), static)
            if spec.writes:
                raise AccessDenied(f"hmsproxy: {link.subject} is read-only: it links to {link.remote} in {link.where}")
            call.route = self._route(call, link, local_db=rd.local_name, catalog=catalog)
            call.remote_link = link
            return None
        rt = snap.table(call.client_db, call.table)
        if rt is not None:
            link = _table_link(rt)
            if spec.name in DROP_TABLE:
                static = (rt.local_db, rt.local_name) in snap.static_tables
                return self._unlink(call, link, st.DropRemoteTable(rt.local_db, rt.local_name), static)
            if spec.writes:
                raise AccessDenied(f"hmsproxy: {link.subject} is read-only: it links to {link.remote} in {link.where}")
            call.route = self._route(call, link, local_db=rt.local_db, catalog=catalog)
            if rt.local_name != rt.remote_name:
                rewrite_tables(call.args, table_renamer(rt.local_name, rt.remote_name))
            call.remote_link = link
        return None

    def _route(self, call: Call, link: Link, *, local_db: str, catalog: str | None) -> Route:
        call.subject = link.subject
        ms = self._metastore(link)
        # A rebuilt SSH tunnel listens on a new port: this session's old connection is stale.
        seen = call.session.__dict__.setdefault("remote_uris", {})
        if seen.get(ms.name, ms.uris) != ms.uris:
            call.session.discard(ms.name)
        seen[ms.name] = ms.uris
        if link.remote_db != local_db:
            ms = replace(ms, database_name_mapping={link.remote_db: local_db})
        return Route(MetastoreNaming(ms, DatabaseResolution.MANUAL), link.remote_db, catalog)

    def _metastore(self, link: Link):
        try:
            return self.targets.metastore(link.factory, link.properties)
        except TunnelError as e:
            raise RemoteUnavailable(f"hmsproxy: {link.subject}: metastore {link.where} is unavailable: {e}") from None
        except (ValueError, UnknownFactory) as e:
            raise InvalidRequest(f"hmsproxy: {link.subject}: {e}") from None

    # -- answers -------------------------------------------------------------------

    def on_response(self, call: Call, result) -> None:
        name = call.spec.name
        if call.spec.kind is Kind.FANOUT:
            if name in ("get_all_databases", "get_databases") and result.success is not None:
                self._add_databases(call, result)
            elif name == "get_table_meta" and result.success is not None:
                self._add_table_metas(call, result)
            return
        link = getattr(call, "remote_link", None)
        if link is not None:
            self._link_response(call, link, result)
            return
        if call.spec.kind is not Kind.ROUTED or not call.client_db:
            return
        if name == "drop_database" and not _has_error(result):
            self._drop_links_of(call.client_db)
            return
        snap = self._view(call)
        tables = snap.tables_of(call.client_db)
        if not tables or getattr(result, "success", None) is None:
            return
        if name in TABLE_LISTS:
            pattern = getattr(call.args, "pattern", None)
            have = {t.lower() for t in result.success}
            for rt in tables:
                if rt.local_name not in have and hive_match(pattern, rt.local_name):
                    result.success.append(rt.local_name)
        elif name == "get_table_objects_by_name":
            result.success = self._with_remote_tables(call, snap, call.args.tbl_names, result.success)
        elif name == "get_table_objects_by_name_req":
            req = call.args.req
            result.success.tables = self._with_remote_tables(call, snap, req.tblNames, result.success.tables or [])

    def _link_response(self, call: Call, link: Link, result) -> None:
        name = call.spec.name
        success = getattr(result, "success", None)
        if success is None:
            return
        if link.kind == "table" and link.remote_table != link.local.split(".", 1)[1]:
            rewrite_table_value(success, call.spec.success_type, table_renamer(link.remote_table, link.local.split(".", 1)[1]))
        if name == "get_database":
            success.parameters = {**(success.parameters or {}), **link.parameters()}
        elif name == "get_table":
            _add_params(success, link)
        elif name == "get_table_req" and success.table is not None:
            _add_params(success.table, link)
        elif name == "get_table_objects_by_name":
            for t in success:
                _add_params(t, link)
        elif name == "get_table_objects_by_name_req":
            for t in success.tables or []:
                _add_params(t, link)

    # -- listings ------------------------------------------------------------------

    def _add_databases(self, call: Call, result) -> None:
        snap = self._view(call)
        if not snap.databases:
            return
        pattern = None
        if call.spec.name == "get_databases":
            pattern = split_catalog(call.args.pattern or "*")[1]
        have = {n.lower() for n in result.success}
        for local in snap.databases:
            if local not in have and hive_match(pattern, local):
                result.success.append(local)

    def _add_table_metas(self, call: Call, result) -> None:
        snap = self._view(call)
        if snap.empty:
            return
        _, db_patterns = split_catalog(call.args.db_patterns or "*")
        tbl_patterns, tbl_types = call.args.tbl_patterns, call.args.tbl_types
        remote_dbs = [rd for local, rd in snap.databases.items() if hive_match(db_patterns, local)]
        shadowed = {rd.local_name for rd in remote_dbs}
        metas = [m for m in result.success if m.dbName.lower() not in shadowed]
        for rd in remote_dbs:
            link = _db_link(rd)
            for meta in self._remote_metas(call, link, rd.remote_name, tbl_patterns or "*", tbl_types):
                meta.dbName = rd.local_name
                metas.append(meta)
        # Remote tables: one call per target metastore and remote database.
        groups: dict[tuple, list] = {}
        for (local_db, local_name), rt in snap.tables.items():
            if local_db in shadowed or not hive_match(db_patterns, local_db) or not hive_match(tbl_patterns, local_name):
                continue
            groups.setdefault((rt.factory, tuple(sorted(rt.properties.items())), rt.remote_db), []).append(rt)
        linked = {(rt.local_db, rt.local_name) for rts in groups.values() for rt in rts}
        metas = [m for m in metas if (m.dbName.lower(), m.tableName.lower()) not in linked]
        for (_, _, remote_db), rts in groups.items():
            by_remote: dict[str, list] = {}
            for rt in rts:
                by_remote.setdefault(rt.remote_name, []).append(rt)
            pattern = "|".join(sorted(by_remote))
            for meta in self._remote_metas(call, _table_link(rts[0]), remote_db, pattern, tbl_types):
                for rt in by_remote.get(meta.tableName.lower(), []):
                    mine = copy.copy(meta)
                    mine.dbName, mine.tableName = rt.local_db, rt.local_name
                    metas.append(mine)
        result.success = metas

    def _remote_metas(self, call: Call, link: Link, db_pattern: str, tbl_pattern: str, tbl_types) -> list:
        args = idl.HmsProxy.get_table_meta_args(db_patterns=db_pattern, tbl_patterns=tbl_pattern, tbl_types=tbl_types)
        answer = self._listing_call(call, link, "get_table_meta", args)
        return list(answer.success or []) if answer is not None else []

    def _with_remote_tables(self, call: Call, snap, names, tables: list) -> list:
        wanted = [snap.table(call.client_db, n) for n in names or []]
        wanted = [rt for rt in wanted if rt is not None]
        if not wanted:
            return tables
        remote_names = {rt.local_name for rt in wanted}
        tables = [t for t in tables if t.tableName.lower() not in remote_names]
        catalog = split_catalog(call.client_db)[0]
        for rt in wanted:
            link = _table_link(rt)
            args = idl.HmsProxy.get_table_args(dbname=join_catalog(catalog, rt.remote_db), tbl_name=rt.remote_name)
            answer = self._listing_call(call, link, "get_table", args)
            if answer is None or answer.success is None:
                continue
            table = answer.success
            table.dbName, table.tableName = join_catalog(catalog, rt.local_db), rt.local_name
            _add_params(table, link)
            tables.append(table)
        return tables

    def _listing_call(self, call: Call, link: Link, method: str, args):
        """A call for a listing; a remote that fails is left out (and skipped for a few seconds)."""
        try:
            ms = self._metastore(link)
        except ProxyError as e:
            log.warning("%s: left %s out: %s", call.spec.name, link.subject, e)
            return None
        now = time.monotonic()
        with self._backoff_lock:
            if self._backoff.get(ms.name, 0) > now:
                return None
        try:
            return call.session.call(ms, method, args, read_only=True)
        except Exception as e:  # unavailable or a TApplicationException: a listing must not fail for it
            with self._backoff_lock:
                self._backoff[ms.name] = now + LISTING_BACKOFF_S
            log.warning("%s: left %s out: %s", call.spec.name, link.subject, e)
            return None

    # -- creating and dropping links -------------------------------------------------

    def _create_database(self, call: Call, db):
        local = split_catalog(db.name or "")[1].lower()
        if not local:
            raise InvalidRequest("hmsproxy: a remote database needs a name")
        params = dict(db.parameters or {})
        statement = st.CreateRemoteDatabase(
            local,
            (params.get(LINK_DATABASE) or local).strip().lower(),
            normalize_factory(params.get(LINK_FACTORY)),
            link_properties(params),
        )
        return self._create(call, statement, static_clash=local in self._view(call).static_databases)

    def _create_table(self, call: Call, tbl):
        local_db = split_catalog(tbl.dbName or "")[1].lower()
        local_name = (tbl.tableName or "").lower()
        params = dict(tbl.parameters or {})
        statement = st.CreateRemoteTable(
            local_db,
            local_name,
            (params.get(LINK_DATABASE) or local_db).strip().lower(),
            (params.get(LINK_TABLE) or local_name).strip().lower(),
            normalize_factory(params.get(LINK_FACTORY)),
            link_properties(params),
        )
        snap = self._view(call)
        clash = (local_db, local_name) in snap.static_tables or local_db in snap.static_databases
        return self._create(call, statement, static_clash=clash)

    def _create(self, call: Call, statement, *, static_clash: bool):
        """A plain client's CREATE with hmsproxy.remote.* properties, run as the statement it means.

        The DDL executor holds the rules (who may, valid factory and properties, name
        clashes); only the config's own remotes, which the store doesn't know, are checked here.
        """
        what = f"remote {'table' if isinstance(statement, st.CreateRemoteTable) else 'database'}"
        if static_clash:
            raise Conflict(
                f"hmsproxy: can't create {what} {statement.name}: the name is taken by a remote defined in the proxy's configuration"
            )
        ddl = self.handler.ddl
        ddl.execute(statement, ddl.context(call.session.user, None))
        self.cache.refresh()
        call.backend = "hmsproxy"
        return call.spec.result_cls()

    def _unlink(self, call: Call, link: Link, statement, static: bool):
        """DROP DATABASE/TABLE of a remote from a plain client: the link goes, nothing remote is touched."""
        if static:
            raise AccessDenied(f"hmsproxy: {link.subject} is defined in the proxy's configuration (remotes.{link.kind}s); remove it there")
        ddl = self.handler.ddl
        ddl.execute(statement, ddl.context(call.session.user, None))
        self.cache.refresh()
        log.info("%s dropped by %s (the link only; %s in %s is untouched)", link.subject, call.session.user, link.remote, link.where)
        call.backend = "hmsproxy"
        return call.spec.result_cls()

    def _drop_links_of(self, client_db: str) -> None:
        db = split_catalog(client_db)[1].lower()
        for rt in self.cache.snapshot().tables_of(db):
            self.store.remotes.drop_table(rt.local_db, rt.local_name)
        self.cache.refresh()


def _database_exists(session: Session, router, db: str) -> bool | None:
    """Whether a real database exists on the metastore the federation routes it to; None if unsure."""
    try:
        route = router.route(db)
    except UnknownDatabase:
        return False
    try:
        args = idl.HmsProxy.get_database_args(name=route.backend_db)
        result = session.call(route.metastore, "get_database", args, read_only=True)
    except Exception as e:  # its metastore is down: can't tell
        log.info("can't tell whether database %s exists: %s", db, e)
        return None
    return result.success is not None


def _add_params(table, link: Link) -> None:
    """Append the link to a remote table's parameters; show a managed table as external.

    The proxy owns no remote data: as an external table, clients that delete files
    themselves for managed tables (Spark's TRUNCATE TABLE) refuse before touching them.
    """
    if table is None:
        return
    params = {**(table.parameters or {}), **link.parameters(table.tableName if link.kind == "database" else None)}
    if table.tableType == "MANAGED_TABLE":
        table.tableType = "EXTERNAL_TABLE"
        params["EXTERNAL"] = "TRUE"
        params[REMOTE_TABLE_TYPE] = "MANAGED_TABLE"
    table.parameters = params


def _has_error(result) -> bool:
    return any(v is not None for k, v in vars(result).items() if k != "success")

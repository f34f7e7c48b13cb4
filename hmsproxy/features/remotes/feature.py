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

import logging
import threading
import time
from dataclasses import dataclass, field, replace

from hmsproxy.config.model import DatabaseResolution
from hmsproxy.features.catalog import VirtualDatabase, VirtualTable
from hmsproxy.features.remotes import statements as st
from hmsproxy.features.remotes.cache import RemotesCache
from hmsproxy.features.remotes.config import SECTION
from hmsproxy.features.remotes.factories import URIS_PROPERTY, UnknownFactory
from hmsproxy.features.remotes.runners import RemoteRunners
from hmsproxy.features.remotes.statements import STATEMENTS
from hmsproxy.features.remotes.store import REMOTES_SCHEMA, RemoteRepository
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
from hmsproxy.pipeline.call import Call
from hmsproxy.pipeline.errors import UNAVAILABLE_TYPES, AccessDenied, Conflict, InvalidRequest, ProxyError
from hmsproxy.pipeline.platform import Feature, Platform
from hmsproxy.protocol import idl
from hmsproxy.routing.methods import Kind, MethodSpec
from hmsproxy.routing.naming import MetastoreNaming, join_catalog, split_catalog
from hmsproxy.routing.router import Route
from hmsproxy.routing.table_rewrite import rewrite_table_value, rewrite_tables, table_renamer

log = logging.getLogger(__name__)

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


@dataclass
class RemotesSessionState:
    #: Target metastore -> the URIs this client's connection to it was made for.
    seen_uris: dict[str, tuple[str, ...]] = field(default_factory=dict)


class Remotes(Feature):
    """Remote databases and tables: routes calls on them, lists them (features/catalog.py), refuses writes."""

    name = "remotes"
    config_section = SECTION
    store_schema = REMOTES_SCHEMA
    statements = STATEMENTS
    #: How often the store's remotes generation is checked (another proxy may have changed them).
    check_interval_s = 1.0
    #: Calls on remote tables are routed here (on_request), never answered by the catalog.
    routes_its_tables = True

    def __init__(self, platform: Platform):
        super().__init__(platform)
        self.repo = RemoteRepository(platform.store)
        self.cache = RemotesCache(self.repo, self.check_interval_s)
        self.targets = Targets(platform.backends, lambda: platform.config().server.connect_timeout_s)
        self._runners = RemoteRunners(self.repo)
        self._backoff: dict[str, float] = {}
        self._backoff_lock = threading.Lock()

    def wants(self, spec: MethodSpec) -> bool:
        return spec.kind is Kind.ROUTED

    def new_session_state(self) -> RemotesSessionState:
        return RemotesSessionState()

    def close(self) -> None:
        self.targets.close()

    def statement_runners(self) -> dict:
        # After a statement changed the store, this proxy serves the change at once.
        return {kind: self._then_refresh(run) for kind, run in self._runners.runners().items()}

    def _then_refresh(self, run):
        def run_and_refresh(statement, ctx):
            try:
                return run(statement, ctx)
            finally:
                self.cache.refresh()

        return run_and_refresh

    def describe(self) -> list[str]:
        """Lines for hmsproxy_describe (`hmsproxy status`): the remotes and their targets' health."""
        snap = self.cache.view(self.settings(self.platform.config()))
        lines = [f"remotes: {len(snap.databases)} databases, {len(snap.tables)} tables (store generation {snap.generation})"]
        targets = {}
        for rd in snap.databases.values():
            targets.setdefault(self.targets.key(normalize_factory(rd.factory), rd.properties), []).append(rd.local_name)
        for rt in snap.tables.values():
            targets.setdefault(self.targets.key(normalize_factory(rt.factory), rt.properties), []).append(f"{rt.local_db}.{rt.local_name}")
        for key, users in sorted(targets.items()):
            state = self.platform.backends.state(key)
            up = {None: "not contacted", True: "up", False: "DOWN"}[state.up]
            err = f" (last error: {state.last_error})" if state.up is False and state.last_error else ""
            lines.append(f"  {key}: {up}{err}; serves {', '.join(sorted(users))}")
        return lines

    def _view(self, call: Call):
        """The remotes this call sees: the store's plus the config's (remotes.databases / .tables)."""
        return self.cache.view(self.settings(call.router.config))

    # -- routing -------------------------------------------------------------------

    def on_request(self, call: Call):
        spec = call.spec
        if spec.creates_database:
            db = spec.new_database(call.args)
            if db is not None and is_link(db.parameters):
                return self._create_database(call, db)
        if spec.creates_table:
            tbl = spec.new_table(call.args)
            if tbl is not None and is_link(tbl.parameters):
                return self._create_table(call, tbl)
        snap = self._view(call)
        if snap.empty:
            return None
        catalog = split_catalog(call.client_db)[0] if call.client_db else None
        rd = snap.database(call.client_db)
        if rd is not None:
            link = _db_link(rd)
            if spec.drops_database:
                static = rd.local_name in snap.static_databases
                return self._unlink(call, link, st.DropRemoteDatabase(rd.local_name), static)
            if spec.writes:
                raise AccessDenied(f"hmsproxy: {link.subject} is read-only: it links to {link.remote} in {link.where}")
            call.route = self._route(call, link, local_db=rd.local_name, catalog=catalog)
            call.notes[self.name] = link
            return None
        rt = snap.table(call.client_db, call.table)
        if rt is not None:
            link = _table_link(rt)
            if spec.drops_table:
                static = (rt.local_db, rt.local_name) in snap.static_tables
                return self._unlink(call, link, st.DropRemoteTable(rt.local_db, rt.local_name), static)
            if spec.writes:
                raise AccessDenied(f"hmsproxy: {link.subject} is read-only: it links to {link.remote} in {link.where}")
            call.route = self._route(call, link, local_db=rt.local_db, catalog=catalog)
            if rt.local_name != rt.remote_name:
                rewrite_tables(call.args, table_renamer(rt.local_name, rt.remote_name))
            call.notes[self.name] = link
        return None

    def _route(self, call: Call, link: Link, *, local_db: str, catalog: str | None) -> Route:
        call.subject = link.subject
        ms = self._metastore(link)
        # A rebuilt SSH tunnel listens on a new port: this session's old connection is stale.
        seen = call.session.state(self).seen_uris
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

    # -- answers of calls on a remote ---------------------------------------------------

    def needs_result(self, call: Call) -> bool:
        return self.name in call.notes or call.spec.drops_database

    def on_response(self, call: Call, result) -> None:
        link = call.notes.get(self.name)
        if link is not None:
            self._link_response(call, link, result)
        elif call.spec.drops_database and call.client_db and not _has_error(result):
            self._drop_links_of(call.client_db)

    def _link_response(self, call: Call, link: Link, result) -> None:
        name = call.spec.name
        success = getattr(result, "success", None)
        if success is None:
            return
        if link.kind == "table" and link.remote_table != link.local.split(".", 1)[1]:
            rewrite_table_value(success, call.spec.success_type, table_renamer(link.remote_table, link.local.split(".", 1)[1]))
        if call.spec.gets_database:
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

    # -- the virtual catalog (features/catalog.py) ----------------------------------------

    def virtual_databases(self, call: Call) -> list[VirtualDatabase]:
        return [VirtualDatabase(local, self._metas_of(rd)) for local, rd in self._view(call).databases.items()]

    def virtual_tables(self, call: Call, db: str | None) -> list[VirtualTable]:
        snap = self._view(call)
        tables = snap.tables.values() if db is None else snap.tables_of(db)
        return [VirtualTable(rt.local_db, rt.local_name, self._loader(rt), routed=True, matches_filter=self._filter(rt)) for rt in tables]

    def _metas_of(self, rd):
        """get_table_meta of a remote database's tables, asked of its metastore."""

        def table_metas(call: Call, tbl_patterns: str, tbl_types) -> list:
            args = idl.HmsProxy.get_table_meta_args(db_patterns=rd.remote_name, tbl_patterns=tbl_patterns, tbl_types=tbl_types)
            answer = self._listing_call(call, _db_link(rd), "get_table_meta", args)
            metas = list(answer.success or []) if answer is not None else []
            for meta in metas:
                meta.dbName = rd.local_name
            return metas

        return table_metas

    def _loader(self, rt):
        """The remote table as clients see it: local names, the link in its parameters."""

        def load(call: Call):
            link = _table_link(rt)
            catalog = split_catalog(call.client_db or "")[0]
            args = idl.HmsProxy.get_table_args(dbname=join_catalog(catalog, rt.remote_db), tbl_name=rt.remote_name)
            answer = self._listing_call(call, link, "get_table", args)
            if answer is None or answer.success is None:
                return None
            table = answer.success
            table.dbName, table.tableName = join_catalog(catalog, rt.local_db), rt.local_name
            _add_params(table, link)
            return table

        return load

    def _filter(self, rt):
        """get_table_names_by_filter: the remote metastore evaluates the filter on its own table."""

        def matches(call: Call, filter_text: str) -> bool:
            args = idl.HmsProxy.get_table_names_by_filter_args(dbname=rt.remote_db, filter=filter_text, max_tables=-1)
            answer = self._listing_call(call, _table_link(rt), "get_table_names_by_filter", args)
            return answer is not None and rt.remote_name in {n.lower() for n in answer.success or []}

        return matches

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
            answer = call.session.call(ms, method, args, read_only=True)
        except Exception as e:  # unavailable or a TApplicationException: a listing must not fail for it
            with self._backoff_lock:
                self._backoff[ms.name] = now + LISTING_BACKOFF_S
            log.warning("%s: left %s out: %s", call.spec.name, link.subject, e)
            return None
        if any(v is not None for k, v in vars(answer).items() if k != "success"):
            return None  # e.g. the remote table was dropped over there
        return answer

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

        The statement's runner holds the rules (who may, valid factory and properties, name
        clashes); only the config's own remotes, which the store doesn't know, are checked here.
        """
        what = f"remote {'table' if isinstance(statement, st.CreateRemoteTable) else 'database'}"
        if static_clash:
            raise Conflict(
                f"hmsproxy: can't create {what} {statement.name}: the name is taken by a remote defined in the proxy's configuration"
            )
        self._run(call, statement)
        return call.spec.result_cls()

    def _unlink(self, call: Call, link: Link, statement, static: bool):
        """DROP DATABASE/TABLE of a remote from a plain client: the link goes, nothing remote is touched."""
        if static:
            raise AccessDenied(f"hmsproxy: {link.subject} is defined in the proxy's configuration (remotes.{link.kind}s); remove it there")
        self._run(call, statement)
        log.info("%s dropped by %s (the link only; %s in %s is untouched)", link.subject, call.session.user, link.remote, link.where)
        return call.spec.result_cls()

    def _run(self, call: Call, statement) -> None:
        self.platform.features.get("statements").execute(statement, call.session.user, None, call=call)
        call.backend = "hmsproxy"

    def _drop_links_of(self, client_db: str) -> None:
        db = split_catalog(client_db)[1].lower()
        for rt in self.cache.snapshot().tables_of(db):
            self.repo.drop_table(rt.local_db, rt.local_name)
        self.cache.refresh()


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

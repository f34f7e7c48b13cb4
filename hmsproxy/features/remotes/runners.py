"""What CREATE/DROP/SHOW/DESCRIBE REMOTE ... do: validation, refusals, the store, results."""

from __future__ import annotations

import time
from collections.abc import Callable

from hmsproxy.ddl.executor import StatementContext, status
from hmsproxy.ddl.results import ResultSet
from hmsproxy.features.remotes import statements as st
from hmsproxy.features.remotes.config import remotes_settings
from hmsproxy.features.remotes.factories import UnknownFactory, get_factory
from hmsproxy.features.remotes.model import RemoteDatabase, RemoteTable, shown, when
from hmsproxy.features.remotes.store import RemoteRepository
from hmsproxy.pipeline.errors import AccessDenied, Conflict, InvalidRequest, NotFound
from hmsproxy.store import AlreadyExists

CREATORS_KEY = "remotes.creators"
#: A link's property that, set to 'false', makes it without asking its catalog first.
CHECK_PROPERTY = "hmsproxy.remote.check"

SHOW_DATABASES_COLUMNS = ["database_name", "remote_database", "via", "owner", "created_at"]
SHOW_TABLES_COLUMNS = ["database_name", "table_name", "remote_database", "remote_table", "via", "owner", "created_at"]
DESCRIBE_COLUMNS = ["property", "value"]


def _check_may_change(ctx: StatementContext, what: str) -> None:
    creators = remotes_settings(ctx.config).creators
    if creators is None:
        return
    if ctx.user is not None and ctx.user in creators:
        return
    who = f"user '{ctx.user}'" if ctx.user else "an unnamed user (the client sent no set_ugi)"
    allowed = ", ".join(creators) or "nobody"
    raise AccessDenied(f"{who} may not {what}: only the users in the config key '{CREATORS_KEY}' may ({allowed})")


def _check_factory(factory: str, properties: dict[str, str], what: str) -> None:
    try:
        f = get_factory(factory)
    except UnknownFactory as e:
        raise InvalidRequest(f"{what}: {e}") from None
    try:
        f.validate(properties)
    except ValueError as e:
        raise InvalidRequest(f"{what}: VIA '{factory}': {e}") from None


def _check_switch(properties: dict[str, str], what: str) -> tuple[bool, dict[str, str]]:
    """(whether the target is asked before the link is made, the link's properties without the switch)."""
    rest = {k: v for k, v in properties.items() if k != CHECK_PROPERTY}
    value = properties.get(CHECK_PROPERTY, "true").strip().lower()
    if value not in ("true", "false"):
        raise InvalidRequest(f"{what}: property '{CHECK_PROPERTY}' is 'true' or 'false', not '{properties[CHECK_PROPERTY]}'")
    return value == "true", rest


class Runners:
    """The runners of the remotes statements over one repository; `changed()` after each."""

    def __init__(
        self,
        repo: RemoteRepository,
        changed: Callable[[], object] = lambda: None,
        record: Callable[[StatementContext, RemoteDatabase | RemoteTable, object], object] = lambda ctx, remote, fetched: None,
        check: Callable[[StatementContext, RemoteDatabase | RemoteTable], object] = lambda ctx, remote: None,
    ):
        self.repo = repo
        self._changed = changed
        #: Asks a new link's catalog for its object before the link is made; raises when it has none.
        self._check = check
        #: Keeps what a new link points to, so it can be shown and dropped while that is out of reach (records.py).
        self._record = record

    def runners(self) -> dict:
        return {kind: self._then_changed(run) for kind, run in self._runners().items()}

    def _then_changed(self, run):
        def run_then_changed(statement, ctx):
            try:
                return run(statement, ctx)
            finally:
                self._changed()

        return run_then_changed

    def _runners(self) -> dict:
        return {
            st.CreateRemoteDatabase: self.create_database,
            st.CreateRemoteTable: self.create_table,
            st.DropRemoteDatabase: self.drop_database,
            st.DropRemoteTable: self.drop_table,
            st.ShowRemoteDatabases: self.show_databases,
            st.ShowRemoteTables: self.show_tables,
            st.DescribeRemoteDatabase: self.describe_database,
            st.DescribeRemoteTable: self.describe_table,
        }

    def create_database(self, s: st.CreateRemoteDatabase, ctx: StatementContext) -> ResultSet:
        what = f"remote database '{s.name}'"
        _check_may_change(ctx, f"create {what}")
        if self.repo.get_database(s.name) is not None:
            if s.if_not_exists:
                return status(f"{what} already exists; nothing done (IF NOT EXISTS)")
            raise Conflict(f"{what} already exists (DROP REMOTE DATABASE {s.name} first, or use IF NOT EXISTS)")
        if ctx.client.exists("get_database", name=s.name) is not False:  # unsure counts as taken
            if s.if_not_exists:
                return status(f"database '{s.name}' already exists in the federation; nothing done (IF NOT EXISTS)")
            raise Conflict(
                f"can't create {what}: a database '{s.name}' already exists in the federation; "
                f"choose another local name (CREATE REMOTE DATABASE other_name CONNECTED TO {s.remote_name or s.name})"
            )
        remote_name = s.remote_name or s.name
        checked, properties = _check_switch(s.properties, f"can't create {what}")
        _check_factory(s.factory, properties, f"can't create {what}")
        rd = RemoteDatabase(s.name, remote_name, s.factory, properties, ctx.user, time.time())
        fetched = self._check(ctx, rd) if checked else None
        try:
            self.repo.add_database(rd)
        except AlreadyExists:
            if s.if_not_exists:
                return status(f"{what} already exists; nothing done (IF NOT EXISTS)")
            raise Conflict(f"{what} already exists") from None
        self._record(ctx, rd, fetched)
        return status(f"created {what} connected to '{remote_name}' via '{s.factory}'")

    def create_table(self, s: st.CreateRemoteTable, ctx: StatementContext) -> ResultSet:
        db = s.database or ctx.database
        local = f"{db}.{s.name}"
        what = f"remote table '{local}'"
        _check_may_change(ctx, f"create {what}")
        if self.repo.get_table(db, s.name) is not None:
            if s.if_not_exists:
                return status(f"{what} already exists; nothing done (IF NOT EXISTS)")
            raise Conflict(f"{what} already exists (DROP REMOTE TABLE {local} first, or use IF NOT EXISTS)")
        rdb = self.repo.get_database(db)
        if rdb is not None:
            raise AccessDenied(
                f"can't create {what}: '{db}' is a remote database (its tables all come from "
                f"'{rdb.remote_name}' via '{rdb.factory}'); create remote tables in a local database"
            )
        if ctx.client.exists("get_database", name=db) is False:
            raise NotFound(f"can't create {what}: database '{db}' does not exist")
        if ctx.client.exists("get_table", dbname=db, tbl_name=s.name):  # unsure: let it be created
            if s.if_not_exists:
                return status(f"table '{local}' already exists; nothing done (IF NOT EXISTS)")
            raise Conflict(f"can't create {what}: a table '{local}' already exists; choose another local name")
        remote_db = s.remote_database or db
        remote_name = s.remote_name or s.name
        checked, properties = _check_switch(s.properties, f"can't create {what}")
        _check_factory(s.factory, properties, f"can't create {what}")
        rt = RemoteTable(db, s.name, remote_db, remote_name, s.factory, properties, ctx.user, time.time())
        fetched = self._check(ctx, rt) if checked else None
        try:
            self.repo.add_table(rt)
        except AlreadyExists:
            if s.if_not_exists:
                return status(f"{what} already exists; nothing done (IF NOT EXISTS)")
            raise Conflict(f"{what} already exists") from None
        self._record(ctx, rt, fetched)
        return status(f"created {what} connected to '{remote_db}.{remote_name}' via '{s.factory}'")

    def drop_database(self, s: st.DropRemoteDatabase, ctx: StatementContext) -> ResultSet:
        what = f"remote database '{s.name}'"
        _check_may_change(ctx, f"drop {what}")
        if self.repo.drop_database(s.name):
            return status(f"dropped {what}")
        if s.if_exists:
            return status(f"{what} does not exist; nothing done (IF EXISTS)")
        raise NotFound(f"{what} does not exist")

    def drop_table(self, s: st.DropRemoteTable, ctx: StatementContext) -> ResultSet:
        db = s.database or ctx.database
        what = f"remote table '{db}.{s.name}'"
        _check_may_change(ctx, f"drop {what}")
        if self.repo.drop_table(db, s.name):
            return status(f"dropped {what}")
        if s.if_exists:
            return status(f"{what} does not exist; nothing done (IF EXISTS)")
        raise NotFound(f"{what} does not exist")

    def show_databases(self, s: st.ShowRemoteDatabases, ctx: StatementContext) -> ResultSet:
        rows = [[d.local_name, d.remote_name, d.factory, d.owner or "", when(d.created_at)] for d in self.repo.list_databases()]
        return ResultSet(list(SHOW_DATABASES_COLUMNS), rows)

    def show_tables(self, s: st.ShowRemoteTables, ctx: StatementContext) -> ResultSet:
        rows = [
            [t.local_db, t.local_name, t.remote_db, t.remote_name, t.factory, t.owner or "", when(t.created_at)]
            for t in self.repo.list_tables(s.database)
        ]
        return ResultSet(list(SHOW_TABLES_COLUMNS), rows)

    def describe_database(self, s: st.DescribeRemoteDatabase, ctx: StatementContext) -> ResultSet:
        d = self.repo.get_database(s.name)
        if d is None:
            raise NotFound(f"remote database '{s.name}' does not exist")
        rows = [
            ["database_name", d.local_name],
            ["remote_database", d.remote_name],
            ["via", d.factory],
            ["owner", d.owner or ""],
            ["created_at", when(d.created_at)],
        ]
        rows += [[k, shown(k, v)] for k, v in sorted(d.properties.items())]
        return ResultSet(list(DESCRIBE_COLUMNS), rows)

    def describe_table(self, s: st.DescribeRemoteTable, ctx: StatementContext) -> ResultSet:
        db = s.database or ctx.database
        t = self.repo.get_table(db, s.name)
        if t is None:
            hint = ""
            if self.repo.get_database(db) is not None:
                hint = f" ('{db}' is a remote database: DESCRIBE REMOTE DATABASE {db})"
            raise NotFound(f"remote table '{db}.{s.name}' does not exist{hint}")
        rows = [
            ["database_name", t.local_db],
            ["table_name", t.local_name],
            ["remote_database", t.remote_db],
            ["remote_table", t.remote_name],
            ["via", t.factory],
            ["owner", t.owner or ""],
            ["created_at", when(t.created_at)],
        ]
        rows += [[k, shown(k, v)] for k, v in sorted(t.properties.items())]
        return ResultSet(list(DESCRIBE_COLUMNS), rows)

"""Runs one statement against the store: validation, refusals, results.

Whether a local name clashes with a real database in a backend is the remotes
feature's knowledge; it may lend it through `ExecContext.exists_locally`.
"""

from __future__ import annotations

import datetime as dt
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

from hmsproxy.ddl import statements as st
from hmsproxy.ddl.parser import parse
from hmsproxy.ddl.results import ResultSet
from hmsproxy.features.remotes.factories import UnknownFactory, get_factory
from hmsproxy.features.remotes.model import RemoteDatabase, RemoteTable
from hmsproxy.store import AlreadyExists, Store

DEFAULT_DATABASE = "default"
CREATORS_KEY = "remotes.creators"
#: Property values shown as *** by DESCRIBE.
SECRET_KEY = re.compile(r"password|secret|token|credential", re.I)

SHOW_DATABASES_COLUMNS = ["database_name", "remote_database", "via", "owner", "created_at"]
SHOW_TABLES_COLUMNS = ["database_name", "table_name", "remote_database", "remote_table", "via", "owner", "created_at"]
DESCRIBE_COLUMNS = ["property", "value"]
STATUS_COLUMNS = ["result"]


class DdlError(Exception):
    """A statement that can't be carried out; the message says why, for the user."""


class RemoteAlreadyExists(DdlError):
    """The local name is taken (by a remote, or a real database or table)."""


class NotPermitted(DdlError):
    """The user may not change remotes, or the target can't hold one."""


class NoSuchObject(DdlError):
    """What the statement names does not exist."""


@dataclass(frozen=True)
class ExecContext:
    store: Store
    user: str | None
    current_database: str | None = DEFAULT_DATABASE
    #: Who may create and drop remotes; None: everyone (config `remotes.creators`).
    creators: tuple[str, ...] | None = None
    #: Does a real (non-remote) database with this name exist in the federation?
    exists_locally: Callable[[str], bool] | None = None
    #: Does a real (non-remote) table db.name exist in the federation?
    table_exists_locally: Callable[[str, str], bool] | None = None

    @property
    def database(self) -> str:
        return (self.current_database or DEFAULT_DATABASE).lower()


def execute_script(text: str, ctx: ExecContext) -> list[ResultSet]:
    """Parse and run every statement of `text`, in order; stops at the first error."""
    return [execute(s, ctx) for s in parse(text)]


def execute(statement: st.Statement, ctx: ExecContext) -> ResultSet:
    run = _RUNNERS.get(type(statement))
    if run is None:
        raise DdlError(f"hmsproxy can't execute {type(statement).__name__}")
    return run(statement, ctx)


# -- checks ---------------------------------------------------------------------------


def _check_may_change(ctx: ExecContext, what: str) -> None:
    if ctx.creators is None:
        return
    if ctx.user is not None and ctx.user in ctx.creators:
        return
    who = f"user '{ctx.user}'" if ctx.user else "an unnamed user (the client sent no set_ugi)"
    allowed = ", ".join(ctx.creators) or "nobody"
    raise NotPermitted(f"{who} may not {what}: only the users in the config key '{CREATORS_KEY}' may ({allowed})")


def _check_factory(factory: str, properties: dict[str, str], what: str) -> None:
    try:
        f = get_factory(factory)
    except UnknownFactory as e:
        raise DdlError(f"{what}: {e}") from None
    try:
        f.validate(properties)
    except ValueError as e:
        raise DdlError(f"{what}: VIA '{factory}': {e}") from None


def _status(message: str) -> ResultSet:
    return ResultSet(list(STATUS_COLUMNS), [[message]])


def _when(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _shown(key: str, value: str) -> str:
    return "***" if SECRET_KEY.search(key) else value


# -- statements ---------------------------------------------------------------------------


def _create_database(s: st.CreateRemoteDatabase, ctx: ExecContext) -> ResultSet:
    what = f"remote database '{s.name}'"
    _check_may_change(ctx, f"create {what}")
    repo = ctx.store.remotes
    if repo.get_database(s.name) is not None:
        if s.if_not_exists:
            return _status(f"{what} already exists; nothing done (IF NOT EXISTS)")
        raise RemoteAlreadyExists(f"{what} already exists (DROP REMOTE DATABASE {s.name} first, or use IF NOT EXISTS)")
    if ctx.exists_locally is not None and ctx.exists_locally(s.name):
        if s.if_not_exists:
            return _status(f"database '{s.name}' already exists in the federation; nothing done (IF NOT EXISTS)")
        raise RemoteAlreadyExists(
            f"can't create {what}: a database '{s.name}' already exists in the federation; "
            f"choose another local name (CREATE REMOTE DATABASE other_name CONNECTED TO {s.remote_name or s.name})"
        )
    remote_name = s.remote_name or s.name
    _check_factory(s.factory, s.properties, f"can't create {what}")
    rd = RemoteDatabase(s.name, remote_name, s.factory, dict(s.properties), ctx.user, time.time())
    try:
        repo.add_database(rd)
    except AlreadyExists:
        if s.if_not_exists:
            return _status(f"{what} already exists; nothing done (IF NOT EXISTS)")
        raise RemoteAlreadyExists(f"{what} already exists") from None
    return _status(f"created {what} connected to '{remote_name}' via '{s.factory}'")


def _create_table(s: st.CreateRemoteTable, ctx: ExecContext) -> ResultSet:
    db = s.database or ctx.database
    local = f"{db}.{s.name}"
    what = f"remote table '{local}'"
    _check_may_change(ctx, f"create {what}")
    repo = ctx.store.remotes
    if repo.get_table(db, s.name) is not None:
        if s.if_not_exists:
            return _status(f"{what} already exists; nothing done (IF NOT EXISTS)")
        raise RemoteAlreadyExists(f"{what} already exists (DROP REMOTE TABLE {local} first, or use IF NOT EXISTS)")
    rdb = repo.get_database(db)
    if rdb is not None:
        raise NotPermitted(
            f"can't create {what}: '{db}' is a remote database (its tables all come from "
            f"'{rdb.remote_name}' via '{rdb.factory}'); create remote tables in a local database"
        )
    if ctx.exists_locally is not None and not ctx.exists_locally(db):
        raise NoSuchObject(f"can't create {what}: database '{db}' does not exist")
    if ctx.table_exists_locally is not None and ctx.table_exists_locally(db, s.name):
        if s.if_not_exists:
            return _status(f"table '{local}' already exists; nothing done (IF NOT EXISTS)")
        raise RemoteAlreadyExists(f"can't create {what}: a table '{local}' already exists; choose another local name")
    remote_db = s.remote_database or db
    remote_name = s.remote_name or s.name
    _check_factory(s.factory, s.properties, f"can't create {what}")
    rt = RemoteTable(db, s.name, remote_db, remote_name, s.factory, dict(s.properties), ctx.user, time.time())
    try:
        repo.add_table(rt)
    except AlreadyExists:
        if s.if_not_exists:
            return _status(f"{what} already exists; nothing done (IF NOT EXISTS)")
        raise RemoteAlreadyExists(f"{what} already exists") from None
    return _status(f"created {what} connected to '{remote_db}.{remote_name}' via '{s.factory}'")


def _drop_database(s: st.DropRemoteDatabase, ctx: ExecContext) -> ResultSet:
    what = f"remote database '{s.name}'"
    _check_may_change(ctx, f"drop {what}")
    if ctx.store.remotes.drop_database(s.name):
        return _status(f"dropped {what}")
    if s.if_exists:
        return _status(f"{what} does not exist; nothing done (IF EXISTS)")
    raise NoSuchObject(f"{what} does not exist")


def _drop_table(s: st.DropRemoteTable, ctx: ExecContext) -> ResultSet:
    db = s.database or ctx.database
    what = f"remote table '{db}.{s.name}'"
    _check_may_change(ctx, f"drop {what}")
    if ctx.store.remotes.drop_table(db, s.name):
        return _status(f"dropped {what}")
    if s.if_exists:
        return _status(f"{what} does not exist; nothing done (IF EXISTS)")
    raise NoSuchObject(f"{what} does not exist")


def _show_databases(s: st.ShowRemoteDatabases, ctx: ExecContext) -> ResultSet:
    rows = [[d.local_name, d.remote_name, d.factory, d.owner or "", _when(d.created_at)] for d in ctx.store.remotes.list_databases()]
    return ResultSet(list(SHOW_DATABASES_COLUMNS), rows)


def _show_tables(s: st.ShowRemoteTables, ctx: ExecContext) -> ResultSet:
    tables = ctx.store.remotes.list_tables(s.database)
    rows = [[t.local_db, t.local_name, t.remote_db, t.remote_name, t.factory, t.owner or "", _when(t.created_at)] for t in tables]
    return ResultSet(list(SHOW_TABLES_COLUMNS), rows)


def _describe_database(s: st.DescribeRemoteDatabase, ctx: ExecContext) -> ResultSet:
    d = ctx.store.remotes.get_database(s.name)
    if d is None:
        raise NoSuchObject(f"remote database '{s.name}' does not exist")
    rows = [
        ["database_name", d.local_name],
        ["remote_database", d.remote_name],
        ["via", d.factory],
        ["owner", d.owner or ""],
        ["created_at", _when(d.created_at)],
    ]
    rows += [[k, _shown(k, v)] for k, v in sorted(d.properties.items())]
    return ResultSet(list(DESCRIBE_COLUMNS), rows)


def _describe_table(s: st.DescribeRemoteTable, ctx: ExecContext) -> ResultSet:
    db = s.database or ctx.database
    t = ctx.store.remotes.get_table(db, s.name)
    if t is None:
        hint = ""
        if ctx.store.remotes.get_database(db) is not None:
            hint = f" ('{db}' is a remote database: DESCRIBE REMOTE DATABASE {db})"
        raise NoSuchObject(f"remote table '{db}.{s.name}' does not exist{hint}")
    rows = [
        ["database_name", t.local_db],
        ["table_name", t.local_name],
        ["remote_database", t.remote_db],
        ["remote_table", t.remote_name],
        ["via", t.factory],
        ["owner", t.owner or ""],
        ["created_at", _when(t.created_at)],
    ]
    rows += [[k, _shown(k, v)] for k, v in sorted(t.properties.items())]
    return ResultSet(list(DESCRIBE_COLUMNS), rows)


_RUNNERS: dict[type, Callable[[st.Statement, ExecContext], ResultSet]] = {
    st.CreateRemoteDatabase: _create_database,
    st.CreateRemoteTable: _create_table,
    st.DropRemoteDatabase: _drop_database,
    st.DropRemoteTable: _drop_table,
    st.ShowRemoteDatabases: _show_databases,
    st.ShowRemoteTables: _show_tables,
    st.DescribeRemoteDatabase: _describe_database,
    st.DescribeRemoteTable: _describe_table,
}

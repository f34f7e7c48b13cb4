"""CREATE/DROP/SHOW/DESCRIBE REMOTE ...: the statements (ddl.lark) and how parse trees become them.

Names are lower-cased; quotes are gone. Defaults that need no context are filled in
here (no VIA: "thrift"; no CONNECTED TO: the same name remotely). A table's missing
database is the caller's current database, known only when executing: `database` is None then.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from lark import Tree

from hmsproxy.ddl import trees
from hmsproxy.ddl.registry import StatementSet
from hmsproxy.ddl.statements import Statement
from hmsproxy.features.remotes.factories import DEFAULT_FACTORY
from hmsproxy.features.remotes.starts import STARTS


@dataclass(frozen=True)
class CreateRemoteTable(Statement):
    database: str | None  # None: the current database
    name: str
    remote_database: str | None = None  # None: the (resolved) local database's name
    remote_name: str | None = None  # None: `name`
    factory: str = DEFAULT_FACTORY
    properties: dict[str, str] = field(default_factory=dict)
    if_not_exists: bool = False


@dataclass(frozen=True)
class CreateRemoteDatabase(Statement):
    name: str
    remote_name: str | None = None  # None: `name`
    factory: str = DEFAULT_FACTORY
    properties: dict[str, str] = field(default_factory=dict)
    if_not_exists: bool = False


@dataclass(frozen=True)
class DropRemoteTable(Statement):
    database: str | None
    name: str
    if_exists: bool = False


@dataclass(frozen=True)
class DropRemoteDatabase(Statement):
    name: str
    if_exists: bool = False


@dataclass(frozen=True)
class ShowRemoteTables(Statement):
    database: str | None = None  # None: every database


@dataclass(frozen=True)
class ShowRemoteDatabases(Statement):
    pass


@dataclass(frozen=True)
class DescribeRemoteTable(Statement):
    database: str | None
    name: str


@dataclass(frozen=True)
class DescribeRemoteDatabase(Statement):
    name: str


# -- parse tree -> statement ---------------------------------------------------------------


def _via(tree: Tree) -> str:
    via = trees.find(tree, "remote_via")
    return trees.string(via.children[1]).strip() if via is not None else DEFAULT_FACTORY


def _create_table(tree: Tree, source: str) -> CreateRemoteTable:
    db, name = trees.qualified(trees.find(tree, "qualified"))
    connected = trees.find(tree, "remote_connected_table")
    rdb, rname = trees.qualified(trees.find(connected, "qualified")) if connected is not None else (None, name)
    return CreateRemoteTable(db, name, rdb, rname, _via(tree), trees.properties(tree), trees.has(tree, "if_not_exists"), source=source)


def _create_database(tree: Tree, source: str) -> CreateRemoteDatabase:
    name = trees.name(trees.find(tree, "name"))
    connected = trees.find(tree, "remote_connected_database")
    rname = trees.name(trees.find(connected, "name")) if connected is not None else name
    return CreateRemoteDatabase(name, rname, _via(tree), trees.properties(tree), trees.has(tree, "if_not_exists"), source=source)


def _drop_table(tree: Tree, source: str) -> DropRemoteTable:
    db, name = trees.qualified(trees.find(tree, "qualified"))
    return DropRemoteTable(db, name, trees.has(tree, "if_exists"), source=source)


def _drop_database(tree: Tree, source: str) -> DropRemoteDatabase:
    return DropRemoteDatabase(trees.name(trees.find(tree, "name")), trees.has(tree, "if_exists"), source=source)


def _show_tables(tree: Tree, source: str) -> ShowRemoteTables:
    db = trees.find(tree, "name")
    return ShowRemoteTables(trees.name(db) if db is not None else None, source=source)


def _describe_table(tree: Tree, source: str) -> DescribeRemoteTable:
    db, name = trees.qualified(trees.find(tree, "qualified"))
    return DescribeRemoteTable(db, name, source=source)


STATEMENTS = StatementSet.from_file(
    Path(__file__).with_name("ddl.lark"),
    builders={
        "remote_create_table": _create_table,
        "remote_create_database": _create_database,
        "remote_drop_table": _drop_table,
        "remote_drop_database": _drop_database,
        "remote_show_tables": _show_tables,
        "remote_show_databases": lambda tree, source: ShowRemoteDatabases(source=source),
        "remote_describe_table": _describe_table,
        "remote_describe_database": lambda tree, source: DescribeRemoteDatabase(trees.name(trees.find(tree, "name")), source=source),
    },
    starts=STARTS,
    soft_keywords=("REMOTE", "CONNECTED", "VIA"),
    summary="CREATE/DROP/SHOW/DESCRIBE REMOTE ...",
)

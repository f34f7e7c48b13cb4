"""The statements the grammar (grammar.lark) produces. Names are lower-cased; quotes are gone.

Defaults that need no context are filled in by the parser (no VIA: "thrift"; no
CONNECTED TO: the same name remotely). A table's missing database is the
caller's current database, known only when executing: `database` is None then.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hmsproxy.features.remotes.factories import DEFAULT_FACTORY


@dataclass(frozen=True)
class Statement:
    #: The statement's own text in the script (without the trailing ';').
    source: str = field(default="", compare=False, kw_only=True)


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

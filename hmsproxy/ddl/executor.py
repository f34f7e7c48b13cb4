"""Running parsed statements: the context a runner gets, and the loop over a script."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from hmsproxy.ddl.results import ResultSet
from hmsproxy.ddl.statements import Statement
from hmsproxy.pipeline.errors import InvalidRequest

DEFAULT_DATABASE = "default"
STATUS_COLUMNS = ["result"]

Runner = Callable[[Statement, "StatementContext"], ResultSet]


@dataclass(frozen=True)
class StatementContext:
    """Who runs a statement, where, and how its side effects reach the metastores."""

    user: str | None
    current_database: str | None
    #: An InternalClient: metastore calls through the proxy's routing as `user`.
    client: object
    #: The config snapshot the statement runs under.
    config: object

    @property
    def database(self) -> str:
        return (self.current_database or DEFAULT_DATABASE).lower()


def status(message: str) -> ResultSet:
    """The one-row answer of a statement that changed something."""
    return ResultSet(list(STATUS_COLUMNS), [[message]])


def run(statement: Statement, runners: Mapping[type, Runner], ctx: StatementContext) -> ResultSet:
    runner = runners.get(type(statement))
    if runner is None:
        raise InvalidRequest(f"hmsproxy can't execute {type(statement).__name__}: no feature runs it")
    return runner(statement, ctx)

"""ALTER TABLE ... SKEWED BY / NOT SKEWED / NOT STORED AS DIRECTORIES / SET SKEWED LOCATION, SHOW SKEW ON.

Names are lower-cased; values are kept as written (Hive stores skewed values as strings:
``10`` and ``'10'`` are the same value). A table's missing database is the caller's current
database, known only when executing: `database` is None then.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lark import Tree

from hmsproxy.ddl import trees
from hmsproxy.ddl.registry import StatementSet
from hmsproxy.ddl.statements import Statement
from hmsproxy.features.skew import create
from hmsproxy.features.skew.spec import Values, literal, skewed_columns_and_values, value
from hmsproxy.features.skew.starts import STARTS


@dataclass(frozen=True)
class AlterSkew(Statement):
    database: str | None
    table: str
    columns: tuple[str, ...]
    values: tuple[Values, ...]
    directories: bool = False


@dataclass(frozen=True)
class AlterNotSkewed(Statement):
    database: str | None
    table: str


@dataclass(frozen=True)
class AlterNotDirectories(Statement):
    database: str | None
    table: str


@dataclass(frozen=True)
class AlterSkewedLocation(Statement):
    database: str | None
    table: str
    locations: tuple[tuple[Values, str], ...]


@dataclass(frozen=True)
class ShowSkew(Statement):
    database: str | None
    table: str
    partition: tuple[tuple[str, str], ...] | None = None  # ((column, value), ...)


# -- parse tree -> statement ---------------------------------------------------------------


def _table(tree: Tree) -> tuple[str | None, str]:
    db, name = trees.qualified(trees.find(tree, "qualified"))
    return (db.lower() if db else None), name.lower()


def _alter(tree: Tree, source: str) -> AlterSkew:
    columns, values = skewed_columns_and_values(trees.find(tree, "skew_spec"))
    return AlterSkew(*_table(tree), columns, values, trees.find(tree, "skew_directories") is not None, source=source)


def _set_location(tree: Tree, source: str) -> AlterSkewedLocation:
    pairs = []
    for loc in (t for t in tree.children if isinstance(t, Tree) and t.data == "skew_location"):
        pairs.append((value(trees.find(loc, "skew_value")), trees.string(trees.find(loc, "string"))))
    return AlterSkewedLocation(*_table(tree), tuple(pairs), source=source)


def _show(tree: Tree, source: str) -> ShowSkew:
    part = trees.find(tree, "skew_partition")
    spec = None
    if part is not None:
        kvs = [t for t in part.children if isinstance(t, Tree) and t.data == "skew_part_value"]
        spec = tuple((trees.name(trees.find(kv, "name")).lower(), literal(trees.find(kv, "skew_literal"))) for kv in kvs)
    return ShowSkew(*_table(tree), spec, source=source)


STATEMENTS = StatementSet.from_file(
    Path(__file__).with_name("ddl.lark"),
    builders={
        "skew_create": create.build,
        "skew_alter": _alter,
        "skew_not_skewed": lambda tree, source: AlterNotSkewed(*_table(tree), source=source),
        "skew_not_directories": lambda tree, source: AlterNotDirectories(*_table(tree), source=source),
        "skew_set_location": _set_location,
        "skew_show": _show,
    },
    starts=STARTS,
    soft_keywords=(
        "SKEWED",
        "SKEW",
        "STORED",
        "DIRECTORIES",
        "LOCATION",
        "SET",
        "PARTITION",
        "BY",
        "COMMENT_KEYWORD",
        "PARTITIONED",
        "PARQUET",
        "ORC",
        "TEXTFILE",
    ),
    summary="CREATE TABLE ... SKEWED BY, ALTER TABLE ... SKEWED BY / NOT SKEWED / NOT STORED AS DIRECTORIES / SET SKEWED LOCATION, SHOW SKEW ON ...",
)

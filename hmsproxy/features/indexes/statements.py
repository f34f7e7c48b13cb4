"""CREATE INDEX, DROP INDEX, ALTER INDEX … SET IDXPROPERTIES / REBUILD, SHOW [FORMATTED] INDEX[ES] ON.

Names are lower-cased. A missing database is the caller's current one: None until executed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lark import Token, Tree

from hmsproxy.ddl import trees
from hmsproxy.ddl.registry import StatementSet
from hmsproxy.ddl.statements import Statement
from hmsproxy.features.indexes.starts import STARTS

Name = tuple[str | None, str]  # (database or None, table)
Properties = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class CreateIndex(Statement):
    name: str
    table: Name
    columns: tuple[str, ...]
    handler: str
    deferred: bool = False
    #: AUTO REBUILD: kept fresh by `rebuild-index --watch` (an index property, AUTO_REBUILD_KEY).
    auto_rebuild: bool = False
    properties: Properties = ()
    in_table: Name | None = None
    #: None: partitioned like the base table; () : one index partition for the whole table.
    partitioned_by: tuple[str, ...] | None = None
    stored_as: str = "PARQUET"
    location: str | None = None
    table_properties: Properties = ()
    comment: str | None = None


@dataclass(frozen=True)
class DropIndex(Statement):
    name: str
    table: Name
    if_exists: bool = False


@dataclass(frozen=True)
class SetIndexProperties(Statement):
    name: str
    table: Name
    properties: Properties


@dataclass(frozen=True)
class RebuildIndex(Statement):
    name: str
    table: Name
    partition: tuple[tuple[str, str], ...] | None = None


@dataclass(frozen=True)
class ShowIndexes(Statement):
    table: Name
    formatted: bool = False


# -- parse tree -> statement ---------------------------------------------------------------


def _children(tree: Tree, data: str) -> list[Tree]:
    return [c for c in tree.children if isinstance(c, Tree) and c.data == data]


def _props(tree: Tree, rule: str) -> Properties:
    return tuple(sorted(trees.properties(trees.find(tree, rule)).items()))


def _create(tree: Tree, source: str) -> CreateIndex:
    names = _children(tree, "name")
    table = trees.qualified(trees.find(tree, "qualified"))
    in_table = trees.find(tree, "idx_in_table")
    partitioned = trees.find(tree, "idx_partitioned")
    stored = trees.find(tree, "idx_stored")
    location = trees.find(tree, "idx_location")
    comment = trees.find(tree, "idx_comment")
    return CreateIndex(
        trees.name(names[0]),
        table,
        tuple(trees.name(n) for n in names[1:]),
        trees.string(trees.find(tree, "string")),
        deferred=trees.has(tree, "idx_deferred"),
        auto_rebuild=trees.has(tree, "idx_auto"),
        properties=_props(tree, "idx_properties"),
        in_table=trees.qualified(trees.find(in_table, "qualified")) if in_table is not None else None,
        partitioned_by=tuple(trees.name(n) for n in _children(partitioned, "name")) if partitioned is not None else None,
        stored_as=str(stored.children[-1]).upper() if stored is not None else "PARQUET",
        location=trees.string(trees.find(location, "string")) if location is not None else None,
        table_properties=_props(tree, "idx_table_properties"),
        comment=trees.string(trees.find(comment, "string")) if comment is not None else None,
        source=source,
    )


def _index_on(tree: Tree) -> tuple[str, Name]:
    return trees.name(trees.find(tree, "name")), trees.qualified(trees.find(tree, "qualified"))


def _rebuild(tree: Tree, source: str) -> RebuildIndex:
    name, table = _index_on(tree)
    part = trees.find(tree, "idx_partition")
    spec = None
    if part is not None:
        spec = tuple((trees.name(trees.find(kv, "name")), _literal(kv.children[-1])) for kv in _children(part, "idx_part_value"))
    return RebuildIndex(name, table, spec, source=source)


def _literal(node) -> str:
    return str(node) if isinstance(node, Token) else trees.string(node)


def _show(tree: Tree, source: str) -> ShowIndexes:
    db, table = trees.qualified(trees.find(tree, "qualified"))
    in_db = trees.find(tree, "idx_show_db")
    if in_db is not None:
        db = trees.name(trees.find(in_db, "name"))
    return ShowIndexes((db, table), formatted=any(isinstance(c, Token) and c.type == "FORMATTED" for c in tree.children), source=source)


STATEMENTS = StatementSet.from_file(
    Path(__file__).with_name("ddl.lark"),
    builders={
        "idx_create": _create,
        "idx_drop": lambda tree, source: DropIndex(*_index_on(tree), trees.has(tree, "if_exists"), source=source),
        "idx_set_properties": lambda tree, source: SetIndexProperties(*_index_on(tree), _props(tree, "idx_properties"), source=source),
        "idx_rebuild": _rebuild,
        "idx_show": _show,
    },
    starts=STARTS,
    soft_keywords=(
        "INDEX",
        "INDEXES",
        "DEFERRED",
        "AUTO",
        "REBUILD",
        "IDXPROPERTIES",
        "FORMATTED",
        "STORED",
        "LOCATION",
        "COMMENT_KEYWORD",
        "PARQUET",
        "ORC",
        "PARTITIONED",
        "PARTITION",
        "BY",
        "SET",
    ),
    summary="CREATE INDEX ... ON TABLE ... AS 'COMPACT' [WITH DEFERRED REBUILD | AUTO REBUILD], DROP INDEX, ALTER INDEX ... SET IDXPROPERTIES / REBUILD, SHOW [FORMATTED] INDEX ON ...",
)

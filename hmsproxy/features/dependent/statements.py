"""CREATE / DROP DEPENDENT TABLE, ADD / DROP PARTITION and DEPENDS ON of a dependent table,
SET TBLPROPERTIES, SHOW DEPENDENCIES OF, SHOW DEPENDENTS OF, SHOW PARTITIONS and DESCRIBE
EXTENDED / FORMATTED of a dependent table.

Names are lower-cased; partition values kept as written (Hive's are strings: ds=1 and ds='1'
are the same partition). A missing database is the caller's current one: None until executed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lark import Token, Tree

from hmsproxy.ddl import trees
from hmsproxy.ddl.registry import StatementSet
from hmsproxy.ddl.statements import Statement
from hmsproxy.features.dependent.starts import STARTS

Name = tuple[str | None, str]  # (database or None, table)
Spec = tuple[tuple[str, str], ...]  # ((column, value), ...)


@dataclass(frozen=True)
class CreateDependentTable(Statement):
    table: Name
    partition_columns: tuple[tuple[str, str | None], ...]  # (name, type or None)
    depends_on: Name
    properties: tuple[tuple[str, str], ...] = ()
    if_not_exists: bool = False


@dataclass(frozen=True)
class DropDependentTable(Statement):
    table: Name
    if_exists: bool = False


@dataclass(frozen=True)
class AddDependentPartitions(Statement):
    table: Name
    partitions: tuple[Spec, ...]
    if_not_exists: bool = False
    allow_empty: bool = False


@dataclass(frozen=True)
class DropDependentPartitions(Statement):
    table: Name
    partitions: tuple[Spec, ...]
    if_exists: bool = False


@dataclass(frozen=True)
class DependsOn(Statement):
    """ALTER TABLE d [PARTITION (...)] DEPENDS ON TABLE t: the table level without a partition."""

    table: Name
    partition: Spec | None
    depends_on: Name
    allow_empty: bool = False


@dataclass(frozen=True)
class SetProperties(Statement):
    table: Name
    properties: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class ShowDependencies(Statement):
    table: Name
    partition: Spec | None = None


@dataclass(frozen=True)
class ShowDependents(Statement):
    table: Name


@dataclass(frozen=True)
class ShowPartitions(Statement):
    """SHOW PARTITIONS of a dependent table (of an ordinary one: Spark's or Hive's statement)."""

    table: Name
    partition: Spec | None = None


@dataclass(frozen=True)
class Describe(Statement):
    """DESCRIBE EXTENDED / FORMATTED of a dependent table (of an ordinary one: Spark's or Hive's statement)."""

    table: Name


# -- parse tree -> statement ---------------------------------------------------------------


def _names(tree: Tree) -> list[Name]:
    return [trees.qualified(q) for q in tree.children if isinstance(q, Tree) and q.data == "qualified"]


def _literal(tree: Tree) -> str:
    child = tree.children[0]
    return str(child) if isinstance(child, Token) else trees.string(child)


def _spec(tree: Tree) -> Spec:
    kvs = [t for t in tree.children if isinstance(t, Tree) and t.data == "dep_part_value"]
    return tuple((trees.name(trees.find(kv, "name")), _literal(trees.find(kv, "dep_literal"))) for kv in kvs)


def _specs(tree: Tree) -> tuple[Spec, ...]:
    return tuple(_spec(t) for t in tree.children if isinstance(t, Tree) and t.data == "dep_partition")


def _create(tree: Tree, source: str) -> CreateDependentTable:
    table, depends_on = _names(tree)
    columns = []
    for col in (t for t in tree.children if isinstance(t, Tree) and t.data == "dep_column"):
        name, type_ = col.children
        columns.append((trees.name(name), trees.name(type_) if type_ is not None else None))
    props = tuple(sorted(trees.properties(tree).items()))
    return CreateDependentTable(table, tuple(columns), depends_on, props, trees.has(tree, "if_not_exists"), source=source)


def _depends_on(tree: Tree, source: str) -> DependsOn:
    table, depends_on = _names(tree)
    part = trees.find(tree, "dep_partition")
    return DependsOn(table, _spec(part) if part is not None else None, depends_on, trees.has(tree, "dep_allow_empty"), source=source)


def _show_dependencies(tree: Tree, source: str) -> ShowDependencies:
    part = trees.find(tree, "dep_partition")
    return ShowDependencies(_names(tree)[0], _spec(part) if part is not None else None, source=source)


STATEMENTS = StatementSet.from_file(
    Path(__file__).with_name("ddl.lark"),
    builders={
        "dep_create": _create,
        "dep_drop": lambda tree, source: DropDependentTable(_names(tree)[0], trees.has(tree, "if_exists"), source=source),
        "dep_add_partition": lambda tree, source: AddDependentPartitions(
            _names(tree)[0], _specs(tree), trees.has(tree, "if_not_exists"), trees.has(tree, "dep_allow_empty"), source=source
        ),
        "dep_drop_partition": lambda tree, source: DropDependentPartitions(
            _names(tree)[0], _specs(tree), trees.has(tree, "if_exists"), source=source
        ),
        "dep_depends_on": _depends_on,
        "dep_set_properties": lambda tree, source: SetProperties(
            _names(tree)[0], tuple(sorted(trees.properties(tree).items())), source=source
        ),
        "dep_show_dependencies": _show_dependencies,
        "dep_show_dependents": lambda tree, source: ShowDependents(_names(tree)[0], source=source),
        "dep_show_partitions": lambda tree, source: ShowPartitions(
            _names(tree)[0], _spec(trees.find(tree, "dep_partition")) if trees.find(tree, "dep_partition") else None, source=source
        ),
        "dep_describe": lambda tree, source: Describe(_names(tree)[0], source=source),
    },
    starts=STARTS,
    soft_keywords=(
        "DEPENDENT",
        "DEPENDS",
        "DEPENDENCIES",
        "DEPENDENTS",
        "OF",
        "PARTITIONS",
        "ADD",
        "ALLOW",
        "EMPTY",
        "PARTITION",
        "PARTITIONED",
        "BY",
        "SET",
    ),
    summary=(
        "CREATE/DROP DEPENDENT TABLE, ALTER TABLE ... ADD/DROP PARTITION / [PARTITION (...)] DEPENDS ON TABLE ... / "
        "SET TBLPROPERTIES, SHOW DEPENDENCIES OF ..., SHOW DEPENDENTS OF ..., SHOW PARTITIONS ..., DESCRIBE EXTENDED ..."
    ),
)

"""The parts of SKEWED BY … ON … that several statements share, from parse trees."""

from __future__ import annotations

from lark import Token, Tree

from hmsproxy.ddl import trees

Values = tuple[str, ...]  # one skewed value: a value per skewed column


def literal(tree: Tree) -> str:
    child = tree.children[0]
    return child.value if isinstance(child, Token) else trees.string(child)


def value(tree: Tree) -> Values:
    return tuple(literal(t) for t in tree.children if isinstance(t, Tree) and t.data == "skew_literal")


def skewed_columns_and_values(spec: Tree) -> tuple[tuple[str, ...], tuple[Values, ...]]:
    """SKEWED BY (columns) ON (values) of a `skew_spec` node."""
    columns = tuple(trees.name(t).lower() for t in spec.children if isinstance(t, Tree) and t.data == "name")
    values = tuple(value(t) for t in spec.children if isinstance(t, Tree) and t.data == "skew_value")
    return columns, values

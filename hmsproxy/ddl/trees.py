"""Reading lark parse trees: names, strings, properties. Shared by every feature's statement builders."""

from __future__ import annotations

import re

from lark import Token, Tree

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", "'": "'", '"': '"'}


def unquote_ident(tok: Token) -> str:
    s = str(tok)
    if tok.type == "QUOTED_IDENT":
        return s[1:-1].replace("``", "`")
    return s


def unquote_string(tok: Token) -> str:
    body, quote = str(tok)[1:-1], str(tok)[0]
    body = body.replace(quote * 2, quote)
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), body, flags=re.S)


def name(tree: Tree) -> str:
    """A `name` node, unquoted and lower-cased (Hive's names are case-insensitive)."""
    return unquote_ident(tree.children[0]).lower()


def qualified(tree: Tree) -> tuple[str | None, str]:
    """A `qualified` node: (database or None, name)."""
    first, second = tree.children
    return (None, name(first)) if second is None else (name(first), name(second))


def string(tree: Tree) -> str:
    return unquote_string(tree.children[0])


def find(tree: Tree | None, data: str) -> Tree | None:
    """The first child node called `data`, or None."""
    if tree is None:
        return None
    for c in tree.children:
        if isinstance(c, Tree) and c.data == data:
            return c
    return None


def has(tree: Tree, data: str) -> bool:
    return find(tree, data) is not None


def properties(tree: Tree) -> dict[str, str]:
    """The `properties` child as a dict ({} when absent)."""
    props = find(tree, "properties")
    if props is None:
        return {}
    return {string(p.children[0]): string(p.children[1]) for p in props.children if isinstance(p, Tree)}

"""Iceberg namespaces as Hive database names, and their form in REST paths.

A namespace's levels are joined with "." (`a.b` for namespace ["a", "b"]): a Hive name can't hold
a level separator of its own, and dotted names are written in backquotes where they are parsed
(CONNECTED TO `a.b`). A level that itself contains "." can't be addressed.
"""

from __future__ import annotations

from urllib.parse import quote

#: The REST protocol's separator of namespace levels in a path segment (the unit separator, %1F).
_PATH_SEPARATOR = "\x1f"


def levels(database: str) -> list[str]:
    """The namespace levels a Hive database name stands for."""
    parts = database.split(".")
    if not all(parts):
        raise ValueError(f"'{database}' is not a namespace name (empty level)")
    return parts


def database_name(namespace: list[str]) -> str:
    return ".".join(namespace)


def path_segment(database: str) -> str:
    """`database`'s namespace as one URL path segment."""
    return quote(_PATH_SEPARATOR.join(levels(database)), safe="")


def query_value(database: str) -> str:
    """`database`'s namespace as a query parameter value (the `parent` of a listing), unquoted."""
    return _PATH_SEPARATOR.join(levels(database))

"""Hive's partition filters (get_partitions_by_filter) said in Glue's `Expression` syntax.

The two languages mostly agree: comparisons, BETWEEN, IN, AND, OR, parentheses. They differ in
the details this module rewrites: Glue quotes strings only with '…' ('' inside), knows `<>` but not
`!=`, wants the column left of its operator and no DATE keyword. Hive's LIKE is a Java regular
expression where Glue's is SQL's `%`/`_` pattern: those filters are not translated, and the client
evaluates them on the partitions itself (protocol/partition_filter.py), as the metastore would.
"""

from __future__ import annotations

from hmsproxy.protocol.partition_filter import FilterError, tokens

_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
_LITERALS = ("string", "number")


def glue_expression(hive_filter: str) -> str | None:
    """Glue's Expression for `hive_filter`, or None when Glue can't say it (LIKE). Raises FilterError
    for text that isn't a Hive filter."""
    items = [t for t in tokens(hive_filter) if t != ("kw", "date")]  # DATE 'x': Glue casts by the column's type
    if any(t == ("kw", "like") for t in items):
        return None
    out: list[str] = []
    i = 0
    while i < len(items):
        kind, value = items[i]
        if kind in _LITERALS and i + 2 < len(items) and items[i + 1][0] == "op" and items[i + 2][0] == "word":
            op = items[i + 1][1]  # `value op column`: Glue wants the column first
            out += [items[i + 2][1], _operator(_FLIPPED.get(op, op)), _literal(kind, value)]
            i += 3
            continue
        out.append(_literal(kind, value) if kind in _LITERALS else _operator(value) if kind == "op" else _word(kind, value))
        i += 1
    return " ".join(out)


def _literal(kind: str, value: str) -> str:
    return value if kind == "number" else "'" + value.replace("'", "''") + "'"


def _operator(op: str) -> str:
    return "<>" if op == "!=" else op


def _word(kind: str, value: str) -> str:
    if kind == "kw":
        return value.upper()
    if not value.replace("_", "").replace(".", "").isalnum():
        raise FilterError(f"column name {value!r} can't be said in a Glue expression")
    return value

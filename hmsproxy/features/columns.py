"""Column lists as metastores hold them (Thrift FieldSchemas, or any objects with `name` and
`type`), compared by name and type the way Hive does: names case-insensitive, types regardless of
case and spaces (`DECIMAL(10, 2)` is `decimal(10,2)`)."""

from __future__ import annotations


def type_key(type_name: str | None) -> str:
    return "".join((type_name or "").split()).lower()


def named_types(cols) -> list[tuple[str, str]]:
    """[(name, type)] of a column list, normalized for comparing."""
    return [(c.name.lower(), type_key(c.type)) for c in cols or []]


def column_difference(have, want) -> str | None:
    """How two column lists differ in names or types, in words (None: they don't)."""
    a, b = named_types(have), named_types(want)
    if a == b:
        return None
    missing = [f"{n} {t}" for n, t in b if (n, t) not in a]
    extra = [f"{n} {t}" for n, t in a if (n, t) not in b]
    parts = ([f"lacks {', '.join(missing)}"] if missing else []) + ([f"has {', '.join(extra)} besides"] if extra else [])
    return "; ".join(parts) or "has the same columns in another order"

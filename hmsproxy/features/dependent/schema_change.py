"""Which schema changes of a depended-upon table the `propagate` policy carries to its dependent
tables (seed: "if the schema of T changes, it can either be dis-allowed or propagated").

Compatible — every row the dependent table published still reads, with the same meaning:
- columns added after the existing ones (Hive's ADD COLUMNS; old files read them as NULL);
- a column's type widened as Hive 2.3's metastore allows it (ColumnType's implicit conversions):
  tinyint < smallint < int < bigint, any integral type to float/double/decimal, float to double,
  decimal(p,s) to a decimal holding every value of it, varchar(n) to a longer varchar, and any
  primitive to string;
- a comment changed.
Anything else — a column dropped, renamed, moved, or its type narrowed or changed otherwise — is
incompatible: `propagation_refusal` says which column and why.
"""

from __future__ import annotations

import re

from hmsproxy.features.dependent.model import Column

_INTEGRAL = ("tinyint", "smallint", "int", "bigint")
_FLOATING = ("float", "double")
_PRIMITIVE = frozenset({*_INTEGRAL, *_FLOATING, "boolean", "string", "date", "timestamp", "binary"})
_PARAMETERS = re.compile(r"^(\w+)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?$")


def normal_type(text: str) -> str:
    """`DECIMAL( 10, 2 )` -> `decimal(10,2)`; `integer` -> `int`."""
    t = re.sub(r"\s+", "", text.lower())
    return "int" if t == "integer" else t


def _parts(t: str) -> tuple[str, int | None, int | None]:
    m = _PARAMETERS.match(t)
    if m is None:
        return t, None, None  # a complex type: compared whole
    base, a, b = m.groups()
    if base == "decimal":  # Hive's defaults: decimal = decimal(10,0)
        return base, int(a) if a else 10, int(b) if b else 0
    return base, int(a) if a else None, None


def widens(old: str, new: str) -> bool:
    """Whether every value of type `old` is a value of type `new` (the same type included)."""
    old, new = normal_type(old), normal_type(new)
    if old == new:
        return True
    (ob, op, os_), (nb, np_, ns) = _parts(old), _parts(new)
    primitive = ob in _PRIMITIVE or ob in ("decimal", "varchar", "char")
    if nb == "string":
        return primitive
    if ob in _INTEGRAL:
        if nb in _INTEGRAL:
            return _INTEGRAL.index(nb) > _INTEGRAL.index(ob)
        return nb in _FLOATING or (nb == "decimal" and np_ - ns >= (3, 5, 10, 19)[_INTEGRAL.index(ob)])
    if ob == "float":
        return nb == "double"
    if ob == "decimal" and nb == "decimal":
        return ns >= os_ and np_ - ns >= op - os_
    if ob == "varchar" and nb == "varchar":
        return np_ >= op
    return False


def propagation_refusal(name: str, old: tuple[Column, ...], new: tuple[Column, ...]) -> str | None:
    """Why changing table `name`'s data columns from `old` to `new` can't be propagated (None: it can)."""
    if len(new) < len(old):
        kept = {c.name for c in new}
        gone = [c.name for c in old if c.name not in kept] or [c.name for c in old[len(new) :]]
        return f"it drops column(s) {', '.join(gone)} of {name}"
    for was, now in zip(old, new):
        if was.name != now.name:
            return f"column {was.name} of {name} would become {now.name} (a rename or a move)"
        if not widens(was.type, now.type):
            return f"column {was.name} of {name} would change from {was.type} to {now.type}, which does not hold every {was.type} value"
    return None

"""Required fields a decoded request left unset: what a Java metastore refuses while reading it; and
struct arguments left out, which it fails on after reading.

thriftpy2 decodes a struct without its required fields; Java's generated `validate()` refuses it
("Required field 'txnid' is unset! Struct:AbortTxnRequest(...)") and the server answers a protocol
error. The proxy asks only after a call failed unexpectedly (pipeline/handler.py), so the hot path
pays nothing, and then answers as the metastore would instead of with an internal error.
"""

from __future__ import annotations

from thriftpy2.thrift import TType

#: How deep into nested structs to look (the IDL's shapes are shallow; a bound keeps it cheap).
MAX_DEPTH = 6


def unset_required(struct, depth: int = 0) -> str | None:
    """Java's message for the first required field unset in `struct` or the structs it holds, or None."""
    spec = getattr(struct, "thrift_spec", None)
    if spec is None or depth > MAX_DEPTH:
        return None
    for _, field in sorted(spec.items()):
        ttype, name, required = field[0], field[1], field[-1]
        value = getattr(struct, name, None)
        if value is None:
            if required is True:
                return f"Required field '{name}' is unset! Struct:{type(struct).__name__}"
            continue
        for inner in _structs_in(ttype, value):
            found = unset_required(inner, depth + 1)
            if found is not None:
                return found
    return None


def missing_argument(args, method: str) -> str | None:
    """What to tell a client whose call left out a struct argument (a request struct, a table): the
    IDL makes every argument optional, so nothing refuses it while reading; Hive's handler then fails
    on it (a NullPointerException, an internal error), and so would the proxy's features."""
    for _, field in sorted(getattr(args, "thrift_spec", {}).items()):
        if field[0] == TType.STRUCT and getattr(args, field[1], None) is None:
            return f"hmsproxy: {method} needs its argument '{field[1]}' ({field[2].__name__})"
    return None


def _structs_in(ttype: int, value) -> list:
    if ttype == TType.STRUCT:
        return [value]
    if ttype in (TType.LIST, TType.SET):
        return [v for v in value if hasattr(v, "thrift_spec")]
    if ttype == TType.MAP:
        return [v for v in value.values() if hasattr(v, "thrift_spec")]
    return []

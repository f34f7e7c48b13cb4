"""Calls to every method of the served IDL with edge arguments, and what each one ended in.

The generator reads each method's `<method>_args` thrift_spec (the IDL written here, the union of
the Hive versions the proxy serves) and fills every field with values chosen from edge cases by a
seeded random source: empty, huge and unicode strings, negative and extreme numbers, empty and
one-element containers, structs with optional fields left out, names of the other federation's
databases. A call is seeded by (seed, method, case), so adding a method does not change the others.

`outcome_of` runs one call and names its class: ``ok``, the declared exception's type, ``app-error``
(TApplicationException: ``unknown-method``, ``internal-error``, else ``app-error``), ``closed`` (the connection dropped) or
``timeout``: what tests/integration/test_method_fuzz.py compares between a metastore called directly
and the same call through the proxy to a twin of it.
"""

from __future__ import annotations

import math
import random
import zlib
from dataclasses import dataclass

from thriftpy2.thrift import TApplicationException, TException, TType
from thriftpy2.transport import TTransportException

from hmsproxy.protocol import idl

#: Strings every string field may get. "fed_" names a database only the proxy's federated member
#: has; "@hive#" is a Hive 3 catalog-qualified name.
EDGE_STRINGS = (
    "",
    "x",
    "default",
    "fuzz_db",
    "fed_fuzz",
    "@hive#fuzz_db",
    "ünïcødé_表_😀",
    "bad name!*",
    "*",
    "-1",
    "a" * 4000,
)
#: One call in HUGE_EVERY gets a string this long in one field (a multi-megabyte frame).
HUGE_STRING = "h" * 2_000_000
HUGE_EVERY = 40
INTS = {
    TType.BYTE: (0, 1, -1, 127, -128),
    TType.I16: (0, 1, -1, 32767, -32768),
    TType.I32: (0, 1, -1, 2**31 - 1, -(2**31)),
    TType.I64: (0, 1, -1, 2**63 - 1, -(2**63)),
}
DOUBLES = (0.0, -1.5, 1e308, -math.inf)
#: Struct nesting beyond this leaves fields out (the IDL has recursive shapes).
MAX_DEPTH = 3
#: TApplicationException types by what they say: a method the server lacks, or a server's own failure.
APP_ERRORS = {
    TApplicationException.UNKNOWN_METHOD: "unknown-method",
    TApplicationException.INTERNAL_ERROR: "internal-error",
    TApplicationException.PROTOCOL_ERROR: "protocol-error",
}
#: Never sent: it would stop the metastore called directly (the proxy answers it itself).
NEVER_SENT = frozenset({"shutdown", "reinitialize"})


@dataclass(frozen=True)
class FuzzCall:
    method: str
    case: int
    kwargs: dict

    def __str__(self) -> str:
        shown = {k: _short(v) for k, v in self.kwargs.items()}
        return f"{self.method}#{self.case}({shown})"


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def methods(service=idl.HmsProxy) -> list[str]:
    return [m for m in service.thrift_services if m not in NEVER_SENT]


def calls(seed: int, cases: int, only: list[str] | None = None) -> list[FuzzCall]:
    """`cases` calls to each method (of `only`, or all), in a fixed order for one seed."""
    made = []
    for method in only or methods():
        args_cls = getattr(idl.HmsProxy, method + "_args")
        for case in range(cases):
            rng = random.Random(zlib.crc32(f"{seed}:{method}:{case}".encode()))
            huge = rng.randrange(HUGE_EVERY) == 0
            kwargs = {}
            for _, spec in sorted(args_cls.thrift_spec.items()):
                name = spec[1]
                kwargs[name] = None if rng.random() < 0.15 else _value(rng, spec[0], spec[2:], 0)
            if huge:
                strings = [k for k, v in kwargs.items() if isinstance(v, str)]
                if strings:
                    kwargs[rng.choice(strings)] = HUGE_STRING
            made.append(FuzzCall(method, case, kwargs))
    return made


def _value(rng: random.Random, ttype: int, rest: tuple, depth: int):
    """A value for a field of thrift type `ttype`; `rest` is the spec's tail (element or struct types)."""
    if ttype == TType.STRING:
        return rng.choice(EDGE_STRINGS)
    if ttype in INTS:
        return rng.choice(INTS[ttype])
    if ttype == TType.BOOL:
        return rng.random() < 0.5
    if ttype == TType.DOUBLE:
        return rng.choice(DOUBLES)
    if ttype == TType.STRUCT:
        return _struct(rng, rest[0], depth) if depth < MAX_DEPTH else None
    if ttype in (TType.LIST, TType.SET):
        element = rest[0]
        size = rng.choice((0, 1, 1, 3))
        items = [_element(rng, element, depth + 1) for _ in range(size)]
        items = [i for i in items if i is not None]
        return set(items) if ttype == TType.SET and all(isinstance(i, (str, int, float)) for i in items) else items
    if ttype == TType.MAP:
        key_type, value_type = rest[0]
        size = rng.choice((0, 1, 2))
        pairs = {}
        for _ in range(size):
            key = _element(rng, key_type, depth + 1)
            value = _element(rng, value_type, depth + 1)
            if key is not None and value is not None and isinstance(key, (str, int, float, bool)):
                pairs[key] = value
        return pairs
    return None


def _element(rng: random.Random, element, depth: int):
    """A container's element: its spec is a type id, or (type id, its own spec) for nested ones."""
    if isinstance(element, tuple):
        ttype, inner = element
        return _value(rng, ttype, (inner,), depth)
    return _value(rng, element, (), depth)


def _struct(rng: random.Random, cls, depth: int):
    fields = {}
    for _, spec in sorted(cls.thrift_spec.items()):
        if rng.random() < 0.3:
            continue  # an optional (or required) field left out
        fields[spec[1]] = _value(rng, spec[0], spec[2:], depth + 1)
    try:
        return cls(**fields)
    except TypeError:
        return cls()


def outcome_of(client, call: FuzzCall) -> str:
    """The class of what `call` ended in on `client` (a thriftpy2 client of the full IDL)."""
    try:
        getattr(client, call.method)(**call.kwargs)
    except TApplicationException as e:
        kind = APP_ERRORS.get(e.type, "app-error")
        if kind == "internal-error" and f"processing {call.method}" not in str(e):
            return "internal-error-of-another-call"  # a translated call's own failure, relayed
        return kind
    except (TTransportException, ConnectionError, EOFError, BrokenPipeError) as e:
        if isinstance(e, TTransportException) and "timed out" in str(e):
            return "timeout"
        return "closed"
    except TimeoutError:
        return "timeout"
    except TException as e:
        return type(e).__name__
    except (TypeError, ValueError, OverflowError, struct_error()):
        return "unsendable"  # the client could not encode it: never reached a server
    return "ok"


def struct_error():
    import struct

    return struct.error

"""Calls to every method of the served IDL with edge arguments, and what each one ended in.

The generator reads each method's `<method>_args` thrift_spec (the IDL written here, the union of
the Hive versions the proxy serves) and fills every field with values chosen from edge cases by a
seeded random source: empty, huge and unicode strings, negative and extreme numbers, empty and
one-element containers, structs with optional fields left out, names of the other federation's
databases, ids of another metastore's transactions and locks as the proxy shows them (`foreign_ids`).
A call is seeded by (seed, method, case), so adding a method does not change the others. After a
method's plain cases come its retyped ones (a third as many, at least one): one field, of the call
or of a struct inside it, sent with a type other than the IDL's (a string where an i64 belongs, a
list of i32 for a list of strings, a struct for a map), which a Thrift server skips as an unknown
field: the proxy, whether it decodes the call or copies its bytes, must end it as the metastore does.

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

from thriftpy2.thrift import TApplicationException, TException, TMessageType, TType
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
#: heartbeat_txn_range ranges wider than this are not sent: Hive heartbeats the range's ids one by
#: one, so (1, 2**63 - 1) holds its transaction tables for ever and every later call on that
#: metastore waits -- the run would compare a stuck metastore, not the proxy. Nor is a range ending
#: at 2**63 - 1: Hive's loop (`txn <= max; txn++`) wraps around there and never ends.
WIDEST_HEARTBEAT_RANGE = 1000
LONGEST_I64 = 2**63 - 1


#: What a retyped field is sent as instead (thriftpy2 spec tails: type, then element or struct).
WRONG_TYPES = (
    (TType.STRING,),
    (TType.I32,),
    (TType.I64,),
    (TType.BOOL,),
    (TType.LIST, TType.I32),
    (TType.LIST, TType.STRING),
    (TType.MAP, (TType.STRING, TType.I64)),
    (TType.STRUCT, idl.hive.FieldSchema),
)


@dataclass(frozen=True)
class FuzzCall:
    method: str
    case: int
    kwargs: dict
    #: What was retyped, e.g. "tbl.sd -> LIST<I32>" ("" for a plain call).
    retyped: str = ""
    #: The call's own fields with one of them retyped (None: the IDL's `<method>_args` as it is).
    args_spec: dict | None = None

    def __str__(self) -> str:
        shown = {k: _short(v) for k, v in self.kwargs.items()}
        retyped = f" retyped {self.retyped}" if self.retyped else ""
        return f"{self.method}#{self.case}({shown}){retyped}"


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def methods(service=idl.HmsProxy) -> list[str]:
    return [m for m in service.thrift_services if m not in NEVER_SENT]


def calls(seed: int, cases: int, only: list[str] | None = None, foreign_ids: tuple[int, ...] = ()) -> list[FuzzCall]:
    """`cases` plain and `retyped_cases(cases)` retyped calls to each method (of `only`, or all), in a
    fixed order for one seed. `foreign_ids` join the i64 values (ids of another metastore's
    transactions and locks)."""
    ints = {**INTS, TType.I64: INTS[TType.I64] + tuple(foreign_ids)}
    made = []
    for method in only or methods():
        args_cls = getattr(idl.HmsProxy, method + "_args")
        for case in range(cases + retyped_cases(cases)):
            rng = random.Random(zlib.crc32(f"{seed}:{method}:{case}".encode()))
            huge = rng.randrange(HUGE_EVERY) == 0
            kwargs = {}
            for _, spec in sorted(args_cls.thrift_spec.items()):
                name = spec[1]
                kwargs[name] = None if rng.random() < 0.15 else _value(rng, spec[0], spec[2:], 0, ints)
            if huge:
                strings = [k for k, v in kwargs.items() if isinstance(v, str)]
                if strings:
                    kwargs[rng.choice(strings)] = HUGE_STRING
            if case < cases:
                call = FuzzCall(method, case, kwargs)
            elif args_cls.thrift_spec:  # a method without arguments has nothing to retype
                call = _retyped(rng, method, case, args_cls, kwargs, ints)
            else:
                continue
            if not _stalls_hive(call):
                made.append(call)
    return made


def _stalls_hive(call: FuzzCall) -> bool:
    """A call Hive works on for ever, stalling the metastore for every later call (module doc)."""
    txns = call.kwargs.get("txns") if call.method == "heartbeat_txn_range" else None
    low, high = getattr(txns, "min", None), getattr(txns, "max", None)
    return isinstance(low, int) and isinstance(high, int) and (high - low > WIDEST_HEARTBEAT_RANGE or high == LONGEST_I64)


def retyped_cases(cases: int) -> int:
    return max(1, cases // 3)


def _retyped(rng: random.Random, method: str, case: int, args_cls, kwargs: dict, ints: dict) -> FuzzCall:
    """The call with one field (of its own, or of a struct in it) given a wrong type and a value of it."""
    places = [(None, fid, spec, spec[1]) for fid, spec in args_cls.thrift_spec.items()]
    for name, value in kwargs.items():
        places.extend(_struct_fields(value, name, 1))
    owner, fid, spec, path = rng.choice(places)
    own = (spec[0], spec[2]) if len(spec) == 4 else (spec[0],)  # a container's elements, a struct's class
    wrong = rng.choice([w for w in WRONG_TYPES if w != own])
    value = _value(rng, wrong[0], wrong[1:], MAX_DEPTH - 1, ints)
    wrong_spec = (wrong[0], spec[1], *wrong[1:], False)
    shown = f"{path} -> {TYPE_NAMES[wrong[0]]}"
    if owner is None:  # a field of the call itself: the call is sent with its own spec (outcome_of)
        return FuzzCall(method, case, {**kwargs, spec[1]: value}, shown, {**args_cls.thrift_spec, fid: wrong_spec})
    owner.thrift_spec = {**owner.thrift_spec, fid: wrong_spec}  # this instance only: its class is the IDL's
    setattr(owner, spec[1], value)
    return FuzzCall(method, case, kwargs, shown)


def _struct_fields(value, path: str, depth: int) -> list:
    """(struct, field id, spec, path) of every field of the structs in `value`, down to MAX_DEPTH."""
    if depth > MAX_DEPTH:
        return []
    if isinstance(value, (list, set)):
        return [f for item in value for f in _struct_fields(item, f"{path}[]", depth)]
    if isinstance(value, dict):
        return [f for item in value.values() for f in _struct_fields(item, f"{path}{{}}", depth)]
    spec = getattr(value, "thrift_spec", None)
    if spec is None:
        return []
    found = []
    for fid, field in spec.items():
        found.append((value, fid, field, f"{path}.{field[1]}"))
        found.extend(_struct_fields(getattr(value, field[1], None), f"{path}.{field[1]}", depth + 1))
    return found


TYPE_NAMES = {**{v: k for k, v in vars(TType).items() if k.isupper() and isinstance(v, int)}, TType.STRING: "STRING"}


def _value(rng: random.Random, ttype: int, rest: tuple, depth: int, ints: dict = INTS):
    """A value for a field of thrift type `ttype`; `rest` is the spec's tail (element or struct types)."""
    if ttype == TType.STRING:
        return rng.choice(EDGE_STRINGS)
    if ttype in ints:
        return rng.choice(ints[ttype])
    if ttype == TType.BOOL:
        return rng.random() < 0.5
    if ttype == TType.DOUBLE:
        return rng.choice(DOUBLES)
    if ttype == TType.STRUCT:
        return _struct(rng, rest[0], depth, ints) if depth < MAX_DEPTH else None
    if ttype in (TType.LIST, TType.SET):
        element = rest[0]
        size = rng.choice((0, 1, 1, 3))
        items = [_element(rng, element, depth + 1, ints) for _ in range(size)]
        items = [i for i in items if i is not None]
        return set(items) if ttype == TType.SET and all(isinstance(i, (str, int, float)) for i in items) else items
    if ttype == TType.MAP:
        key_type, value_type = rest[0]
        size = rng.choice((0, 1, 2))
        pairs = {}
        for _ in range(size):
            key = _element(rng, key_type, depth + 1, ints)
            value = _element(rng, value_type, depth + 1, ints)
            if key is not None and value is not None and isinstance(key, (str, int, float, bool)):
                pairs[key] = value
        return pairs
    return None


def _element(rng: random.Random, element, depth: int, ints: dict):
    """A container's element: its spec is a type id, or (type id, its own spec) for nested ones."""
    if isinstance(element, tuple):
        ttype, inner = element
        return _value(rng, ttype, (inner,), depth, ints)
    return _value(rng, element, (), depth, ints)


def _struct(rng: random.Random, cls, depth: int, ints: dict):
    fields = {}
    for _, spec in sorted(cls.thrift_spec.items()):
        if rng.random() < 0.3:
            continue  # an optional (or required) field left out
        fields[spec[1]] = _value(rng, spec[0], spec[2:], depth + 1, ints)
    try:
        return cls(**fields)
    except TypeError:
        return cls()


def outcome_of(client, call: FuzzCall, said: dict | None = None) -> str:
    """The class of what `call` ended in on `client` (a thriftpy2 client of the full IDL); `said`
    gets the error's text under the call's name, for a difference to show what each side said."""
    try:
        _send(client, call)
    except Exception as e:
        if said is not None:
            said[str(call)] = f"{type(e).__name__}: {str(e)[:300]}"
        return _class_of(e, call)
    return "ok"


def _class_of(e: Exception, call: FuzzCall) -> str:
    if isinstance(e, TApplicationException):
        kind = APP_ERRORS.get(e.type, "app-error")
        if kind == "internal-error" and f"processing {call.method}" not in str(e):
            return "internal-error-of-another-call"  # a translated call's own failure, relayed
        return kind
    if isinstance(e, TTransportException) and "timed out" in str(e):
        return "timeout"
    if isinstance(e, (TTransportException, ConnectionError, EOFError, BrokenPipeError)):
        return "closed"
    if isinstance(e, TimeoutError):
        return "timeout"
    if isinstance(e, TException):
        return type(e).__name__
    if isinstance(e, (TypeError, ValueError, OverflowError, struct_error())):
        return "unsendable"  # the client could not encode it: never reached a server
    raise e


def _send(client, call: FuzzCall):
    if call.args_spec is None:
        return getattr(client, call.method)(**call.kwargs)
    # A retyped field of the call itself: written as TClient._send writes a call, with the call's spec.
    args = getattr(idl.HmsProxy, call.method + "_args")()
    args.thrift_spec = call.args_spec
    for name, value in call.kwargs.items():
        setattr(args, name, value)
    client._oprot.write_message_begin(call.method, TMessageType.CALL, client._seqid)
    args.write(client._oprot)
    client._oprot.write_message_end()
    client._oprot.trans.flush()
    return client._recv(call.method)


def struct_error():
    import struct

    return struct.error

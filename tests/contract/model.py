"""The Thrift contract as data: what ContractDump prints about a jar, and the same read from our IDL.

Shared by the exact 2.3 check (test_idl_contract.py) and the per-version report (version_diff.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from hmsproxy.protocol import idl

# Thrift TType codes as ContractDump prints them (Java's org.apache.thrift.protocol.TType).
BOOL, BYTE, DOUBLE, I16, I32, I64, STRING, STRUCT, MAP, SET, LIST, ENUM = (
    2,
    3,
    4,
    6,
    8,
    10,
    11,
    12,
    13,
    14,
    15,
    16,
)
TP2_BINARY = 18  # thriftpy2's own code for `binary`; STRING on the wire
PRIMITIVES = {BOOL: "bool", BYTE: "byte", DOUBLE: "double", I16: "i16", I32: "i32", I64: "i64"}
REQUIRED = 1  # org.apache.thrift.TFieldRequirementType.REQUIRED

#: The services we check, by their Java simple name, with the service each extends.
SERVICE_PARENTS = {"FacebookService": None, "ThriftHiveMetastore": "FacebookService"}


# --------------------------------------------------------------------------- types
# Both sides are turned into the same nested tuples:
#   ("bool",) ... ("i64",), ("string", is_binary), ("struct", Name), ("enum", Name),
#   ("list", elem), ("set", elem), ("map", key, value)


def jar_type(t: dict) -> tuple:
    code = t["t"]
    if code in PRIMITIVES:
        return (PRIMITIVES[code],)
    if code == STRING:
        return ("string", bool(t.get("binary")))
    if code == STRUCT:
        return ("struct", t["struct"])
    if code == ENUM:
        return ("enum", t["enum"])
    if code == LIST:
        return ("list", jar_type(t["elem"]))
    if code == SET:
        return ("set", jar_type(t["elem"]))
    if code == MAP:
        return ("map", jar_type(t["key"]), jar_type(t["value"]))
    raise AssertionError(f"ContractDump printed an unknown type code: {t!r}")


def _is_enum_class(obj) -> bool:
    return isinstance(obj, type) and hasattr(obj, "_VALUES_TO_NAMES") and not hasattr(obj, "thrift_spec")


def our_type(ttype: int, arg=None) -> tuple:
    """A thriftpy2 (ttype, type-argument) pair, as found in thrift_spec."""
    if ttype == I32 and _is_enum_class(arg):
        return ("enum", arg.__name__)
    if ttype in PRIMITIVES:
        return (PRIMITIVES[ttype],)
    if ttype in (STRING, TP2_BINARY):
        return ("string", ttype == TP2_BINARY)
    if ttype == STRUCT:
        return ("struct", arg.__name__)
    if ttype in (LIST, SET):
        return ("list" if ttype == LIST else "set", _our_inner(arg))
    if ttype == MAP:
        key, value = arg
        return ("map", _our_inner(key), _our_inner(value))
    raise AssertionError(f"unexpected thriftpy2 type {ttype!r} ({arg!r})")


def _our_inner(spec) -> tuple:
    """A container's element spec in thriftpy2: a bare ttype or (ttype, argument)."""
    return our_type(spec) if isinstance(spec, int) else our_type(*spec)


def wire(t: tuple) -> tuple:
    """The type as the wire sees it: binary and string are both STRING."""
    if t[0] == "string":
        return ("string",)
    return (t[0],) + tuple(wire(x) if isinstance(x, tuple) else x for x in t[1:])


def show(t: tuple) -> str:
    kind = t[0]
    if kind == "string":
        return "binary" if len(t) > 1 and t[1] else "string"
    if kind in ("struct", "enum"):
        return f"{kind} {t[1]}"
    if kind in ("list", "set"):
        return f"{kind}<{show(t[1])}>"
    if kind == "map":
        return f"map<{show(t[1])},{show(t[2])}>"
    return kind


# ------------------------------------------------------------------------ models


@dataclass(frozen=True)
class Field:
    name: str
    type: tuple
    required: bool


@dataclass
class Struct:
    name: str
    kind: str  # "struct" | "union" | "exception"
    fields: dict[int, Field]


@dataclass
class Method:
    name: str
    args: dict[int, Field]
    returns: tuple | None  # None: void
    throws: dict[int, Field]  # exception fields of the result
    oneway: bool
    declared_throws: frozenset[str] = field(default_factory=frozenset)


@dataclass
class Contract:
    structs: dict[str, Struct]
    enums: dict[str, dict[str, int]]
    services: dict[str, dict[str, Method]]


def _result_parts(result: dict[int, Field] | None) -> tuple[tuple | None, dict[int, Field]]:
    if result is None:
        return None, {}
    success = result.get(0)
    return (success.type if success else None), {i: f for i, f in result.items() if i != 0}


def jar_contract(lines: list[str]) -> Contract:
    structs: dict[str, Struct] = {}
    enums: dict[str, dict[str, int]] = {}
    declared: dict[tuple[str, str], list[str]] = {}
    for line in lines:
        d = json.loads(line)
        if d["kind"] == "struct":
            kind = "union" if d["union"] else "exception" if d["exception"] else "struct"
            fields = {f["id"]: Field(f["name"], jar_type(f["type"]), f["req"] == REQUIRED) for f in d["fields"]}
            structs[d["name"]] = Struct(d["name"], kind, fields)
        elif d["kind"] == "enum":
            enums[d["name"]] = dict(d["values"])
        elif d["kind"] == "method":
            declared[(d["service"], d["name"])] = d["throws"]

    services: dict[str, dict[str, Method]] = {}
    used: set[str] = set()
    for (service, name), throws in declared.items():
        # The Iface lists inherited methods too; their args/result classes live on the parent.
        owner = service
        while owner and f"{owner}${name}_args" not in structs:
            owner = SERVICE_PARENTS.get(owner)
        assert owner, f"jar: no {service}${name}_args class found (nor on a parent service)"
        args = structs[f"{owner}${name}_args"]
        result = structs.get(f"{owner}${name}_result")
        used |= {f"{owner}${name}_args", f"{owner}${name}_result"}
        returns, exc = _result_parts(result.fields if result else None)
        services.setdefault(service, {})[name] = Method(name, args.fields, returns, exc, result is None, frozenset(throws))
    # Service args/results are checked with their methods, not as structs.
    unused = sorted(n for n in structs if "$" in n and n not in used)
    assert not unused, f"jar: classes that belong to no dumped method: {unused}"
    structs = {n: s for n, s in structs.items() if "$" not in n}
    return Contract(structs, enums, services)


def _our_fields(cls) -> dict[int, Field]:
    out = {}
    for fid, spec in cls.thrift_spec.items():
        if len(spec) == 3:
            ttype, name, required = spec
            arg = None
        else:
            ttype, name, arg, required = spec
        out[fid] = Field(name, our_type(ttype, arg), bool(required))
    return out


def _our_methods(service) -> dict[str, Method]:
    methods = {}
    for name in service.thrift_services:
        args = getattr(service, f"{name}_args")
        result = getattr(service, f"{name}_result")
        returns, exc = _result_parts(_our_fields(result))
        declared = frozenset(f.type[1] for f in exc.values())
        methods[name] = Method(name, _our_fields(args), returns, exc, bool(result.oneway), declared)
    return methods


def our_contract() -> Contract:
    structs: dict[str, Struct] = {}
    enums: dict[str, dict[str, int]] = {}
    for module in (idl.fb303, idl.hive):
        meta = module.__thrift_meta__
        for kind, key in (("struct", "structs"), ("union", "unions"), ("exception", "exceptions")):
            for cls in meta[key]:
                assert cls.__name__ not in structs, f"ours: {cls.__name__} is defined twice"
                structs[cls.__name__] = Struct(cls.__name__, kind, _our_fields(cls))
        for cls in meta["enums"]:
            enums[cls.__name__] = dict(cls._NAMES_TO_VALUES)
    services = {
        "FacebookService": _our_methods(idl.fb303.FacebookService),
        "ThriftHiveMetastore": _our_methods(idl.ThriftHiveMetastore),
        "HmsProxy": _our_methods(idl.HmsProxy),
    }
    return Contract(structs, enums, services)

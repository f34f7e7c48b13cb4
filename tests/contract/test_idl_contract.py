"""Our Thrift IDL, as thriftpy2 loads it, against the contract compiled into the Hive jars.

tests/contract/java/ContractDump.java reads the generated Java classes of
hive-metastore and libfb303 (the jars shipped inside pyspark) by reflection and
prints every struct, enum and service method as JSON lines.  These tests
compare that dump with hmsproxy.idl:

* every struct of the jar exists in our IDL with the same kind (struct, union,
  exception) and every field has the same id, name, requiredness and type
  (recursively; struct and enum names must match);
* every enum has the same values;
* every service method has the same argument ids/names/types, the same return
  type, the same declared exceptions (ids, types) and the same oneway-ness;
* the other way round, our IDL adds nothing that is not listed in ALLOWED_ADDITIONS
  (and everything listed there is really an addition).

javac and java are required: the tests fail, never skip, when they are missing.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from hmsproxy import idl

JAVA_SRC = Path(__file__).parent / "java" / "ContractDump.java"

#: What our IDL may have beyond the 2.3 jar: "Struct.id:name" for a field,
#: "Service.method" for a method, "Struct" / "Enum" / "Enum.VALUE" for whole types.
ALLOWED_ADDITIONS = frozenset(
    {
        # Hive 3.x fields, for talking to newer backends.
        "GetTableRequest.4:catName",
        "GetTablesRequest.4:catName",
        "GetTableResult.2:isStatsCompliant",
        # The proxy's own calls.
        "HmsProxy.hmsproxy_describe",
        "HmsProxy.hmsproxy_execute",
        "HmsProxy.hmsproxy_execute_script",
    }
)

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


# ----------------------------------------------------------------------- fixtures


def _tool(name: str) -> str:
    found = shutil.which(name)
    if not found and os.environ.get("JAVA_HOME"):
        candidate = Path(os.environ["JAVA_HOME"]) / "bin" / name
        found = str(candidate) if candidate.exists() else None
    if not found:
        pytest.fail(f"`{name}` not found on PATH (nor in $JAVA_HOME/bin): the IDL contract test needs a JDK")
    return found


def _jars_dir() -> Path:
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        pytest.fail("pyspark is not installed: its jars/ directory holds the Hive metastore jar we check against")
    jars = Path(next(iter(spec.submodule_search_locations))) / "jars"
    if not jars.is_dir():
        pytest.fail(f"{jars} does not exist")
    return jars


def _one_jar(jars: Path, pattern: str) -> Path:
    found = sorted(jars.glob(pattern))
    if len(found) != 1:
        pytest.fail(f"expected exactly one {pattern} in {jars}, found {[p.name for p in found]}")
    return found[0]


@dataclass
class Dumps:
    jar: Contract
    ours: Contract
    jar_names: str


@pytest.fixture(scope="session")
def contract(tmp_path_factory) -> Dumps:
    javac, java = _tool("javac"), _tool("java")
    jars = _jars_dir()
    hive_jar = _one_jar(jars, "hive-metastore-*.jar")
    fb303_jar = _one_jar(jars, "libfb303-*.jar")
    classpath = f"{jars}{os.sep}*"
    out = tmp_path_factory.mktemp("contract-dump")

    def run(cmd: list[str]) -> str:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if proc.returncode != 0:
            pytest.fail(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr}")
        return proc.stdout

    run([javac, "-nowarn", "-d", str(out), "-cp", classpath, str(JAVA_SRC)])
    run_cp = f"{out}{os.pathsep}{classpath}"
    lines = run([java, "-cp", run_cp, "ContractDump", str(hive_jar), "org.apache.hadoop.hive.metastore.api."])
    lines += run([java, "-cp", run_cp, "ContractDump", str(fb303_jar), "com.facebook.fb303."])
    jar = jar_contract([line for line in lines.splitlines() if line.strip()])
    return Dumps(jar, our_contract(), f"{hive_jar.name} + {fb303_jar.name}")


def _report(problems: list[str], what: str, jar_names: str) -> None:
    if problems:
        pytest.fail(
            f"{len(problems)} {what} mismatch(es) between our IDL and {jar_names}:\n  " + "\n  ".join(problems),
            pytrace=False,
        )


def _compare_fields(where: str, jar: dict[int, Field], ours: dict[int, Field], label: str = "field") -> list[str]:
    problems = []
    for fid, jf in sorted(jar.items()):
        of = ours.get(fid)
        if of is None:
            problems.append(f"{where}: {label} {fid}:{jf.name} ({show(jf.type)}) is missing")
            continue
        if of.name != jf.name:
            problems.append(f"{where}: {label} {fid} is named {of.name!r}, the jar says {jf.name!r}")
        if wire(of.type) != wire(jf.type):
            problems.append(f"{where}: {label} {fid}:{jf.name} is {show(of.type)}, the jar says {show(jf.type)}")
        if of.required != jf.required:
            problems.append(
                f"{where}: {label} {fid}:{jf.name} is {'required' if of.required else 'not required'}, "
                f"the jar says {'required' if jf.required else 'not required'}"
            )
    return problems


# -------------------------------------------------------------------------- tests


def test_dump_is_complete(contract):
    """Guards the rest: a broken dump (wrong package, empty jar) must not pass as 'no mismatches'."""
    jar = contract.jar
    assert len(jar.structs) > 100, f"only {len(jar.structs)} structs dumped from {contract.jar_names}"
    assert len(jar.enums) > 10, f"only {len(jar.enums)} enums dumped"
    assert "get_table" in jar.services.get("ThriftHiveMetastore", {}), "ThriftHiveMetastore not dumped"
    assert "getStatus" in jar.services.get("FacebookService", {}), "FacebookService not dumped"


def test_structs_match_jar(contract):
    problems = []
    for name, js in sorted(contract.jar.structs.items()):
        ours = contract.ours.structs.get(name)
        if ours is None:
            problems.append(f"{js.kind} {name}: missing from our IDL")
            continue
        if ours.kind != js.kind:
            problems.append(f"{name}: ours is a {ours.kind}, the jar has a {js.kind}")
        problems += _compare_fields(name, js.fields, ours.fields)
    _report(problems, "struct", contract.jar_names)


def test_enums_match_jar(contract):
    problems = []
    for name, values in sorted(contract.jar.enums.items()):
        ours = contract.ours.enums.get(name)
        if ours is None:
            problems.append(f"enum {name}: missing from our IDL")
            continue
        for value, number in sorted(values.items(), key=lambda kv: kv[1]):
            if value not in ours:
                problems.append(f"enum {name}: value {value} = {number} is missing")
            elif ours[value] != number:
                problems.append(f"enum {name}: {value} = {ours[value]}, the jar says {number}")
    _report(problems, "enum", contract.jar_names)


def test_service_methods_match_jar(contract):
    problems = []
    for service, methods in sorted(contract.jar.services.items()):
        ours_service = contract.ours.services.get(service)
        if ours_service is None:
            problems.append(f"service {service}: missing from our IDL")
            continue
        for name, jm in sorted(methods.items()):
            where = f"{service}.{name}"
            om = ours_service.get(name)
            if om is None:
                problems.append(f"{where}: method missing from our IDL")
                continue
            problems += _compare_fields(where, jm.args, om.args, label="argument")
            if (om.returns is None) != (jm.returns is None) or (om.returns is not None and wire(om.returns) != wire(jm.returns)):
                ours_ret = "void" if om.returns is None else show(om.returns)
                jar_ret = "void" if jm.returns is None else show(jm.returns)
                problems.append(f"{where}: returns {ours_ret}, the jar says {jar_ret}")
            problems += _compare_fields(where, jm.throws, om.throws, label="exception")
            jar_declared = frozenset(f.type[1] for f in jm.throws.values())
            if jar_declared != jm.declared_throws:  # the dump disagrees with itself
                problems.append(f"{where}: jar result class has {sorted(jar_declared)}, its Iface declares {sorted(jm.declared_throws)}")
            if om.declared_throws != jm.declared_throws:
                problems.append(f"{where}: throws {sorted(om.declared_throws)}, the jar declares {sorted(jm.declared_throws)}")
            if om.oneway != jm.oneway:
                problems.append(
                    f"{where}: is {'oneway' if om.oneway else 'not oneway'}, the jar's is {'oneway' if jm.oneway else 'not oneway'}"
                )
    _report(problems, "service", contract.jar_names)


def _our_additions(contract) -> set[str]:
    """Everything in our IDL that the jar does not have, in ALLOWED_ADDITIONS' notation."""
    jar, ours = contract.jar, contract.ours
    added: set[str] = set()
    for name, s in ours.structs.items():
        js = jar.structs.get(name)
        if js is None:
            added.add(name)
            continue
        added |= {f"{name}.{fid}:{f.name}" for fid, f in s.fields.items() if fid not in js.fields}
    for name, values in ours.enums.items():
        if name not in jar.enums:
            added.add(name)
            continue
        added |= {f"{name}.{v}" for v in values if v not in jar.enums[name]}
    for service, methods in ours.services.items():
        if service == "HmsProxy":
            # HmsProxy extends ThriftHiveMetastore: only its own methods are additions.
            base = jar.services.get("ThriftHiveMetastore", {})
        else:
            base = jar.services.get(service, {})
        for name, m in methods.items():
            if name not in base:
                added.add(f"{service}.{name}")
                continue
            added |= {
                f"{service}.{name}.{kind} {fid}:{f.name}"
                for kind, ours_fields, jar_fields in (("argument", m.args, base[name].args), ("exception", m.throws, base[name].throws))
                for fid, f in ours_fields.items()
                if fid not in jar_fields
            }
    return added


def test_idl_adds_only_allow_listed(contract):
    extra = sorted(_our_additions(contract) - ALLOWED_ADDITIONS)
    assert not extra, (
        f"our IDL has things {contract.jar_names} does not, and ALLOWED_ADDITIONS does not list them "
        f"(a typo, or an addition to allow-list): {extra}"
    )


def test_allow_list_is_current(contract):
    """Each allowed addition must be in our IDL and not (yet) in the jar."""
    stale = sorted(ALLOWED_ADDITIONS - _our_additions(contract))
    assert not stale, (
        f"ALLOWED_ADDITIONS lists entries that are not additions of our IDL over {contract.jar_names} "
        f"(missing from the IDL, misspelled, or now part of the jar): {stale}"
    )


def test_binary_matches_jar(contract):
    """binary and string share the wire type, but thriftpy2 decodes string to str and binary to bytes."""
    problems = []

    def walk(where: str, jar_fields: dict[int, Field], ours_fields: dict[int, Field]) -> None:
        for fid, jf in sorted(jar_fields.items()):
            of = ours_fields.get(fid)
            if of is not None and wire(of.type) == wire(jf.type) and of.type != jf.type:
                problems.append(f"{where}: field {fid}:{jf.name} is {show(of.type)}, the jar says {show(jf.type)}")

    for name, js in sorted(contract.jar.structs.items()):
        if name in contract.ours.structs:
            walk(name, js.fields, contract.ours.structs[name].fields)
    for service, methods in sorted(contract.jar.services.items()):
        for name, jm in sorted(methods.items()):
            om = contract.ours.services.get(service, {}).get(name)
            if om is None:
                continue
            walk(f"{service}.{name}", jm.args, om.args)
            if jm.returns and om.returns and wire(jm.returns) == wire(om.returns) and jm.returns != om.returns:
                problems.append(f"{service}.{name}: returns {show(om.returns)}, the jar says {show(jm.returns)}")
    _report(problems, "binary/string", contract.jar_names)

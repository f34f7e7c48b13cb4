"""Our IDL against the Thrift contract of Hive 3.1 and 4.x: every difference, and why it is fine (or not yet).

The 2.3 contract test (test_idl_contract.py) demands an exact match. Newer metastores add,
remove and change things; this module lists each difference under a stable key, e.g.

    4.0:Table.17:catName:added          a struct field the version has and we lack
    3.1:method get_table:removed        a method we have and the version lacks
    4.0:method get_fields.arg 1:db_name:type

and classifies it with tests/contract/version_diff_reasons.yaml (`*` in a key pattern matches
anything; every difference must match exactly one entry, and every entry something).

    python -m tests.contract.version_diff --write docs/hive-versions-idl.md
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from tests.contract import jars

# The Contract model and both readers live with the 2.3 test that introduced them.
from tests.contract.model import Contract, Field, Method, jar_contract, our_contract, show, wire

REASONS_FILE = Path(__file__).with_name("version_diff_reasons.yaml")
DOC_FILE = Path(__file__).resolve().parents[2] / "docs" / "hive-versions-idl.md"
REGENERATE = "python -m tests.contract.version_diff --write docs/hive-versions-idl.md"
VERDICTS = ("covered", "irrelevant", "todo")
#: The service compared: its methods include FacebookService's (both sides list inherited methods).
SERVICE = "ThriftHiveMetastore"


@dataclass(frozen=True)
class Difference:
    key: str  # "4.0:Table.17:catName:added"
    area: str  # a heading of the report: "method", "struct", "field", ...
    detail: str  # markdown


# ----------------------------------------------------------------------------- diff


def _req(f: Field) -> str:
    return "required" if f.required else "optional"


def _fields(version: str, where: str, label: str, ours: dict[int, Field], theirs: dict[int, Field]) -> list[Difference]:
    out = []
    for fid in sorted(ours.keys() | theirs.keys()):
        o, t = ours.get(fid), theirs.get(fid)
        if o is None:
            out.append(Difference(f"{version}:{where}{fid}:{t.name}:added", label, f"{_req(t)} `{show(t.type)}`"))
            continue
        if t is None:
            out.append(Difference(f"{version}:{where}{fid}:{o.name}:removed", label, f"ours: {_req(o)} `{show(o.type)}`"))
            continue
        if o.name != t.name:
            out.append(Difference(f"{version}:{where}{fid}:{t.name}:renamed", label, f"ours: `{o.name}`"))
        if o.type != t.type:
            same = " (the same on the wire)" if wire(o.type) == wire(t.type) else ""
            detail = f"ours `{show(o.type)}`, {version} `{show(t.type)}`{same}"
            out.append(Difference(f"{version}:{where}{fid}:{t.name}:type", label, detail))
        if o.required != t.required:
            out.append(Difference(f"{version}:{where}{fid}:{t.name}:requiredness", label, f"ours {_req(o)}, {version} {_req(t)}"))
    return out


def _mentions(t: tuple) -> set[str]:
    """The struct and enum names a type refers to, containers included."""
    if t[0] in ("struct", "enum"):
        return {t[1]}
    return set().union(*(_mentions(x) for x in t[1:] if isinstance(x, tuple)))


def users(contract: Contract, type_name: str) -> list[str]:
    """Where a struct or enum is used: `Struct.field` and `method` names (a new type matters only through these)."""
    found = [f"{name}.{f.name}" for name, s in contract.structs.items() for f in s.fields.values() if type_name in _mentions(f.type)]
    for name, m in contract.services[SERVICE].items():
        types = [f.type for f in (*m.args.values(), *m.throws.values())] + ([m.returns] if m.returns else [])
        if any(type_name in _mentions(t) for t in types):
            found.append(f"{name}()")
    return sorted(found)


def _used_by(contract: Contract, type_name: str) -> str:
    found = users(contract, type_name)
    shown = ", ".join(f"`{u}`" for u in found[:6]) + (f" and {len(found) - 6} more" if len(found) > 6 else "")
    return f"used by {shown}" if found else "used by nothing"


def _structs(version: str, ours: Contract, theirs: Contract) -> list[Difference]:
    out = []
    for name in sorted(ours.structs.keys() | theirs.structs.keys()):
        o, t = ours.structs.get(name), theirs.structs.get(name)
        if o is None:
            detail = f"{t.kind}, {len(t.fields)} field(s); {_used_by(theirs, name)}"
            out.append(Difference(f"{version}:struct {name}:added", "struct", detail))
        elif t is None:
            out.append(Difference(f"{version}:struct {name}:removed", "struct", f"ours: {o.kind}, {len(o.fields)} field(s)"))
        else:
            if o.kind != t.kind:
                out.append(Difference(f"{version}:struct {name}:kind", "struct", f"ours {o.kind}, {version} {t.kind}"))
            out += _fields(version, f"{name}.", "field", o.fields, t.fields)
    return out


def _enums(version: str, ours: Contract, theirs: Contract) -> list[Difference]:
    out = []
    for name in sorted(ours.enums.keys() | theirs.enums.keys()):
        o, t = ours.enums.get(name), theirs.enums.get(name)
        if o is None:
            out.append(Difference(f"{version}:enum {name}:added", "enum", f"{', '.join(t)}; {_used_by(theirs, name)}"))
        elif t is None:
            out.append(Difference(f"{version}:enum {name}:removed", "enum", "ours: " + ", ".join(o)))
        else:
            for value in sorted(o.keys() | t.keys()):
                if value not in o:
                    out.append(Difference(f"{version}:enum {name}.{value}:added", "enum value", f"= {t[value]}"))
                elif value not in t:
                    out.append(Difference(f"{version}:enum {name}.{value}:removed", "enum value", f"ours: = {o[value]}"))
                elif o[value] != t[value]:
                    out.append(Difference(f"{version}:enum {name}.{value}:number", "enum value", f"ours {o[value]}, {version} {t[value]}"))
    return out


def signature(m: Method) -> str:
    args = ", ".join(f"{fid}: {show(f.type)} {f.name}" for fid, f in sorted(m.args.items()))
    returns = "void" if m.returns is None else show(m.returns)
    throws = f" throws {', '.join(sorted(f.type[1] for f in m.throws.values()))}" if m.throws else ""
    return f"`{'oneway ' if m.oneway else ''}{returns} {m.name}({args}){throws}`"


def _methods(version: str, ours: Contract, theirs: Contract) -> list[Difference]:
    out = []
    mine, other = ours.services[SERVICE], theirs.services[SERVICE]
    for name in sorted(mine.keys() | other.keys()):
        o, t = mine.get(name), other.get(name)
        if o is None:
            out.append(Difference(f"{version}:method {name}:added", "method", signature(t)))
            continue
        if t is None:
            out.append(Difference(f"{version}:method {name}:removed", "method", "ours: " + signature(o)))
            continue
        out += _fields(version, f"method {name}.arg ", "argument", o.args, t.args)
        if o.returns != t.returns:
            shown = ["void" if r is None else show(r) for r in (o.returns, t.returns)]
            out.append(Difference(f"{version}:method {name}:returns", "return", f"ours `{shown[0]}`, {version} `{shown[1]}`"))
        out += _fields(version, f"method {name}.throws ", "exception", o.throws, t.throws)
        if o.oneway != t.oneway:
            out.append(Difference(f"{version}:method {name}:oneway", "method", f"ours oneway={o.oneway}, {version} oneway={t.oneway}"))
    return out


def diff(version: str, ours: Contract, theirs: Contract) -> list[Difference]:
    """Every difference between our IDL and `theirs`, sorted by key."""
    found = _structs(version, ours, theirs) + _enums(version, ours, theirs) + _methods(version, ours, theirs)
    keys = Counter(d.key for d in found)
    assert all(n == 1 for n in keys.values()), f"duplicate difference keys: {[k for k, n in keys.items() if n > 1]}"
    return sorted(found, key=lambda d: d.key)


# ----------------------------------------------------------------------- classification


class ReasonsError(ValueError):
    """version_diff_reasons.yaml is malformed."""


def pattern_regex(pattern: str) -> re.Pattern:
    """`*` matches any run of characters, `{a,b}` either alternative; the rest is literal."""
    out = []
    for token in re.split(r"(\*|\{[^{}]*\})", pattern):
        if token == "*":
            out.append(".*")
        elif token.startswith("{") and token.endswith("}"):
            out.append("(?:" + "|".join(re.escape(alt) for alt in token[1:-1].split(",")) + ")")
        else:
            out.append(re.escape(token))
    return re.compile("".join(out))


@dataclass(frozen=True)
class Reason:
    pattern: str  # a difference key with `*` and `{a,b}`
    verdict: str  # covered | irrelevant | todo
    text: str

    def matches(self, key: str) -> bool:
        return pattern_regex(self.pattern).fullmatch(key) is not None


def load_reasons(text: str) -> list[Reason]:
    data = yaml.safe_load(text) or {}
    if not isinstance(data, dict):
        raise ReasonsError("the file must be a mapping of key pattern -> {covered|irrelevant|todo: text}")
    reasons = []
    for pattern, entry in data.items():
        if not isinstance(entry, dict) or len(entry) != 1:
            raise ReasonsError(f"{pattern!r}: needs exactly one of {', '.join(VERDICTS)}")
        ((verdict, why),) = entry.items()
        if verdict not in VERDICTS or not isinstance(why, str) or not why.strip():
            raise ReasonsError(f"{pattern!r}: {verdict!r} must be one of {', '.join(VERDICTS)}, with a non-empty reason")
        reasons.append(Reason(str(pattern), verdict, " ".join(why.split())))
    return reasons


@dataclass
class Classification:
    verdicts: dict[str, Reason] = field(default_factory=dict)  # difference key -> its one entry
    unclassified: list[str] = field(default_factory=list)
    ambiguous: dict[str, list[str]] = field(default_factory=dict)  # difference key -> the patterns matching it
    stale: list[str] = field(default_factory=list)  # patterns matching no difference

    @property
    def problems(self) -> list[str]:
        return (
            [f"unclassified: {k}" for k in self.unclassified]
            + [f"matched by several entries: {k} <- {', '.join(p)}" for k, p in self.ambiguous.items()]
            + [f"stale entry (matches no difference): {p}" for p in self.stale]
        )


def classify(differences: list[Difference], reasons: list[Reason]) -> Classification:
    result = Classification()
    used: set[str] = set()
    for d in differences:
        matching = [r for r in reasons if r.matches(d.key)]
        used |= {r.pattern for r in matching}
        if not matching:
            result.unclassified.append(d.key)
        elif len(matching) > 1:
            result.ambiguous[d.key] = [r.pattern for r in matching]
        else:
            result.verdicts[d.key] = matching[0]
    result.stale = [r.pattern for r in reasons if r.pattern not in used]
    return result


# --------------------------------------------------------------------------- report


@dataclass
class VersionReport:
    version: str  # "4.0"
    label: str  # "Hive 4.0.1"
    jar_names: str
    differences: list[Difference]


def collect(workdir: Path) -> list[VersionReport]:
    """Fetch (once) and dump every release in jars.RELEASES; raises JarsUnavailable / DumpFailed."""
    ours = our_contract()
    reports = []
    for version in jars.RELEASES:
        found = jars.maven_jars(version)
        dump_dir = workdir / version
        dump_dir.mkdir(parents=True, exist_ok=True)
        theirs = jar_contract(jars.dump(found, dump_dir))
        reports.append(VersionReport(version, found.label, found.names, diff(version, ours, theirs)))
    return reports


AREAS = ("method", "argument", "return", "exception", "struct", "field", "enum", "enum value")


def _row(*cells: str) -> str:
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def render(reports: list[VersionReport], classification: Classification) -> str:
    def verdict(key: str) -> str:
        r = classification.verdicts.get(key)
        return r.verdict if r else "**unclassified**"

    out = [
        "# Hive 3.1 and 4.x against hmsproxy's IDL",
        "",
        f"Generated by `{REGENERATE}`; do not edit. `tests/contract/test_version_diff.py` fails when",
        "this file is out of date, when a difference has no entry in",
        "`tests/contract/version_diff_reasons.yaml`, or when an entry there matches nothing.",
        "",
        "hmsproxy's IDL (`hmsproxy/protocol/thrift/hive_metastore.thrift`) matches Hive 2.3 exactly",
        "(`tests/contract/test_idl_contract.py`). Below is every difference from the generated Thrift",
        "classes of newer metastores: *added* means the version has it and our IDL does not (the proxy",
        "drops such a field when it decodes a message and answers *Invalid method name* for such a",
        "method), *removed* means our IDL has it and the version does not. Each difference is",
        "`covered` (hmsproxy handles it), `irrelevant` (with the reason it does not matter) or `todo`",
        "(what would be needed).",
        "",
        "## Summary",
        "",
        _row("version", "jars", "differences", *VERDICTS),
        _row(*["---"] * (3 + len(VERDICTS))),
    ]
    for rep in reports:
        counts = Counter(verdict(d.key) for d in rep.differences)
        out.append(_row(rep.label, f"`{rep.jar_names}`", str(len(rep.differences)), *(str(counts[v]) for v in VERDICTS)))
    for rep in reports:
        out += _render_version(rep, classification, verdict)
    return "\n".join(out) + "\n"


def _render_version(rep: VersionReport, classification: Classification, verdict) -> list[str]:
    by_area = {a: [d for d in rep.differences if d.area == a] for a in AREAS}
    out = ["", f"## {rep.label}", "", _row("difference", "count", *VERDICTS), _row(*["---"] * (2 + len(VERDICTS)))]
    for area, diffs in by_area.items():
        counts = Counter(verdict(d.key) for d in diffs)
        out.append(_row(area, str(len(diffs)), *(str(counts[v]) for v in VERDICTS)))
    # The reasons once each, then every difference pointing at its entry.
    uses = Counter(classification.verdicts[d.key].pattern for d in rep.differences if d.key in classification.verdicts)
    reasons = {r.pattern: r for d in rep.differences if (r := classification.verdicts.get(d.key))}
    out += ["", f"### {rep.label}: reasons", "", _row("entry", "differences", "verdict", "reason"), _row("---", "---", "---", "---")]
    for pattern in sorted(reasons, key=lambda p: (VERDICTS.index(reasons[p].verdict), p)):
        r = reasons[pattern]
        out.append(_row(f"`{pattern}`", str(uses[pattern]), r.verdict, r.text))
    for area, diffs in by_area.items():
        if not diffs:
            continue
        out += ["", f"### {rep.label}: {area} differences ({len(diffs)})", "", _row("key", "detail", "verdict", "entry")]
        out.append(_row("---", "---", "---", "---"))
        for d in diffs:
            r = classification.verdicts.get(d.key)
            out.append(_row(f"`{d.key}`", d.detail, verdict(d.key), f"`{r.pattern}`" if r else ""))
    return out


@dataclass
class Built:
    reports: list[VersionReport]
    classification: Classification
    text: str  # the markdown of docs/hive-versions-idl.md


def build(workdir: Path) -> Built:
    reports = collect(workdir)
    classification = classify([d for rep in reports for d in rep.differences], load_reasons(REASONS_FILE.read_text()))
    return Built(reports, classification, render(reports, classification))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.contract.version_diff", description=__doc__.splitlines()[0])
    parser.add_argument("--write", metavar="FILE", type=Path, help="write the report here (default: print it)")
    args = parser.parse_args(argv)
    try:
        with tempfile.TemporaryDirectory() as workdir:
            built = build(Path(workdir))
    except (jars.JarsUnavailable, jars.DumpFailed, ReasonsError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.write:
        args.write.write_text(built.text)
    else:
        sys.stdout.write(built.text)
    # Written even when entries are missing: the **unclassified** rows show what to add.
    for problem in built.classification.problems:
        print(f"{REASONS_FILE.name}: {problem}", file=sys.stderr)
    return 1 if built.classification.problems else 0


if __name__ == "__main__":
    sys.exit(main())

"""Our IDL against Hive 3.1 and 4.x: every difference classified, and docs/hive-versions-idl.md current.

The jars come from Maven Central (tests/contract/jars.py, cached). Without them the
jar-based tests skip with the reason, except in CI (CI=true), where they fail.
"""

from __future__ import annotations

import os

import pytest

from tests.contract import jars
from tests.contract.model import Contract, Field, Method, Struct
from tests.contract.version_diff import (
    DOC_FILE,
    REASONS_FILE,
    REGENERATE,
    Difference,
    ReasonsError,
    build,
    classify,
    diff,
    load_reasons,
)

# ------------------------------------------------------------------ the diff itself, on small contracts

STR, I32 = ("string", False), ("i32",)


def _contract(structs=(), enums=None, methods=()) -> Contract:
    return Contract({s.name: s for s in structs}, enums or {}, {"ThriftHiveMetastore": {m.name: m for m in methods}})


def _method(name, args=None, returns=None, throws=None, oneway=False) -> Method:
    return Method(name, args or {}, returns, throws or {}, oneway)


def test_diff_names_every_kind_of_change():
    ours = _contract(
        structs=[
            Struct("T", "struct", {1: Field("a", STR, True), 2: Field("b", STR, False), 3: Field("c", STR, False)}),
            Struct("Gone", "struct", {}),
            Struct("E", "struct", {}),
        ],
        enums={"Color": {"RED": 1, "BLUE": 2}, "Old": {"X": 1}},
        methods=[
            _method("kept", {1: Field("db", STR, False)}, returns=STR, throws={1: Field("o1", ("struct", "E"), False)}),
            _method("dropped"),
        ],
    )
    theirs = _contract(
        structs=[
            Struct(
                "T",
                "struct",
                {
                    1: Field("a", STR, False),
                    2: Field("bee", STR, False),
                    3: Field("c", I32, False),
                    4: Field("d", ("list", ("struct", "New")), False),
                },
            ),
            Struct("New", "struct", {1: Field("t", STR, False)}),
            Struct("E", "exception", {}),
        ],
        enums={"Color": {"RED": 1, "BLUE": 3, "GREEN": 4}},
        methods=[_method("kept", {1: Field("db", STR, False), 2: Field("cat", STR, False)}, returns=I32), _method("fresh")],
    )
    found = {d.key: d for d in diff("9.9", ours, theirs)}
    assert set(found) == {
        "9.9:T.1:a:requiredness",
        "9.9:T.2:bee:renamed",
        "9.9:T.3:c:type",
        "9.9:T.4:d:added",
        "9.9:struct New:added",
        "9.9:struct Gone:removed",
        "9.9:struct E:kind",
        "9.9:enum Old:removed",
        "9.9:enum Color.BLUE:number",
        "9.9:enum Color.GREEN:added",
        "9.9:method kept.arg 2:cat:added",
        "9.9:method kept:returns",
        "9.9:method kept.throws 1:o1:removed",
        "9.9:method dropped:removed",
        "9.9:method fresh:added",
    }
    assert "used by `T.d`" in found["9.9:struct New:added"].detail  # where a new type is used


def test_string_and_binary_differ_but_are_marked_wire_equal():
    ours = _contract(structs=[Struct("S", "struct", {1: Field("v", STR, False)})])
    theirs = _contract(structs=[Struct("S", "struct", {1: Field("v", ("string", True), False)})])
    (only,) = diff("9.9", ours, theirs)
    assert only.key == "9.9:S.1:v:type" and "the same on the wire" in only.detail


# ------------------------------------------------------------------ classification


def _diffs(*keys: str) -> list[Difference]:
    return [Difference(k, "field", "") for k in keys]


def test_patterns_take_stars_and_alternatives_and_nothing_else():
    reasons = load_reasons(
        """
"*:Table.*:catName:added": {todo: add it}
"4.0:method {get_table,get_tables}:removed": {covered: translated}
"3.1:A.1:x:type": {irrelevant: same wire}
"""
    )
    result = classify(
        _diffs("3.1:Table.17:catName:added", "4.0:method get_table:removed", "4.0:method get_tables:removed", "3.1:A.1:x:type"), reasons
    )
    assert not result.problems
    assert {k: r.verdict for k, r in result.verdicts.items()}["4.0:method get_table:removed"] == "covered"
    # `.` is literal and alternatives match whole words only.
    assert classify(_diffs("3.1xA.1:x:type", "4.0:method get_tablez:removed"), reasons).unclassified == [
        "3.1xA.1:x:type",
        "4.0:method get_tablez:removed",
    ]


def test_classification_reports_unclassified_ambiguous_and_stale():
    reasons = load_reasons(
        """
"*:T.*": {todo: all of T}
"4.0:T.1:a:added": {irrelevant: this one}
"4.0:Nothing.*": {todo: matches nothing}
"""
    )
    result = classify(_diffs("4.0:T.1:a:added", "4.0:T.2:b:added", "4.0:U.1:c:added"), reasons)
    assert result.unclassified == ["4.0:U.1:c:added"]
    assert result.ambiguous == {"4.0:T.1:a:added": ["*:T.*", "4.0:T.1:a:added"]}
    assert result.stale == ["4.0:Nothing.*"]
    assert result.verdicts["4.0:T.2:b:added"].text == "all of T"


@pytest.mark.parametrize(
    "text",
    [
        '"4.0:T.1:a:added": {maybe: unknown verdict}',
        '"4.0:T.1:a:added": {todo: ""}',
        '"4.0:T.1:a:added": {todo: x, covered: y}',
        '"4.0:T.1:a:added": just text',
        "- a list",
    ],
)
def test_malformed_reasons_are_refused(text):
    with pytest.raises(ReasonsError):
        load_reasons(text)


def test_reasons_file_is_well_formed():
    assert load_reasons(REASONS_FILE.read_text())


# ------------------------------------------------------------------ against the real jars


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    try:
        return build(tmp_path_factory.mktemp("version-diff"))
    except jars.JarsUnavailable as e:
        if os.environ.get("CI", "").lower() in ("true", "1"):
            pytest.fail(f"Hive 3.1/4.x jars unavailable in CI: {e}", pytrace=False)
        pytest.skip(f"Hive 3.1/4.x jars unavailable (no Maven or network?): {e}")
    except jars.DumpFailed as e:
        pytest.fail(str(e), pytrace=False)


def test_the_dumps_are_real(built):
    """Guards the rest: an empty or broken dump must not pass as 'nothing to classify'."""
    keys = {d.key for rep in built.reports for d in rep.differences}
    assert [rep.version for rep in built.reports] == list(jars.RELEASES)
    # Known facts of each release: Hive 3 put Table.catName at 17 (ours: catNameHive3), Hive 4 removed get_table.
    assert {"3.1:Table.17:catName:renamed", "4.0:Table.17:catName:renamed", "4.0:method get_table:removed"} <= keys
    assert "3.1:method get_table:removed" not in keys
    assert all(len(rep.differences) > 100 for rep in built.reports)


def test_every_difference_has_exactly_one_entry(built):
    c = built.classification
    problems = [p for p in c.problems if not p.startswith("stale")]
    assert not problems, (
        f"{len(problems)} difference(s) need exactly one entry in {REASONS_FILE.name} "
        "(run `" + REGENERATE + "` to see them as **unclassified** rows):\n  " + "\n  ".join(problems)
    )


def test_no_stale_entries(built):
    stale = built.classification.stale
    assert not stale, f"entries of {REASONS_FILE.name} that match no difference (remove or fix them): {stale}"


def test_the_doc_is_current(built):
    current = DOC_FILE.read_text() if DOC_FILE.exists() else ""
    if current != built.text:
        # The first differing line, not pytest's diff of two 100 kB strings.
        pairs = zip(current.splitlines() + [""], built.text.splitlines() + [""])
        line, (old, new) = next((i, p) for i, p in enumerate(pairs, 1) if p[0] != p[1])
        pytest.fail(
            f"docs/{DOC_FILE.name} is out of date; regenerate it with `{REGENERATE}`\n"
            f"first difference at line {line}:\n  checked in: {old}\n  generated:  {new}",
            pytrace=False,
        )

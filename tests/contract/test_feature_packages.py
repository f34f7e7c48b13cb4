"""Every feature package has the same rooms (docs/architecture.md, "A feature package").

What a feature declares says which rooms it must have: a config section is made in config.py,
statements in statements.py (grammar ddl.lark beside it) with a `Runners` class in runners.py,
a store schema in store.py with the snapshot in snapshot.py; drop protection lives in
protection.py. Its __init__ names the feature class, jobs and client helpers, which must exist,
and every job or client helper that imports the package is named there.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from hmsproxy.pipeline.platform import Feature
from tests.contract.import_graph import ROOT, imports_of, module_name

FEATURES = ROOT / "features"
PACKAGES = sorted(p.name for p in FEATURES.iterdir() if (p / "__init__.py").is_file())


def _package(name: str):
    return importlib.import_module(f"hmsproxy.features.{name}")


def _feature_class(name: str) -> type[Feature]:
    module, _, cls = _package(name).FEATURE.partition(":")
    return getattr(importlib.import_module(module), cls)


def _assigned(path: Path) -> set[str]:
    """Names a module binds itself at its top level (assignments, classes, functions; not imports)."""
    names: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.ClassDef | ast.FunctionDef):
            names.add(node.name)
    return names


def _classes(path: Path) -> set[str]:
    return {node.name for node in ast.parse(path.read_text()).body if isinstance(node, ast.ClassDef)}


def home(directory: Path, obj: object, package: str | None = None) -> str | None:
    """The module of the package in `directory` that makes `obj` (binds it, not imports it)."""
    package = package or module_name(directory / "__init__.py")
    for path in sorted(directory.glob("*.py")):
        module = importlib.import_module(f"{package}.{path.stem}" if path.stem != "__init__" else package)
        if any(getattr(module, n, None) is obj for n in _assigned(path)):
            return path.name
    return None


def classes_named(directory: Path, name: str) -> list[str]:
    """The modules of the package in `directory` that define a class called `name`."""
    return [p.name for p in sorted(directory.glob("*.py")) if name in _classes(p)]


#: Features whose store rows are read per call, never as a snapshot (why, for each).
READ_PER_CALL = {
    "transactions": "one binding row per transaction, asked by id (bindings.py keeps the ones seen)",
    "notifications": "the merged log is read a page at a time per call, and other proxies append to it",
    "tokens": "one token row per login, renewal or cancellation, asked by sequence number (other proxies write them)",
}


def test_the_four_feature_packages_are_checked():
    assert {"remotes", "skew", "dependent", "indexes"} <= set(PACKAGES)


@pytest.mark.parametrize("name", PACKAGES)
def test_the_feature_class_is_in_feature_py(name):
    module, _, _ = _package(name).FEATURE.partition(":")
    assert module == f"hmsproxy.features.{name}.feature"
    assert issubclass(_feature_class(name), Feature)
    assert classes_named(FEATURES / name, _feature_class(name).__name__) == ["feature.py"]


@pytest.mark.parametrize("name", PACKAGES)
def test_what_the_feature_declares_is_in_its_standard_room(name):
    cls, here = _feature_class(name), FEATURES / name
    if cls.config_section is not None:
        assert home(here, cls.config_section) == "config.py"
    if cls.statements is not None:
        assert home(here, cls.statements) == "statements.py"
        assert cls.statements.grammar == (here / "ddl.lark").read_text()
        assert classes_named(here, "Runners") == ["runners.py"]
        assert f"hmsproxy.features.{name}.runners" in imports_of(here / "feature.py")
    if cls.store_schema is not None:
        assert home(here, cls.store_schema) == "store.py"
    if cls.store_schema is not None and name not in READ_PER_CALL:
        assert "hmsproxy.store.snapshot" in imports_of(here / "snapshot.py"), "the snapshot is refreshed by generation (GenerationCache)"
    if (here / "protection.py").exists() or classes_named(here, "Protection"):
        assert classes_named(here, "Protection") == ["protection.py"]


@pytest.mark.parametrize("name", PACKAGES)
def test_its_jobs_and_client_helpers_are_named_in_its_init(name):
    package = _package(name)
    named = {"jobs": set(package.JOBS), "clients": set(package.CLIENTS)}
    for side, modules in named.items():
        for module in modules:
            assert module.startswith(f"hmsproxy.{side}."), module
            assert (ROOT.parent / (module.replace(".", "/") + ".py")).is_file(), f"{name} names {module}, which does not exist"
        importers = {
            module_name(path)
            for path in (ROOT / side).rglob("*.py")
            if any(m.startswith(f"hmsproxy.features.{name}") for m in imports_of(path))
        }
        assert importers <= modules, f"hmsproxy.features.{name}.__init__ does not name {sorted(importers - modules)}"


def test_the_checker_finds_a_declaration_made_outside_its_room(tmp_path, monkeypatch):
    """`home` tells where an object is made, not where it is imported: a section made in lineage.py
    and imported by feature.py and config.py is found in lineage.py, so the room check fails."""
    package = tmp_path / "misplaced_feature"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "lineage.py").write_text("SECTION = object()\n")
    (package / "config.py").write_text("from misplaced_feature.lineage import SECTION\n")
    (package / "feature.py").write_text("from misplaced_feature.lineage import SECTION\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    section = importlib.import_module("misplaced_feature.lineage").SECTION
    assert home(package, section, "misplaced_feature") == "lineage.py"


def _literal_note_keys(tree: ast.AST) -> list[int]:
    """Lines where a string literal is used as a `….notes` key: notes[...], .get/.pop/.setdefault(...), `in`."""
    lines = []
    for node in ast.walk(tree):
        key = None
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "notes":
            key = node.slice
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            owner = node.func.value
            if isinstance(owner, ast.Attribute) and owner.attr == "notes" and node.func.attr in ("get", "pop", "setdefault"):
                key = node.args[0]
        elif isinstance(node, ast.Compare) and isinstance(node.comparators[0], ast.Attribute) and node.comparators[0].attr == "notes":
            key = node.left
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            lines.append(node.lineno)
    return lines


def test_call_note_keys_are_constants_of_the_feature_that_owns_them():
    """A free string key can collide with another feature's or drift between the hook that writes
    it and the one that reads it: each note key is a named constant (or the feature's name)."""
    found = {}
    for path in ROOT.rglob("*.py"):
        lines = _literal_note_keys(ast.parse(path.read_text()))
        if lines:
            found[str(path.relative_to(ROOT))] = lines
    assert not found, f"string literals used as call.notes keys: {found}"


def test_the_note_key_scan_finds_literal_keys():
    tree = ast.parse('call.notes["x"] = 1\ncall.notes.get("y")\n"z" in call.notes\ncall.notes[NOTE] = 2\n')
    assert _literal_note_keys(tree) == [1, 2, 3]


@pytest.mark.parametrize("package", PACKAGES)
def test_feature_parts_do_not_reach_into_the_statement_or_protection_rooms(package):
    """Shared vocabulary lives in model.py (or the module it is about), not in runners.py or
    protection.py: only the feature class composes those rooms."""
    rooms = {f"hmsproxy.features.{package}.{room}" for room in ("runners", "protection")}
    for path in sorted((FEATURES / package).glob("*.py")):
        if path.name == "feature.py" or module_name(path) in rooms:
            continue
        reached = rooms & imports_of(path)
        assert not reached, f"{path.relative_to(ROOT)} imports {sorted(reached)}"

"""The layout keeps its promises: packages import each other one way only, nothing below the
composition root imports it, the machinery knows no feature, features meet only through seams."""

from __future__ import annotations

from pathlib import Path

from tests.contract.import_graph import ROOT, cycles, importers_of, imports_of, package_graph

#: The modules that may import the composition root: the command line and the dev federation.
MAY_IMPORT_APP = {"hmsproxy.app", "hmsproxy.cli"}
MAY_IMPORT_APP_UNDER = ("hmsproxy.dev.",)
#: Modules that stay loose in hmsproxy/ (everything else lives in a package by side or job).
LOOSE = {"__init__.py", "__main__.py", "app.py", "cli.py"}
#: The proxy's machinery, by side: it runs features through the platform and imports none.
MACHINERY = ("protocol", "downstream", "pipeline", "upstream", "routing", "store")


def test_packages_import_each_other_one_way_only():
    graph = package_graph()
    assert not cycles(graph), "\n".join(
        f"{a} -> {b}: {sorted(graph[a][b])}" for group in cycles(graph) for a in group for b in group if b in graph.get(a, {})
    )


def test_nothing_below_the_composition_root_imports_it():
    offenders = [m for m in importers_of("hmsproxy.app") if m not in MAY_IMPORT_APP and not m.startswith(MAY_IMPORT_APP_UNDER)]
    assert not offenders, f"these import hmsproxy.app (give them what they need instead): {offenders}"


def test_only_the_entry_points_stay_loose():
    loose = {p.name for p in ROOT.glob("*.py")}
    assert loose <= LOOSE, f"modules outside a package: {sorted(loose - LOOSE)}"


def test_the_machinery_imports_no_feature():
    for package in MACHINERY:
        for path in (ROOT / package).rglob("*.py"):
            features = {m for m in imports_of(path) if m.startswith("hmsproxy.features")}
            assert not features, f"{path.relative_to(ROOT)} imports {sorted(features)}"


def test_no_feature_probes_attributes_or_session_internals():
    for path in ROOT.rglob("*.py"):
        text = path.read_text()
        assert "__dict__" not in text, path
        assert "getattr(handler" not in text and 'getattr(self, "remotes"' not in text, path


def test_features_use_other_features_only_through_the_registry():
    """A feature package imports the platform, the core and itself, never another feature's modules."""
    features = ROOT / "features"
    roots = {p.stem if p.is_file() else p.name for p in features.iterdir() if p.name not in ("__init__.py", "__pycache__")}
    # The virtual catalog's records, table identities (identity.py), the partitions a drop call
    # names (dropped_partitions.py), column-list comparison (columns.py) and the parameters that mark
    # a remote link (remote_marks.py) are for every feature.
    shared = {"catalog", "identity", "dropped_partitions", "columns", "remote_marks"}
    for path in features.rglob("*.py"):
        if path.parent == features and path.name == "__init__.py":
            continue  # the package composes the shipped features' grammar (for clients)
        own = path.relative_to(features).parts[0].removesuffix(".py")
        for module in imports_of(path):
            parts = module.split(".")
            if parts[:2] == ["hmsproxy", "features"] and len(parts) > 2:
                other = parts[2]
                assert other in shared or other == own or other not in roots, f"{path} imports {module}"


def test_the_clients_grammar_is_the_installed_features():
    """features.builtin_grammar (what clients parse scripts with) has the statements of app.FEATURES."""
    from hmsproxy.app import FEATURES
    from hmsproxy.features import builtin_grammar

    assert builtin_grammar().sets == tuple(f.statements for f in FEATURES if f.statements is not None)


def test_telling_statements_apart_without_the_grammar_asks_what_the_grammar_would():
    """features.is_hmsproxy_statement reads the features' starts.py alone (no grammar loaded): the same
    regex as the composed grammar's `is_statement`, so `hmsproxy sql` refuses exactly what it can't run."""
    from hmsproxy.ddl.starts import starts_regex
    from hmsproxy.features import _builtin_starts, builtin_grammar

    assert _builtin_starts().pattern == starts_regex(p for s in builtin_grammar().sets for p in s.starts).pattern


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "hmsproxy"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_the_checker_finds_packages_that_import_each_other(tmp_path):
    root = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "app.py": "from hmsproxy.pipeline import handler\n",
            "pipeline/__init__.py": "",
            "pipeline/handler.py": "from hmsproxy.upstream.session import Session\n",
            "upstream/__init__.py": "",
            # a breach: the upstream side reaches back into the pipeline, inside a function
            "upstream/session.py": "def f():\n    from hmsproxy.pipeline.handler import Handler\n",
            "routing/__init__.py": "",
            "routing/router.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from hmsproxy.upstream import session\n",
        },
    )
    graph = package_graph(root)
    assert cycles(graph) == [["pipeline", "upstream"]]
    assert graph["upstream"]["pipeline"] == {"hmsproxy.upstream.session"}
    assert "routing" not in graph  # imports for annotations only do not count


def test_the_checker_finds_who_imports_the_composition_root(tmp_path):
    root = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "app.py": "from hmsproxy.config import loading\n",
            "cli.py": "from hmsproxy.app import build_handler\n",
            "config/__init__.py": "",
            "config/loading.py": "def sections():\n    from hmsproxy import app\n    return app.FEATURES\n",
        },
    )
    assert importers_of("hmsproxy.app", root) == ["hmsproxy.cli", "hmsproxy.config.loading"]
    assert cycles(package_graph(root)) == [["app", "config"]]


def test_test_modules_have_names_of_their_own():
    """pytest imports test modules by base name (the test folders have no __init__.py): two alike
    stop the whole run at collection."""
    tests = ROOT.parent / "tests"
    names = [p.name for p in tests.rglob("test_*.py")]
    assert sorted({n for n in names if names.count(n) > 1}) == []

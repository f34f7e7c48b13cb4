"""The layout keeps its promises: the core and the store know no feature; features meet only through seams."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "hmsproxy"
CORE = [
    "call.py",
    "handler.py",
    "session.py",
    "backends.py",
    "wire.py",
    "errors.py",
    "server.py",
    "idl.py",
    "internal_client.py",
    "breaker.py",
    "codec.py",
    "translations.py",
]
#: What the core may import from features/: the platform itself.
PLATFORM = {"hmsproxy.features.base"}


def imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


@pytest.mark.parametrize("module", CORE + [f"store/{p.name}" for p in (ROOT / "store").glob("*.py")])
def test_the_core_and_the_store_import_no_feature(module):
    features = {m for m in imports(ROOT / module) if m.startswith("hmsproxy.features")}
    assert features <= PLATFORM, f"{module} imports {sorted(features - PLATFORM)}"


def test_no_feature_probes_attributes_or_session_internals():
    for path in ROOT.rglob("*.py"):
        text = path.read_text()
        assert "__dict__" not in text, path
        assert "getattr(handler" not in text and 'getattr(self, "remotes"' not in text, path


def test_features_use_other_features_only_through_the_registry():
    """A feature package imports the platform, the core and itself, never another feature's modules."""
    feature_roots = {
        p.stem if p.is_file() else p.name for p in (ROOT / "features").iterdir() if p.name not in ("__init__.py", "base.py", "__pycache__")
    }
    # The platform, the virtual catalog's records, table identities (identity.py) and the partitions a
    # drop call names (dropped_partitions.py) are for every feature.
    shared = {"base", "catalog", "identity", "dropped_partitions"}
    for path in (ROOT / "features").rglob("*.py"):
        own = path.relative_to(ROOT / "features").parts[0].removesuffix(".py")
        for module in imports(path):
            parts = module.split(".")
            if parts[:2] == ["hmsproxy", "features"] and len(parts) > 2:
                other = parts[2]
                assert other in shared or other == own or other not in feature_roots, f"{path} imports {module}"

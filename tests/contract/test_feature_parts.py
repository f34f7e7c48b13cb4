"""A feature's parts get what they need passed in, never the whole feature (#38).

Inside a feature package only feature.py knows the Feature class: it builds each part with the
narrow things that part uses (its records room, a client_for, the router, an emitter, ...), the
way remotes' `Runners(repo, refresh, record)` is built. A part that imports feature.py, even
under TYPE_CHECKING for an annotation, or keeps the feature as `self.feature`, can reach
everything the feature holds, and then everything it touches has to be read to change one part.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.contract.import_graph import ROOT, module_name

FEATURES = ROOT / "features"
PACKAGES = sorted(p for p in FEATURES.iterdir() if (p / "__init__.py").is_file())
PARTS = sorted(path for package in PACKAGES for path in package.glob("*.py") if path.name not in ("feature.py", "__init__.py"))


def _imported(node: ast.Import | ast.ImportFrom, package: str) -> list[str]:
    """The modules an import statement may load: `from a.b import c` may load a.b or a.b.c."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if node.level:  # relative: against the importing module's package
        parts = package.split(".")
        base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
    else:
        base = node.module or ""
    return [base, *(f"{base}.{a.name}" for a in node.names)]


def offences(source: str, module: str) -> list[str]:
    """What in part `module`'s `source` reaches the whole feature: an import of any feature
    package's feature module (at run time or under TYPE_CHECKING alike), or `self.feature`."""
    package = module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for name in _imported(node, package):
                parts = name.split(".")
                if len(parts) == 4 and parts[:2] == ["hmsproxy", "features"] and parts[3] == "feature":
                    found.append(f"line {node.lineno}: imports {name}")
        elif isinstance(node, ast.Attribute) and node.attr == "feature":
            if isinstance(node.value, ast.Name) and node.value.id == "self":
                found.append(f"line {node.lineno}: self.feature")
    return found


def test_the_parts_are_found():
    names = {f"{p.parent.name}/{p.name}" for p in PARTS}
    assert {"indexes/calls.py", "remotes/routes.py", "dependent/runners.py", "transactions/write_ids.py", "skew/protection.py"} <= names
    assert not any(n.endswith(("/feature.py", "/__init__.py")) for n in names)


@pytest.mark.parametrize("path", PARTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_feature_part_does_not_reach_the_feature(path: Path):
    found = offences(path.read_text(), module_name(path))
    assert not found, f"{path.relative_to(ROOT)}: {found}; pass the part what it uses (docs/architecture.md, 'A feature package')"


@pytest.mark.parametrize(
    "source",
    [
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from hmsproxy.features.indexes.feature import Indexes\n",
        "from hmsproxy.features.indexes.feature import Indexes\n",
        "from .feature import Indexes\n",
        "from hmsproxy.features.indexes import feature\n",
        "from . import feature\n",
        "import hmsproxy.features.remotes.feature\n",
        "def f():\n    from hmsproxy.features.dependent.feature import Dependent\n",
        "class P:\n    def g(self):\n        return self.feature.snapshot()\n",
    ],
)
def test_the_scan_catches_each_way_to_reach_the_feature(source):
    assert offences(source, "hmsproxy.features.indexes.calls")


def test_the_scan_lets_narrow_parts_through():
    source = (
        "from typing import TYPE_CHECKING\n"
        "from hmsproxy.features.indexes.model import IndexRecord\n"
        "from hmsproxy.features import identity\n"
        "if TYPE_CHECKING:\n    from hmsproxy.features.indexes.snapshot import IndexRecords\n"
        "class P:\n    def __init__(self, records, feature_name):\n        self._records = records\n        self.features = 1\n"
    )
    assert offences(source, "hmsproxy.features.indexes.calls") == []

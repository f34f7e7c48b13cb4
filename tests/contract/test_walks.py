"""docs/architecture.md's two walks (a repeated get_table, a first get_partitions_by_filter) are
what the code does: each listed crossing between packages, measured on a proxy in front of a fake
metastore (tests/support/walks.py), on plain sockets and on the framed transport."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.walks import measured

DOC = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"
#: "<!-- walk: NAME -->" then a fenced block: the crossings, one a line (or one line in parentheses: none).
_WALK = re.compile(r"<!-- walk: (?P<name>[^>]+?) -->\n```\n(?P<body>.*?)\n```", re.S)


def _documented() -> dict[str, list[str]]:
    return {
        m["name"]: [line.strip() for line in m["body"].splitlines() if not line.startswith("(")] for m in _WALK.finditer(DOC.read_text())
    }


def test_the_walks_in_the_architecture_doc_are_the_codes():
    documented, found = _documented(), measured()
    assert set(documented) == set(found)
    for name, crossings in found.items():
        assert documented[name] == crossings, name

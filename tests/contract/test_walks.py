"""docs/architecture.md's two walks (a repeated get_table, a first get_partitions_by_filter) are
what the code does: each listed crossing between packages, measured on a proxy in front of a fake
metastore (tests/support/walks.py), on plain sockets and on the framed transport, in a fresh
interpreter: in this one, tests run before may have warmed what a first call fills."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
#: "<!-- walk: NAME -->" then a fenced block: the crossings, one a line (or one line in parentheses: none).
_WALK = re.compile(r"<!-- walk: (?P<name>[^>]+?) -->\n```\n(?P<body>.*?)\n```", re.S)


def _documented() -> dict[str, list[str]]:
    return {
        m["name"]: [line.strip() for line in m["body"].splitlines() if not line.startswith("(")] for m in _WALK.finditer(DOC.read_text())
    }


def _measured() -> dict[str, list[str]]:
    run = [sys.executable, "-m", "tests.support.walks", "--json"]
    done = subprocess.run(run, cwd=ROOT, capture_output=True, text=True, timeout=120, check=True)
    return json.loads(done.stdout)


def test_the_walks_in_the_architecture_doc_are_the_codes():
    documented, found = _documented(), _measured()
    assert set(documented) == set(found)
    for name, crossings in found.items():
        assert documented[name] == crossings, name

"""What a command of hmsproxy's command line imports, run in a fresh interpreter: the regression
guard of `hmsproxy sql`'s start-up (its speed is measured in docs/benchmark.md, never asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).parents[2]

#: Modules of hmsproxy that `hmsproxy sql` must not load: the IDL and Thrift connections, the grammar
#: and the features' statements (lark), the composition root, the dev stack (Maven helpers).
HEAVY_OWN = ("hmsproxy.protocol.idl", "hmsproxy.protocol.client", "hmsproxy.upstream", "hmsproxy.ddl.registry", "hmsproxy.ddl.parser")
HEAVY_OWN += ("hmsproxy.app", "hmsproxy.dev", "hmsproxy.config.yaml_files", "hmsproxy.jobs.context")
#: The standard library's slow corners: entry points, HTTP/e-mail (thriftpy2's parser pulls them in).
HEAVY_STDLIB = ("importlib.metadata", "pkg_resources", "urllib.request", "http", "email", "asyncio", "ssl")

_SCRIPT = """
import json, sys
before = set(sys.modules)  # the interpreter's and site's own (.pth hooks)
from hmsproxy.cli import main
try:
    status = main(sys.argv[2:])
except SystemExit as e:
    status = e.code
json.dump({"status": status, "modules": sorted(set(sys.modules) - before)}, open(sys.argv[1], "w"))
"""


def modules_loaded_by(argv: list[str], tmp_path: Path) -> tuple[int, list[str]]:
    """(exit status, modules `hmsproxy ARGV` loaded beyond a bare interpreter's)."""
    out = tmp_path / "modules.json"
    subprocess.run([sys.executable, "-c", _SCRIPT, str(out), *argv], capture_output=True, text=True, timeout=120, cwd=REPO, check=False)
    found = json.loads(out.read_text())
    return found["status"], found["modules"]


def unwanted(modules: list[str]) -> list[str]:
    """Third-party modules (anything neither hmsproxy's nor the standard library's) and the heavy ones above."""

    def named(m: str, prefixes: tuple[str, ...]) -> bool:
        return any(m == p or m.startswith(p + ".") for p in prefixes)

    third_party = [m for m in modules if m.split(".")[0] not in sys.stdlib_module_names and m.split(".")[0] != "hmsproxy"]
    statements = [m for m in modules if m.startswith("hmsproxy.features.") and m.endswith(".statements")]
    return sorted({*third_party, *statements, *(m for m in modules if named(m, HEAVY_OWN + HEAVY_STDLIB))})

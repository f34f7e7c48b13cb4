"""The package-level import graph of hmsproxy, read from the source (test_layout.py's checks).

Every import counts, at module level or inside a function, except those under
``if TYPE_CHECKING:`` (annotations only: nothing runs them).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "hmsproxy"


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, package: str) -> Iterator[str]:
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _type_checking_only(node):
            continue
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the importing module's package
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            yield module
            yield from (f"{module}.{a.name}" for a in node.names)  # `from pkg import module`
        yield from _imports(node, package)


def imports_of(path: Path, root: Path = ROOT) -> set[str]:
    """The hmsproxy modules `path` imports at run time."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    return {m for m in _imports(ast.parse(path.read_text()), package) if _is_module(m, root)}


def _is_module(name: str, root: Path) -> bool:
    """Whether `name` is a module or package under `root` (`from pkg import a_function` names none)."""
    parts = name.split(".")
    if parts[0] != root.name:
        return False
    where = root.parent.joinpath(*parts)
    return where.is_dir() or where.with_suffix(".py").is_file() or bool(list(where.parent.glob(where.name + ".*.so")))


def unit_of(module: str, root: Path = ROOT) -> str:
    """The package a module belongs to (`hmsproxy.pipeline.handler` -> `pipeline`), or the loose
    module's own name (`hmsproxy.app` -> `app`)."""
    parts = module.split(".")
    if len(parts) == 1:
        return parts[0]
    return parts[1]


def package_graph(root: Path = ROOT) -> dict[str, dict[str, set[str]]]:
    """unit -> imported unit -> the importing modules (a unit: a package directly under `root`, or a loose module)."""
    graph: dict[str, dict[str, set[str]]] = {}
    for path in sorted(root.rglob("*.py")):
        source = module_name(path, root)
        here = unit_of(source, root)
        for target in imports_of(path, root):
            there = unit_of(target, root)
            if there in (here, root.name):
                continue
            graph.setdefault(here, {}).setdefault(there, set()).add(source)
    return graph


def cycles(graph: dict[str, dict[str, set[str]]]) -> list[list[str]]:
    """Each strongly connected group of more than one unit (packages that reach each other), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's algorithm; the graph is a few dozen nodes
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def importers_of(module: str, root: Path = ROOT) -> list[str]:
    """The modules under `root` that import `module` at run time."""
    return sorted(module_name(p, root) for p in root.rglob("*.py") if module in imports_of(p, root))

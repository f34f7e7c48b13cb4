"""The C extension owns no Python internals: it reads no Python attribute by name, and the numbers
both languages use are defined once (protocol/_thriftwalk.h, exported by the module).

Renaming a Python attribute the C code read by name used to drop plain-socket clients off the hit
loop silently (#38). Now C reaches Python objects only through what it defines itself (the Gate,
InFlight, Tally, HitSocket and HitLoop types' struct fields) or through tuples laid out by position,
whose positions are checked here.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from hmsproxy.downstream import hits
from hmsproxy.pipeline.plan import Plan
from hmsproxy.pipeline.shortcuts import Shortcut
from hmsproxy.protocol import _thriftwalk, framing

ROOT = Path(__file__).resolve().parents[2]
C_SOURCES = sorted((ROOT / "hmsproxy" / "protocol").glob("*.[ch]"))
PYTHON_SOURCES = sorted(p for p in (ROOT / "hmsproxy").rglob("*.py"))

#: The C API's look-ups of an attribute by its name: none may appear.
BY_NAME = re.compile(
    r"\b(PyObject_(Get|Set|Has|Del)Attr(String)?|PyObject_CallMethod\w*|_PyObject_LookupAttr\w*|"
    r"PyObject_GenericGetAttr|PyUnicode_InternFromString|_Py_IDENTIFIER)\b"
)
STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
#: Names C declares itself: the first entry of a row ({"name", ...}) of a member or method table
#: or of the module's constants, and keyword arguments (static char *keywords[] = {...}).
TABLES = re.compile(r"(?:static Py(?:Member|Method|GetSet)Def \w+|\} constants)\[\] = \{(.*?)\n\};", re.S)
C_DECLARED = re.compile(r'\{\s*"([A-Za-z_]\w*)"\s*,')
KEYWORDS = re.compile(r"static char \*keywords\[\] = \{([^}]*)\}")
#: Format strings of PyArg_Parse*/Py_BuildValue and the codec error handler: not names at all.
NOT_NAMES = re.compile(r"^[OiInSdyLKsz!*|:$]+$|^strict$")


def without_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def python_attribute_names() -> set[str]:
    """Every attribute name hmsproxy's Python reads or writes, and every name a class defines."""
    names: set[str] = set()
    for path in PYTHON_SOURCES:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Attribute):
                names.add(node.attr)
            elif isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        names.add(item.name)
                    elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                        names.add(item.target.id)
                    elif isinstance(item, ast.Assign):
                        names.update(t.id for t in item.targets if isinstance(t, ast.Name))
    return names


def offences(c_text: str, attributes: set[str]) -> list[str]:
    """What in C source `c_text` reads Python by name: a by-name API call, or a string literal that
    names a Python attribute C does not declare itself."""
    code = without_comments(c_text)
    found = [f"calls {m.group(0)}" for m in BY_NAME.finditer(code)]
    declared = {name for table in TABLES.findall(code) for name in C_DECLARED.findall(table)}
    for block in KEYWORDS.findall(code):
        declared.update(STRING.findall(block))
    for literal in STRING.findall(code):
        if re.fullmatch(r"[A-Za-z_]\w*", literal) and not NOT_NAMES.match(literal):
            if literal in attributes and literal not in declared:
                found.append(f'names "{literal}", a Python attribute')
    return found


def test_the_scan_catches_what_it_looks_for():
    attributes = {"_running", "relayed"}
    planted = 'int f(PyObject *b) { PyObject *r = PyObject_GetAttrString(b, "_running"); return r != NULL; }'
    assert offences(planted, attributes) == ["calls PyObject_GetAttrString", 'names "_running", a Python attribute']
    declared = 'static PyMemberDef m[] = {\n    {"relayed", T_OBJECT, 0, 0, NULL},\n};'
    assert offences(declared, attributes) == []  # a name C declares, Python reads: that way round is fine


def test_no_python_attribute_name_in_the_c_sources():
    attributes = python_attribute_names()
    assert {"hit_fd", "router", "expires", "used", "close", "up"} <= attributes  # the scan sees names C once read
    found = {path.name: offences(path.read_text(), attributes) for path in C_SOURCES}
    assert {"_gate.c", "_hits.c", "_thriftwalk.c", "_thriftwalk.h"} <= set(found)
    assert not any(found.values()), found


def test_shortcut_and_plan_positions_the_hit_loop_reads_are_the_named_tuples():
    fields = Shortcut._fields
    assert fields.index("plan") == _thriftwalk.SHORTCUT_PLAN
    assert fields.index("router") == _thriftwalk.SHORTCUT_ROUTER
    assert fields.index("expires") == _thriftwalk.SHORTCUT_EXPIRES
    assert Plan._fields.index("hit") == _thriftwalk.PLAN_HIT


def test_numbers_shared_with_c_come_from_the_extension():
    assert (framing.DONE, framing.OVER, framing.CLOSED, framing.ERRNO) == (
        _thriftwalk.X_DONE,
        _thriftwalk.X_OVER,
        _thriftwalk.X_CLOSED,
        _thriftwalk.X_ERRNO,
    )
    assert (framing.FILL_STRUCT, framing.FILL_LIST) == (_thriftwalk.FILL_STRUCT, _thriftwalk.FILL_LIST)
    assert (hits.FLUSH, hits.FAILED, hits.GONE) == (_thriftwalk.H_FLUSH, _thriftwalk.H_FAILED, _thriftwalk.H_GONE)
    # One definition: no Python module numbers them again with literals.
    shared = {"DONE", "OVER", "CLOSED", "ERRNO", "FILL_STRUCT", "FILL_LIST", "FLUSH", "MISS", "FAILED", "GONE"}
    renumbered = []
    for path in PYTHON_SOURCES:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Assign) and isinstance(node.value, (ast.Constant, ast.Tuple)):
                targets = [e for t in node.targets for e in (t.elts if isinstance(t, ast.Tuple) else [t])]
                values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
                for target, value in zip(targets, values, strict=False):
                    if (
                        isinstance(target, ast.Name)
                        and target.id in shared
                        and isinstance(value, ast.Constant)
                        and type(value.value) is int
                    ):
                        renumbered.append(f"{path.relative_to(ROOT)}:{node.lineno} {target.id}")
    assert not renumbered, renumbered

"""thriftpy2's load of the IDL, kept in the user cache so a new process reads it instead of parsing.

Parsing the .thrift files (ply builds its tables and parses 55 KB each time) costs a new process
~0.2 s, most of what a short command like `hmsproxy sql` spends. thriftpy2 makes plain classes
from them; this pickles those classes by value (name, bases, class attributes; each generated
``__init__`` as its marshalled code) and the modules holding them, cycles included (a struct's
spec names the classes of its fields, sometimes its own). The snapshot is keyed by the IDL's
text, where it lies and thriftpy2's version (protocol/user_cache.py); a missing or unreadable one is made
again from a normal load.
"""

from __future__ import annotations

import importlib.util
import marshal
import pickle
import sys
import types
from pathlib import Path

import thriftpy2

from hmsproxy.protocol.user_cache import cache_file, open_own, write_atomically

#: Bumped when the snapshot's format changes.
FORMAT = "1"


def load(path: Path, module_name: str, include_dirs: list[Path]) -> types.ModuleType:
    """What ``thriftpy2.load(path, module_name, include_dirs)`` returns, from the cache when it can."""
    snapshot = snapshot_file(path, module_name, include_dirs)
    if snapshot is not None:
        try:
            with open_own(snapshot) as fh:
                return _register(pickle.load(fh))
        except Exception:  # noqa: BLE001 - missing, half-written by an older version, damaged: load normally
            pass
    module = thriftpy2.load(str(path), module_name=module_name, include_dirs=[str(d) for d in include_dirs])
    if snapshot is not None:
        write_atomically(snapshot, lambda fh: dump(module, fh))
    return module


def snapshot_file(path: Path, module_name: str, include_dirs: list[Path]) -> Path | None:
    """Where the snapshot of this load lives in the user cache (None: the cache is off)."""
    inputs = [FORMAT, thriftpy2.__version__, importlib.util.MAGIC_NUMBER, module_name]  # marshalled code: this bytecode
    # The classes carry the files' paths, and thriftpy2 refuses one module name from two paths: each
    # checkout (a CI clone beside a working tree) keeps its own snapshot.
    inputs += [str(Path(path).resolve()), *(str(Path(d).resolve()) for d in include_dirs)]
    for d in include_dirs:
        inputs += [f.read_bytes() for f in sorted(Path(d).glob("*.thrift"))]
    return cache_file("idl", inputs)


def dump(module: types.ModuleType, fh) -> None:
    _Pickler(fh, _thrift_modules(module)).dump(module)


def _thrift_modules(root: types.ModuleType) -> dict[str, types.ModuleType]:
    """The modules thriftpy2 made: `root` and what it includes, by the name their classes carry."""
    found, todo = {}, [root]
    while todo:
        module = todo.pop()
        found[getattr(module, "__thrift_module_name__", module.__name__)] = module
        todo += [m for m in getattr(module, "__thrift_meta__", {}).get("includes", []) if m not in found.values()]
    return found


def _register(root: types.ModuleType) -> types.ModuleType:
    """Into sys.modules, as thriftpy2.load does with a module name (instances then pickle by reference)."""
    for name, module in _thrift_modules(root).items():
        sys.modules.setdefault(name, module)
    return root


class _Pickler(pickle.Pickler):
    def __init__(self, fh, modules: dict[str, types.ModuleType]):
        super().__init__(fh, protocol=pickle.HIGHEST_PROTOCOL)
        self._modules = modules
        self._module_ids = {id(m) for m in modules.values()}

    def reducer_override(self, obj):
        if isinstance(obj, types.ModuleType) and id(obj) in self._module_ids:
            state = {k: v for k, v in vars(obj).items() if k not in ("__loader__", "__spec__")}
            return _new_module, (obj.__name__,), state, None, None, _fill_module
        if isinstance(obj, type) and obj.__module__ in self._modules:
            # Not the slots type() makes itself (getset descriptors), nor __init__: its code goes apart.
            state = {k: v for k, v in vars(obj).items() if k != "__init__" and not isinstance(v, types.GetSetDescriptorType)}
            init = vars(obj).get("__init__")
            code = (marshal.dumps(init.__code__), init.__defaults__) if isinstance(init, types.FunctionType) else None
            return _new_class, (type(obj), obj.__name__, obj.__bases__, obj.__module__), (state, code), None, None, _fill_class
        return NotImplemented


def _new_module(name: str) -> types.ModuleType:
    return types.ModuleType(name)


def _fill_module(module: types.ModuleType, state: dict) -> None:
    vars(module).update(state)


def _new_class(metaclass: type, name: str, bases: tuple, module: str) -> type:
    return metaclass(name, bases, {"__module__": module})


def _fill_class(cls: type, state: tuple) -> None:
    attributes, code = state
    for key, value in attributes.items():
        setattr(cls, key, value)
    if code is not None:
        init = types.FunctionType(marshal.loads(code[0]), {}, "__init__", code[1])
        init.__qualname__ = f"{cls.__name__}.__init__"
        cls.__init__ = init

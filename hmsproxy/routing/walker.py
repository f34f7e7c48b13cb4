"""Finding one kind of name (database or table) inside Thrift structs, generically.

A `NameWalker` is given the (struct, field) pairs that hold such a name and
follows `thrift_spec` into lists, maps and nested structs, so no struct needs a
hand-written case. What to visit is planned once per class; subtrees that
can't hold the name are never walked.
"""

from __future__ import annotations

from collections.abc import Callable

from thriftpy2.thrift import TType

Rename = Callable[[str], str]


def _split(spec) -> tuple[int, object]:
    return spec if isinstance(spec, tuple) else (spec, None)


def _renamed(value, rename: Rename):
    """A name, or a list or set of names (e.g. GetTablesRequest.tblNames), renamed."""
    if isinstance(value, str):
        return rename(value)
    if isinstance(value, list):
        return [rename(v) if isinstance(v, str) else v for v in value]
    if isinstance(value, set):
        return {rename(v) if isinstance(v, str) else v for v in value}
    return value


class NameWalker:
    def __init__(self, fields: dict[str, frozenset[str]], args_fields: Callable[[str], frozenset[str]]):
        """`fields`: struct name -> its name fields; `args_fields(method)`: the method's name arguments."""
        self.fields = fields
        self._args_fields = args_fields
        self._plans: dict[type, tuple | None] = {}

    def _plan(self, cls: type) -> tuple | None:
        """(name fields, [(field, visitor)]) for instances of `cls`, or None if they hold no names."""
        if cls in self._plans:
            return self._plans[cls]
        self._plans[cls] = None  # recursive structs: assume nothing while planning
        fields = self.fields.get(cls.__name__, frozenset())
        if cls.__name__.endswith("_args"):
            fields = self._args_fields(cls.__name__[: -len("_args")])
        children = []
        for v in cls.thrift_spec.values():
            if v[1] in fields:
                continue
            sub = self._container_plan(v[0], v[2] if len(v) > 3 else None)
            if sub is not None:
                children.append((v[1], sub))
        plan = (fields, tuple(children)) if (fields or children) else None
        self._plans[cls] = plan
        return plan

    def _container_plan(self, ttype: int, nested) -> tuple | None:
        if ttype == TType.STRUCT:
            return ("struct", nested) if self._plan(nested) is not None else None
        if ttype in (TType.LIST, TType.SET):
            inner = self._container_plan(*_split(nested))
            return ("list", inner) if inner else None
        if ttype == TType.MAP:
            kplan, vplan = (self._container_plan(*_split(part)) for part in nested)
            return ("map", kplan, vplan) if (kplan or vplan) else None
        return None

    def _visit(self, value, plan, rename: Rename) -> None:
        if value is None:
            return
        kind = plan[0]
        if kind == "struct":
            self.rewrite_struct(value, rename)
        elif kind == "list":
            for item in value:
                self._visit(item, plan[1], rename)
        elif kind == "map":
            for k, v in value.items():
                if plan[1]:
                    self._visit(k, plan[1], rename)
                if plan[2]:
                    self._visit(v, plan[2], rename)

    def rewrite_struct(self, obj, rename: Rename) -> None:
        """Rewrite, in place, every name inside the struct `obj` with `rename`."""
        plan = self._plan(type(obj))
        if plan is None:
            return
        fields, children = plan
        for f in fields:
            value = getattr(obj, f, None)
            if value is not None:
                setattr(obj, f, _renamed(value, rename))
        for fname, sub in children:
            self._visit(getattr(obj, fname, None), sub, rename)

    def rewrite_value(self, value, thrift_type: tuple, rename: Rename) -> None:
        """Rewrite names inside a result value whose (ttype, nested) comes from a result spec."""
        plan = self._container_plan(*thrift_type)
        if plan is not None:
            self._visit(value, plan, rename)

    def holds_names(self, cls: type) -> bool:
        return self._plan(cls) is not None

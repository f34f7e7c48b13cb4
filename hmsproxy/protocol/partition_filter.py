"""Hive's partition filter language (get_partitions_by_filter), evaluated on partition values the
proxy holds itself: a dependent table's published partitions have no metastore to ask, and a Glue
catalog takes only a part of the language (catalogs/glue_filter.py).

The grammar is Hive's (metastore Filter.g): `key op value` or `value op key` with = <> != < <= >
>= LIKE, `key [NOT] BETWEEN v AND v`, `key [NOT] IN (v, ...)`, AND, OR and parentheses; values are
quoted strings, integers and `DATE 'yyyy-mm-dd'`. LIKE is a Java regular expression on the whole
value, as the metastore's JDO filter reads it (Spark sends `ds like "2026.*"`). An integral
partition column compares as numbers, every other one as strings.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

#: A parsed filter: partition values by column name -> whether the partition is kept.
Predicate = Callable[[Mapping[str, str]], bool]

INTEGRAL = frozenset({"tinyint", "smallint", "int", "integer", "bigint"})

_TOKEN = re.compile(
    r"""\s*(?:
      (?P<string>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
    | (?P<number>-?\d+)[LSY]?
    | (?P<op><=|>=|<>|!=|=|<|>|\(|\)|,)
    | (?P<word>[A-Za-z0-9_]+|`[^`]+`)
    )""",
    re.VERBOSE,
)
_KEYWORDS = {"and", "or", "not", "like", "between", "in", "date"}
_COMPARE = {
    "=": lambda a, b: a == b,
    "<>": lambda a, b: a != b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}
_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


class FilterError(ValueError):
    """A filter that does not parse, or names no partition column."""


def tokens(text: str) -> list[tuple[str, str]]:
    """(kind, value) pairs: kind string (unquoted), number, op, kw (lower-cased) or word (a column,
    unquoted and lower-cased). Raises FilterError where the text can't be read."""
    out, pos = [], 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise FilterError(f"can't read the filter at {text[pos : pos + 20]!r}")
        kind = m.lastgroup
        value = m.group(kind)
        if kind == "string":
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        elif kind == "word":
            if value.lower() in _KEYWORDS:
                kind, value = "kw", value.lower()
            else:
                value = value.strip("`").lower()
        out.append((kind, value))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, text: str, columns: Mapping[str, str]):
        self.tokens = tokens(text)
        self.i = 0
        self.columns = {k.lower(): t.lower() for k, t in columns.items()}

    def peek(self, offset: int = 0) -> tuple[str, str] | None:
        j = self.i + offset
        return self.tokens[j] if j < len(self.tokens) else None

    def take(self, kind: str, value: str | None = None) -> str:
        token = self.peek()
        if token is None or token[0] != kind or (value is not None and token[1] != value):
            found = "the end" if token is None else repr(token[1])
            raise FilterError(f"expected {value or kind} in the filter, found {found}")
        self.i += 1
        return token[1]

    def at(self, kind: str, value: str | None = None) -> bool:
        token = self.peek()
        return token is not None and token[0] == kind and (value is None or token[1] == value)

    def parse(self) -> Predicate:
        predicate = self.or_expression()
        if self.peek() is not None:
            raise FilterError(f"unexpected {self.peek()[1]!r} in the filter")
        return predicate

    def or_expression(self) -> Predicate:
        return self.chain("or", self.and_expression, any)

    def and_expression(self) -> Predicate:
        return self.chain("and", self.expression, all)

    def chain(self, keyword: str, operand: Callable[[], Predicate], combine) -> Predicate:
        """operand (keyword operand)*, its predicates joined by `combine` (any: OR, all: AND)."""
        parts = [operand()]
        while self.at("kw", keyword):
            self.i += 1
            parts.append(operand())
        return parts[0] if len(parts) == 1 else lambda v: combine(p(v) for p in parts)

    def expression(self) -> Predicate:
        if self.at("op", "("):
            self.i += 1
            inner = self.or_expression()
            self.take("op", ")")
            return inner
        if self.at("word"):
            return self.key_first(self.key())
        if self.peek() is None:
            raise FilterError("the filter ends where a condition should follow")
        value = self.value()  # `value op key`
        op = self.operator()
        return self.compare(self.key(), _FLIPPED.get(op, op), value)

    def key(self) -> str:
        name = self.take("word")
        if name not in self.columns:
            raise FilterError(f"{name} is not a partition column (they are: {', '.join(self.columns)})")
        return name

    def value(self) -> str:
        if self.at("kw", "date"):
            self.i += 1
            return self.take("string")
        if self.at("number"):
            return self.take("number")
        return self.take("string")

    def operator(self) -> str:
        if self.at("kw", "like"):
            self.i += 1
            return "like"
        op = self.take("op")
        if op not in _COMPARE:
            raise FilterError(f"{op!r} is no comparison")
        return op

    def key_first(self, key: str) -> Predicate:
        negated = self.at("kw", "not")
        if negated:
            self.i += 1
        if self.at("kw", "between"):
            self.i += 1
            low = self.value()
            self.take("kw", "and")
            high = self.value()
            inside = self.both(self.compare(key, ">=", low), self.compare(key, "<=", high))
            return (lambda v: not inside(v)) if negated else inside
        if self.at("kw", "in"):
            self.i += 1
            self.take("op", "(")
            options = [self.compare(key, "=", self.value())]
            while self.at("op", ","):
                self.i += 1
                options.append(self.compare(key, "=", self.value()))
            self.take("op", ")")
            return (lambda v: not any(o(v) for o in options)) if negated else (lambda v: any(o(v) for o in options))
        if negated:
            raise FilterError("NOT goes before BETWEEN or IN in a partition filter")
        return self.compare(key, self.operator(), self.value())

    @staticmethod
    def both(a: Predicate, b: Predicate) -> Predicate:
        return lambda v: a(v) and b(v)

    def compare(self, key: str, op: str, literal: str) -> Predicate:
        if op == "like":
            pattern = re.compile(literal, re.DOTALL)
            return lambda v: pattern.fullmatch(v[key]) is not None
        test = _COMPARE[op]
        if self.columns[key] in INTEGRAL:
            try:
                number = int(literal)
            except ValueError:
                raise FilterError(f"{key} is {self.columns[key]}: compare it with a number, not {literal!r}") from None

            def numeric(v: Mapping[str, str]) -> bool:
                try:
                    return test(int(v[key]), number)
                except ValueError:  # Hive's default partition (__HIVE_DEFAULT_PARTITION__) is no number
                    return False

            return numeric
        return lambda v: test(v[key], literal)


def parse(text: str, columns: Mapping[str, str]) -> Predicate:
    """The predicate of Hive partition filter `text` over partition columns `columns` (name -> type);
    an empty filter keeps every partition. Raises FilterError with the reason."""
    if not text or not text.strip():
        return lambda v: True
    return _Parser(text, columns).parse()

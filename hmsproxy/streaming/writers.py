"""Record writers: one input record (bytes) to one row of the table's columns, converted to their types.

As in Hive's streaming API a writer is bound to the table's columns before its first record; a record
that can't be decoded, split or converted raises SerializationError for that record only, and the
writer goes on with the next one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence

from hmsproxy.streaming.types import json_converter, text_converter


class SerializationError(Exception):
    """A record that can't be turned into a row; ``record`` is the input as given."""

    def __init__(self, message: str, record: bytes):
        super().__init__(message)
        self.record = record


class RecordWriter:
    """Base of the writers: ``bind`` to the table's columns, then ``parse`` records into rows."""

    def __init__(self, endpoint=None):
        self.endpoint = endpoint  # the seed's signature; the parser doesn't need it
        self.columns: list[tuple[str, str]] | None = None

    def bind(self, columns: list[tuple[str, str]]) -> None:
        """Take the table's non-partition columns (name, Hive type) in order; called before the first parse."""
        lowered = [(name.lower(), hive_type) for name, hive_type in columns]
        self._bind([name for name, _ in lowered], [hive_type for _, hive_type in lowered])
        self.columns = lowered  # only once bound: a failed bind leaves the writer unusable, not half-bound

    def _bind(self, names: list[str], types: list[str]) -> None:
        raise NotImplementedError

    def parse(self, record: bytes | bytearray | memoryview | str) -> list:
        """The record's row, in the table's column order; SerializationError if it can't be read."""
        if self.columns is None:
            raise RuntimeError(f"{type(self).__name__} is not bound to a table yet")
        try:
            if type(record) is bytes:
                text = record.decode()
            elif type(record) is str:
                text = record
                text.encode()  # a lone surrogate would fail the whole file later, not this record
            else:
                text = bytes(record).decode()
            if text[-1:] == "\n":  # a record is one line: its line end is not part of the last field
                text = text[:-2] if text[-2:] == "\r\n" else text[:-1]
            return self._parse(text)
        except (ValueError, ArithmeticError) as exc:  # UnicodeDecodeError and decimal's errors among them
            raise SerializationError(f"cannot read record: {exc}", record) from exc

    def _parse(self, text: str) -> list:
        raise NotImplementedError


def _column_map(names: Sequence[str | None], columns: list[str], what: str) -> list[int | None]:
    """For each table column, the index of the input field that holds it (None: no field does)."""
    index: dict[str, int] = {}
    for i, name in enumerate(names):
        if not name:
            continue  # a None/"" name skips that input field (Hive's DelimitedInputWriter)
        key = name.lower()
        if key not in columns:
            raise ValueError(f"{what} {name!r} is not a column of the table (columns: {', '.join(columns)})")
        if key in index:
            raise ValueError(f"{what} {name!r} is given twice")
        index[key] = i
    return [index.get(column) for column in columns]


class DelimitedInputWriter(RecordWriter):
    """Delimited text (no quoting or escapes, as Hive's LazySimpleSerDe); ``field_names`` name the fields.

    Fields are reordered to the table's columns; a column no field names is NULL, a field named None
    or "" is dropped, fields past the named ones are dropped, and fields missing at the end of a short
    record are NULL. A name that is no column of the table fails ``bind`` (Hive's InvalidColumn).
    """

    def __init__(self, field_names: Sequence[str | None], delimiter: str = ",", endpoint=None):
        super().__init__(endpoint)
        if not delimiter:
            raise ValueError("the delimiter must not be empty")
        self.field_names = list(field_names)
        self.delimiter = delimiter

    def _bind(self, names: list[str], types: list[str]) -> None:
        sources = _column_map(self.field_names, names, "field")
        converters = [text_converter(t) for t in types]
        self._plan = [(i, c) for i, c in zip(sources, converters, strict=True)]
        # Fast path: the fields are the table's columns in order, nothing to reorder.
        self._in_order = sources == list(range(len(names)))
        self._converters = converters
        self._count = len(names)

    def _parse(self, text: str) -> list:
        fields = text.split(self.delimiter)
        if self._in_order and len(fields) >= self._count:
            return [c(f) for c, f in zip(self._converters, fields)]
        n = len(fields)
        return [None if i is None or i >= n else c(fields[i]) for i, c in self._plan]


class StrictJsonWriter(RecordWriter):
    """One JSON object per record; keys match columns case-insensitively, unknown keys are ignored
    (Hive's JsonSerDe), a column without a key is NULL."""

    def __init__(self, endpoint=None):
        super().__init__(endpoint)
        # json's C scanner without json.loads' wrapping: a third of the time of a record.
        self._scan = json.JSONDecoder().scan_once

    def _bind(self, names: list[str], types: list[str]) -> None:
        self._plan = [(n, json_converter(t)) for n, t in zip(names, types, strict=True)]
        self._names = set(names)

    def _parse(self, text: str) -> list:
        try:
            obj, end = self._scan(text, 0)
            if end != len(text):
                raise StopIteration(end)
        except StopIteration:
            obj = json.loads(text)  # whitespace around the object, or json's own message for the error
        if type(obj) is not dict:
            raise ValueError(f"a record must be a JSON object, not {type(obj).__name__}")
        if "\\ud" in text or "\\uD" in text:
            # An escaped lone surrogate decodes to a str UTF-8 can't hold: refuse the record now.
            json.dumps(obj, ensure_ascii=False).encode()
        get = obj.get
        # Keys are usually the columns' own (lower-case) names; lower them only when some aren't.
        if not obj.keys() <= self._names:
            get = {k.lower(): v for k, v in obj.items()}.get
        return [c(get(n)) for n, c in self._plan]


class StrictRegexWriter(RecordWriter):
    """A regular expression that must match the whole record (Hive's RegexSerDe); its named groups
    fill the columns of those names, or, with no named groups, its groups fill the columns in order.
    An unmatched group is NULL; a record the expression doesn't match is a SerializationError."""

    def __init__(self, regex: str, endpoint=None):
        super().__init__(endpoint)
        self.regex = re.compile(regex, re.DOTALL)

    def _bind(self, names: list[str], types: list[str]) -> None:
        converters = [text_converter(t) for t in types]
        groups = self.regex.groupindex
        if groups:
            by_name = {g.lower(): i for g, i in groups.items()}
            unknown = sorted(set(by_name) - set(names))
            if unknown:
                raise ValueError(f"regex groups {unknown} are not columns of the table (columns: {', '.join(names)})")
            sources: list[int | None] = [by_name.get(n) for n in names]
        else:
            sources = [g if g <= self.regex.groups else None for g in range(1, len(names) + 1)]
        self._plan: list[tuple[int | None, Callable]] = list(zip(sources, converters, strict=True))

    def _parse(self, text: str) -> list:
        match = self.regex.fullmatch(text)
        if match is None:
            raise ValueError("the record does not match the regex")
        values = match.groups()
        row = []
        for i, c in self._plan:
            value = None if i is None else values[i - 1]
            row.append(None if value is None else c(value))
        return row

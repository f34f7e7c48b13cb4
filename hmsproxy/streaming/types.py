"""Hive column types for streaming: their Arrow types and converters from text and from JSON.

A Hive type string as the metastore gives it in FieldSchema.type ("decimal(10,2)", "map<string,int>",
"struct<a:int,b:array<string>>") is parsed once into a :class:`HiveType`; converters are closures built
once per column, so converting a value is one Python call with no type dispatch.

Text follows Hive 2.3's LazySimpleSerDe: "\\N" is NULL for every type, "" is NULL for every type but
the string ones and binary, collections inside a field use the separators \\002, \\003, \\004... by nesting level.
Where LazySimpleSerDe silently turns a malformed value into NULL ("abc" in an int column, "yes" in a
boolean one, 300 in a tinyint one), these converters raise ValueError instead: a streaming writer turns
that into a SerializationError for the record, which the client can send to a dead-letter file rather
than lose the value.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import decimal
import math
import re
from collections.abc import Callable
from dataclasses import dataclass

import pyarrow as pa

NULL_TEXT = "\\N"
# LazySimpleSerDe's default separators below the field delimiter: collection items, map keys, then
# one more per nesting level (Hive's defaults go \004 to \010, then on through the control range).
NESTED_SEPARATORS = tuple(chr(c) for c in range(2, 32) if chr(c) not in "\t\n\r")

Converter = Callable[[object], object]

INT_RANGES = {"tinyint": 7, "smallint": 15, "int": 31, "bigint": 63}
STRING_KINDS = frozenset({"string", "varchar", "char"})
PRIMITIVES = frozenset(
    {
        "tinyint",
        "smallint",
        "int",
        "bigint",
        "float",
        "double",
        "decimal",
        "string",
        "varchar",
        "char",
        "boolean",
        "date",
        "timestamp",
        "binary",
    }
)
_ARROW_PRIMITIVES = {
    "tinyint": pa.int8(),
    "smallint": pa.int16(),
    "int": pa.int32(),
    "bigint": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "string": pa.string(),
    "varchar": pa.string(),
    "char": pa.string(),
    "boolean": pa.bool_(),
    "date": pa.date32(),
    # Hive timestamps are wall-clock values without a zone; micro precision is what Python and Spark keep.
    "timestamp": pa.timestamp("us"),
    "binary": pa.binary(),
}
_INTEGRAL_FRACTION = re.compile(r"\s*[+-]?\d+\.\d*\s*")
_BASE64_TEXT = re.compile(r"[A-Za-z0-9+/=\s]*")


@dataclass(frozen=True)
class HiveType:
    """A parsed Hive type: ``kind`` plus parameters (length, precision/scale) or children."""

    kind: str
    params: tuple[int, ...] = ()
    children: tuple[HiveType, ...] = ()
    field_names: tuple[str, ...] = ()  # struct only


def parse_type(text: str) -> HiveType:
    parser = _TypeParser(text)
    result = parser.parse()
    if parser.pos != len(parser.text):
        raise ValueError(f"unexpected {parser.text[parser.pos :]!r} in Hive type {text!r}")
    return result


class _TypeParser:
    def __init__(self, text: str):
        self.text = "".join(text.split()).lower()
        self.pos = 0

    def _name(self) -> str:
        start = self.pos
        if self.text.startswith("`", start):
            end = self.text.index("`", start + 1)
            self.pos = end + 1
            return self.text[start + 1 : end]
        while self.pos < len(self.text) and (self.text[self.pos].isalnum() or self.text[self.pos] == "_"):
            self.pos += 1
        if self.pos == start:
            raise ValueError(f"expected a name at {self.text[start:]!r} in Hive type {self.text!r}")
        return self.text[start : self.pos]

    def _expect(self, char: str) -> None:
        if not self.text.startswith(char, self.pos):
            raise ValueError(f"expected {char!r} at {self.text[self.pos :]!r} in Hive type {self.text!r}")
        self.pos += 1

    def _accept(self, char: str) -> bool:
        if self.text.startswith(char, self.pos):
            self.pos += 1
            return True
        return False

    def parse(self) -> HiveType:
        kind = self._name()
        if kind == "integer":
            kind = "int"
        if kind == "array":
            self._expect("<")
            child = self.parse()
            self._expect(">")
            return HiveType("array", children=(child,))
        if kind == "map":
            self._expect("<")
            key = self.parse()
            self._expect(",")
            value = self.parse()
            self._expect(">")
            if key.kind not in PRIMITIVES:
                raise ValueError(f"map keys must be primitive, not {key.kind}")
            return HiveType("map", children=(key, value))
        if kind == "struct":
            self._expect("<")
            names, children = [], []
            while True:
                names.append(self._name())
                self._expect(":")
                children.append(self.parse())
                if not self._accept(","):
                    break
            self._expect(">")
            return HiveType("struct", children=tuple(children), field_names=tuple(names))
        if kind not in PRIMITIVES:
            raise ValueError(f"unsupported Hive type {kind!r}")
        params: list[int] = []
        if self._accept("("):
            while True:
                start = self.pos
                while self.pos < len(self.text) and self.text[self.pos].isdigit():
                    self.pos += 1
                params.append(int(self.text[start : self.pos]))
                if not self._accept(","):
                    break
            self._expect(")")
        if kind == "decimal":
            # Hive's defaults: decimal = decimal(10,0), decimal(p) = decimal(p,0).
            if len(params) > 2:
                raise ValueError("decimal takes (precision, scale)")
            precision, scale = params + [10, 0][len(params) :]
            if not 1 <= precision <= 38 or not 0 <= scale <= precision:
                raise ValueError(f"bad decimal({precision},{scale})")
            params = [precision, scale]
        elif kind in ("varchar", "char"):
            if len(params) != 1 or params[0] < 1:
                raise ValueError(f"{kind} needs a length")
        elif params:
            raise ValueError(f"{kind} takes no parameters")
        return HiveType(kind, tuple(params))


def _as_type(hive_type: str | HiveType) -> HiveType:
    return hive_type if isinstance(hive_type, HiveType) else parse_type(hive_type)


def arrow_type(hive_type: str | HiveType) -> pa.DataType:
    t = _as_type(hive_type)
    if t.kind == "decimal":
        return pa.decimal128(*t.params)
    if t.kind == "array":
        return pa.list_(arrow_type(t.children[0]))
    if t.kind == "map":
        return pa.map_(arrow_type(t.children[0]), arrow_type(t.children[1]))
    if t.kind == "struct":
        return pa.struct([pa.field(n, arrow_type(c)) for n, c in zip(t.field_names, t.children, strict=True)])
    return _ARROW_PRIMITIVES[t.kind]


# ---- primitives from text -------------------------------------------------------------------------


# Each converter takes "" and "\\N" as NULL on its slow path (where the plain parse failed), so a
# well-formed value costs one Python call and no NULL test.


def _is_null(s: str) -> bool:
    return s == "" or s == NULL_TEXT


def _int_from_text(bits: int) -> Callable[[str], int | None]:
    low, high = -(1 << bits), (1 << bits) - 1

    def convert(s: str) -> int | None:
        try:
            value = int(s)
        except ValueError:
            if _is_null(s):
                return None
            # LazyInteger and friends take "12.7" as 12 (the fraction truncated, its digits checked).
            if not _INTEGRAL_FRACTION.fullmatch(s):
                raise ValueError(f"not an integer: {s!r}") from None
            value = int(s.strip().split(".")[0])
        else:
            if "_" in s:
                raise ValueError(f"not an integer: {s!r}")
        if not low <= value <= high:
            raise ValueError(f"{value} is out of range")
        return value

    return convert


FLOAT_MAX = 3.4028234663852886e38


def _fit_float(value: float) -> float:
    # A float column is 32 bits: a larger finite value would silently become infinity in the file.
    if math.isfinite(value) and abs(value) > FLOAT_MAX:
        raise ValueError(f"{value} is out of range for float")
    return value


def _float_from_text(single: bool) -> Callable[[str], float | None]:
    def convert(s: str) -> float | None:
        try:
            value = float(s)
        except ValueError:
            if _is_null(s):
                return None
            raise ValueError(f"not a number: {s!r}") from None
        if "_" in s:
            raise ValueError(f"not a number: {s!r}")
        return _fit_float(value) if single else value

    return convert


def _decimal_fitter(precision: int, scale: int) -> Callable[[decimal.Decimal], decimal.Decimal]:
    quantum = decimal.Decimal(1).scaleb(-scale)
    limit = decimal.Decimal(10) ** (precision - scale)
    context = decimal.Context(prec=80, rounding=decimal.ROUND_HALF_UP)

    def fit(value: decimal.Decimal) -> decimal.Decimal:
        if not value.is_finite():
            raise ValueError(f"{value} is not a decimal number")
        # Hive rounds half up to the column's scale and makes a value too large for the precision NULL.
        value = value.quantize(quantum, context=context)
        if abs(value) >= limit:
            raise ValueError(f"{value} does not fit decimal({precision},{scale})")
        return value

    return fit


def _decimal_from_text(precision: int, scale: int) -> Callable[[str], decimal.Decimal | None]:
    fit = _decimal_fitter(precision, scale)

    def convert(s: str) -> decimal.Decimal | None:
        try:
            value = decimal.Decimal(s.strip())
        except decimal.InvalidOperation:
            if _is_null(s):
                return None
            raise ValueError(f"not a decimal: {s!r}") from None
        return fit(value)

    return convert


def _bool_from_text(s: str) -> bool | None:
    low = s.lower()
    if low == "true":
        return True
    if low == "false":
        return False
    if _is_null(s):
        return None
    raise ValueError(f"not a boolean: {s!r}")


def _date_from_text(s: str) -> datetime.date | None:
    if len(s) != 10 or s[4] != "-":
        if _is_null(s):
            return None
        raise ValueError(f"not a date (yyyy-mm-dd): {s!r}")
    return datetime.date.fromisoformat(s)


def _timestamp_from_text(s: str) -> datetime.datetime | None:
    if len(s) < 10 or s[4] != "-":
        if _is_null(s) or s == "NULL":  # LazyTimestamp alone also takes the text NULL as NULL
            return None
        raise ValueError(f"not a timestamp (yyyy-mm-dd hh:mm:ss[.fffffffff]): {s!r}")
    # fromisoformat keeps microseconds and drops digits 7-9 of Hive's nanoseconds.
    value = datetime.datetime.fromisoformat(s)
    if value.tzinfo is not None:
        raise ValueError(f"a Hive timestamp has no time zone: {s!r}")
    return value


def _binary_from_text(s: str) -> bytes | None:
    if s == NULL_TEXT:
        return None  # "" is b"" (LazyBinary keeps empty bytes), as "" is "" for strings
    # LazyBinary (Hive 2.3): text made only of base64's alphabet is decoded, anything else is taken as is.
    if _BASE64_TEXT.fullmatch(s):
        compact = "".join(s.split())
        try:
            decoded = base64.b64decode(compact + "=" * (-len(compact) % 4))
        except binascii.Error:
            decoded = b""
        if decoded:
            return decoded
    return s.encode()


def _string_shaper(t: HiveType) -> Callable[[str], str] | None:
    """varchar(n) cuts to n characters, char(n) cuts and pads with spaces to n (HiveVarchar, HiveChar)."""
    if t.kind == "varchar":
        length = t.params[0]
        return lambda s: s[:length]
    if t.kind == "char":
        length = t.params[0]
        return lambda s: s[:length].ljust(length)
    return None


def _string_from_text(t: HiveType) -> Callable[[str], str | None]:
    # For strings only "\\N" is NULL; "" is the empty string.
    shape = _string_shaper(t)
    if shape is None:
        return lambda s: None if s == NULL_TEXT else s
    return lambda s: None if s == NULL_TEXT else shape(s)


def _primitive_from_text(t: HiveType) -> Callable[[str], object]:
    kind = t.kind
    if kind in INT_RANGES:
        return _int_from_text(INT_RANGES[kind])
    if kind in ("float", "double"):
        return _float_from_text(kind == "float")
    if kind == "decimal":
        return _decimal_from_text(*t.params)
    if kind in STRING_KINDS:
        return _string_from_text(t)
    return {"boolean": _bool_from_text, "date": _date_from_text, "timestamp": _timestamp_from_text, "binary": _binary_from_text}[kind]


def _text_converter(t: HiveType, level: int) -> Callable[[str], object]:
    if t.kind in PRIMITIVES:
        return _primitive_from_text(t)
    if level + 1 >= len(NESTED_SEPARATORS):
        raise ValueError("types nested too deeply for delimited text")
    sep = NESTED_SEPARATORS[level]
    if t.kind == "array":
        item = _text_converter(t.children[0], level + 1)

        def array(s: str) -> list:
            return [item(part) for part in s.split(sep)]

        converter: Callable[[str], object] = array
    elif t.kind == "map":
        key_sep = NESTED_SEPARATORS[level + 1]
        key_conv = _text_converter(t.children[0], level + 2)
        value_conv = _text_converter(t.children[1], level + 2)

        def map_(s: str) -> dict:
            result = {}
            for entry in s.split(sep):
                key, _, value = entry.partition(key_sep)
                k = key_conv(key)
                if k is not None:  # LazyMap drops entries whose key is NULL
                    result.setdefault(k, value_conv(value))  # and keeps the first of duplicate keys
            return result

        converter = map_
    else:
        fields = [_text_converter(c, level + 1) for c in t.children]
        names = t.field_names

        def struct(s: str) -> dict:
            parts = s.split(sep)
            parts += [NULL_TEXT] * (len(fields) - len(parts))  # missing trailing fields are NULL
            return {n: f(p) for n, f, p in zip(names, fields, parts)}

        converter = struct

    def complex_or_null(s: str) -> object:
        # An empty collection is "" in LazySimpleSerDe; only "\N" is NULL for it.
        if s == NULL_TEXT:
            return None
        if s == "" and t.kind in ("array", "map"):
            return [] if t.kind == "array" else {}
        return converter(s)

    return complex_or_null


def text_converter(hive_type: str | HiveType) -> Callable[[str], object]:
    """A function from a delimited/regex field's text to the column's Python value (ValueError if it can't)."""
    return _text_converter(_as_type(hive_type), 0)


# ---- from JSON ------------------------------------------------------------------------------------


def _json_int(bits: int, from_text: Callable[[str], object]) -> Converter:
    low, high = -(1 << bits), (1 << bits) - 1

    def convert(v: object) -> object:
        if type(v) is int:
            if not low <= v <= high:
                raise ValueError(f"{v} is out of range")
            return v
        if type(v) is float and v.is_integer():
            return convert(int(v))
        if type(v) is str:
            return from_text(v)
        if v is None:
            return None
        raise ValueError(f"not an integer: {v!r}")

    return convert


def _json_float(single: bool, from_text: Callable[[str], object]) -> Converter:
    def convert(v: object) -> object:
        if type(v) is float or type(v) is int:
            return _fit_float(float(v)) if single else float(v)
        if type(v) is str:
            return from_text(v)
        if v is None:
            return None
        raise ValueError(f"not a number: {v!r}")

    return convert


def _json_decimal(t: HiveType, from_text: Callable[[str], object]) -> Converter:
    fit = _decimal_fitter(*t.params)

    def convert(v: object) -> object:
        if type(v) is int or type(v) is decimal.Decimal:
            return fit(decimal.Decimal(v))
        if type(v) is float:
            return fit(decimal.Decimal(repr(v)))  # the JSON text's digits, not the binary float's
        if type(v) is str:
            return from_text(v)
        if v is None:
            return None
        raise ValueError(f"not a decimal: {v!r}")

    return convert


def _json_string(t: HiveType) -> Converter:
    shape = _string_shaper(t) or str

    def convert(v: object) -> object:
        if type(v) is str:
            return shape(v)
        if v is None:
            return None
        if isinstance(v, (list, dict)):
            raise ValueError(f"not a string: {v!r}")
        # JsonSerDe reads a scalar token's text into a string column: 12 -> "12", true -> "true".
        return shape("true" if v is True else "false" if v is False else str(v))

    return convert


def _json_bool(v: object) -> object:
    if type(v) is bool:
        return v
    if type(v) is str:
        return _bool_from_text(v)
    if v is None:
        return None
    raise ValueError(f"not a boolean: {v!r}")


def _json_from_string_only(name: str, from_text: Callable[[str], object]) -> Converter:
    def convert(v: object) -> object:
        if type(v) is not str:
            if v is None:
                return None
            raise ValueError(f"a {name} must be a JSON string, not {v!r}")
        return from_text(v)

    return convert


def _json_binary(v: object) -> object:
    if type(v) is not str:
        if v is None:
            return None
        raise ValueError(f"binary must be a base64 JSON string, not {v!r}")
    try:
        return base64.b64decode(v, validate=True)
    except binascii.Error:
        raise ValueError(f"not base64: {v!r}") from None


def _json_primitive(t: HiveType) -> Converter:
    from_text = _primitive_from_text(t)
    kind = t.kind
    if kind in INT_RANGES:
        return _json_int(INT_RANGES[kind], from_text)
    if kind in ("float", "double"):
        return _json_float(kind == "float", from_text)
    if kind == "decimal":
        return _json_decimal(t, from_text)
    if kind in STRING_KINDS:
        return _json_string(t)
    if kind == "boolean":
        return _json_bool
    if kind == "binary":
        return _json_binary
    return _json_from_string_only(kind, from_text)


def _json_converter(t: HiveType) -> Converter:
    if t.kind in PRIMITIVES:
        return _json_primitive(t)  # each takes None itself, off its fast path
    if t.kind == "array":
        item = _json_converter(t.children[0])

        def convert(v: object) -> object:
            if type(v) is not list:
                raise ValueError(f"not a JSON array: {v!r}")
            return [item(x) for x in v]

    elif t.kind == "map":
        # JSON object keys are strings: a map<int,...> key "1" goes through the text rules.
        key_conv = _text_converter(t.children[0], 1)
        value_conv = _json_converter(t.children[1])

        def convert(v: object) -> object:
            if type(v) is not dict:
                raise ValueError(f"not a JSON object: {v!r}")
            result = {}
            for key, value in v.items():
                k = key_conv(key)
                if k is None:
                    raise ValueError(f"map key {key!r} is NULL")
                result[k] = value_conv(value)
            return result

    else:
        fields = [(n, _json_converter(c)) for n, c in zip(t.field_names, t.children, strict=True)]

        def convert(v: object) -> object:
            if type(v) is not dict:
                raise ValueError(f"not a JSON object: {v!r}")
            lowered = {k.lower(): x for k, x in v.items()}
            return {n: f(lowered.get(n)) for n, f in fields}

    def value_or_null(v: object) -> object:
        return None if v is None else convert(v)

    return value_or_null


def json_converter(hive_type: str | HiveType) -> Converter:
    """A function from a decoded JSON value to the column's Python value (ValueError if it can't).

    JSON null is NULL; a JSON string is read by the text rules for the non-string types ("" is NULL).
    """
    return _json_converter(_as_type(hive_type))

"""Hive's bucket number for a row: which bucket file of a bucketed table the row belongs in.

A row's bucket is ``(h & 0x7fffffff) % num_buckets`` where ``h`` folds the bucket columns' hashes
left to right as ``h = 31 * h + field_hash`` in 32-bit arithmetic (NULL hashes to 0). Rows in the
wrong file break Hive's bucket map joins and sampling (Hive < 1.3 had exactly that bug), so each
type's field hash follows Hive's own:

* version 1 (Hive 2.x, and tables without ``bucketing_version=2``): ObjectInspectorUtils.hashCode:
  the Java hashCode of the value or of its Writable (int as is, bigint and double folded high ^ low,
  float's bits, STRING as ``31 * r + byte`` over UTF-8 from 0, varchar/char/binary as Hadoop's
  hashBytes (the same from 1; char with trailing spaces stripped), date as days since 1970,
  timestamp as ``(seconds << 30 | nanos)`` folded, decimal as the normalized BigDecimal's hashCode).
* version 2 (Hive 3 ``bucketing_version=2``): Murmur3 (x86 32-bit, seed 104729, Hive's variant whose
  tail bytes are sign-extended) over the value's big-endian bytes; tinyint and boolean keep their
  plain value. Two of Hive's quirks are kept on purpose: float and double hash the IEEE bytes of the
  *bit pattern converted back to a number* (``putFloat(floatToIntBits(f))`` widens the int to a
  float), and decimal hashes only the unscaled integer's bytes (1.5 and 15 share a hash).

Values are what hmsproxy.streaming.types produces. They are first made what Hive would store in the
column: float rounded to 32 bits, decimal(p,s) rounded half-up to s places (NULL if it then has more
than p - s integer digits), varchar(n) and char(n) cut to n characters. Naive timestamps are wall
clock times; version 1 hashes them as Hive does in a JVM whose time zone is UTC (Hive 2 converts
the wall clock through the JVM's zone, so a Hive writer in another zone buckets timestamps
differently), version 2 is zone-free as in Hive 3. Aware timestamps are taken in UTC.

Before 1582-10-15 the calendars part: version 1 hashes a date's or timestamp's year-month-day as
Hive 2.3 does, through java.sql's Julian calendar (Hive 3 does so for timestamps under version 1, but
counts dates in the proleptic Gregorian calendar); version 2 counts proleptic Gregorian days as Hive 3
does and as the data files hold them. Binary under version 2 hashes exactly the value's bytes; Hive 3
hashes its BytesWritable's whole backing array, which after a set() has spare capacity, so Hive 3's
own binary buckets depend on how the Writable was filled.
"""

from __future__ import annotations

import datetime
import decimal
import math
import re
import struct
from collections.abc import Callable, Sequence
from functools import lru_cache
from operator import mul

__all__ = ["bucket_of", "bucketer", "hive_hash", "murmur3_32"]

_M32 = 0xFFFFFFFF
_M64 = 0xFFFFFFFFFFFFFFFF
_SEED = 104729
_EPOCH_DATE = datetime.date(1970, 1, 1)
_EPOCH = datetime.datetime(1970, 1, 1)
_EPOCH_JULIAN_DAY_NUMBER = 2440588
_GREGORIAN_REFORM = datetime.date(1582, 10, 15)
_FLOAT_NAN_BITS = 0x7FC00000  # Float.floatToIntBits folds every NaN into this one
_DOUBLE_NAN_BITS = 0x7FF8000000000000

Hasher = Callable[[object], int]  # a non-NULL value -> its field hash, as an unsigned 32-bit int


def _signed32(x: int) -> int:
    x &= _M32
    return x - 0x100000000 if x & 0x80000000 else x


def murmur3_32(data: bytes, seed: int = _SEED) -> int:
    """Hive's Murmur3.hash32 as an unsigned 32-bit int.

    Standard MurmurHash3 x86_32 except for the 1-3 tail bytes, which Hive reads as signed Java
    bytes (so a tail byte >= 0x80 sets the bits above it).
    """
    h = seed & _M32
    n = len(data)
    blocks = n >> 2
    if blocks:  # the block mix inlined: this loop is most of the time spent on strings
        for k in struct.unpack_from(f"<{blocks}I", data):
            k = (k * 0xCC9E2D51) & _M32
            k = (((k << 15) | (k >> 17)) * 0x1B873593) & _M32
            h ^= k
            h = ((((h << 13) | (h >> 19)) & _M32) * 5 + 0xE6546B64) & _M32
    end = blocks << 2
    if n > end:
        k = 0
        for i in range(n - end):
            b = data[end + i]
            k ^= ((b - 256) if b & 0x80 else b) << (8 * i)
        k = (k & _M32) * 0xCC9E2D51 & _M32
        k = ((k << 15) | (k >> 17)) & _M32
        h ^= (k * 0x1B873593) & _M32
    h ^= n
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _M32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _M32
    return h ^ (h >> 16)


def _murmur_int(v: int) -> int:
    """murmur3_32 of the 4 big-endian bytes of an int, without building them (the common key)."""
    v &= _M32
    k = ((v >> 24) | ((v >> 8) & 0xFF00) | ((v << 8) & 0xFF0000) | ((v << 24) & 0xFF000000)) * 0xCC9E2D51 & _M32
    k = (((k << 15) | (k >> 17)) * 0x1B873593) & _M32
    h = _SEED ^ k
    h = (((((h << 13) | (h >> 19)) & _M32) * 5 + 0xE6546B64) & _M32) ^ 4
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _M32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _M32
    return h ^ (h >> 16)


# ---- values as Hive stores them ----


def _float32(v: float) -> float:
    try:
        return struct.unpack(">f", struct.pack(">f", v))[0]
    except OverflowError:  # Java's (float) cast overflows to infinity
        return math.copysign(math.inf, v)


def _float_bits(v: float) -> int:
    if math.isnan(v):
        return _FLOAT_NAN_BITS
    return struct.unpack(">I", struct.pack(">f", _float32(v)))[0]


def _double_bits(v: float) -> int:
    if math.isnan(v):
        return _DOUBLE_NAN_BITS
    return struct.unpack(">Q", struct.pack(">d", v))[0]


def _fold64(a: int) -> int:
    a &= _M64
    return ((a >> 32) ^ a) & _M32


def _decimal_parts(value: object, precision: int, scale: int) -> tuple[int, int] | None:
    """(unscaled, scale) of Hive's normalized decimal in a decimal(precision, scale) column, or None for NULL."""
    d = value if isinstance(value, decimal.Decimal) else decimal.Decimal(str(value) if isinstance(value, float) else value)
    if not d.is_finite():
        raise ValueError(f"{value!r} is not a decimal Hive can store")
    ctx = decimal.Context(prec=200, rounding=decimal.ROUND_HALF_UP)
    if d.as_tuple().exponent < -scale:
        d = d.quantize(decimal.Decimal(1).scaleb(-scale), context=ctx)
    if d.adjusted() + 1 > precision - scale and d != 0:
        return None  # Hive's enforcePrecisionScale makes it NULL
    sign, digits, exp = d.normalize(ctx).as_tuple()
    unscaled = int("".join(map(str, digits)) or "0")
    if unscaled == 0:
        return 0, 0
    if exp > 0:  # normalize() wrote 100 as 1E+2; Hive keeps scale 0
        unscaled, exp = unscaled * 10**exp, 0
    return (-unscaled if sign else unscaled), -exp


def _julian_shift(d: datetime.date) -> int:
    """Days from the proleptic Gregorian day to the day java.sql's hybrid calendar gives the same
    year-month-day (Julian before 1582-10-15, where Hive 2's text parsing puts old dates)."""
    if d >= _GREGORIAN_REFORM:
        return 0
    a = (14 - d.month) // 12
    y, m = d.year + 4800 - a, d.month + 12 * a - 3
    julian_day_number = d.day + (153 * m + 2) // 5 + 365 * y + y // 4 - 32083
    return julian_day_number - _EPOCH_JULIAN_DAY_NUMBER - (d - _EPOCH_DATE).days


def _timestamp_parts(v: datetime.datetime, hybrid: bool = False) -> tuple[int, int]:
    """(seconds since 1970 rounded down, nanos) of a wall clock time read as UTC."""
    if v.tzinfo is not None:
        v = v.astimezone(datetime.UTC).replace(tzinfo=None)
    delta = v - _EPOCH
    days = delta.days + (_julian_shift(v.date()) if hybrid else 0)
    return days * 86400 + delta.seconds, delta.microseconds * 1000


def _date_days(v: object, hybrid: bool = False) -> int:
    if isinstance(v, datetime.datetime):
        v = v.date()
    return (v - _EPOCH_DATE).days + (_julian_shift(v) if hybrid else 0)


def _utf8(v: object) -> bytes:
    return v if isinstance(v, bytes) else str(v).encode("utf-8")


def _limit(length: int, pad: bool) -> Callable[[object], bytes]:
    """varchar(n) keeps the first n characters; char(n) too, hashed without its trailing spaces."""

    def clip(v: object) -> bytes:
        s = v.decode("utf-8") if isinstance(v, bytes) else str(v)
        s = s[:length]
        return (s.rstrip(" ") if pad else s).encode("utf-8")

    return clip


# ---- version 1: Java hashCodes ----


_POWERS: list[int] = [1]  # 31**i mod 2**32, grown on demand


def _powers(n: int) -> list[int]:
    while len(_POWERS) <= n:
        _POWERS.append((_POWERS[-1] * 31) & _M32)
    return _POWERS


def _bytes_hash(data: bytes, start: int) -> int:
    """h = 31 * h + b over signed bytes from ``start``; ``start`` 1 is Hadoop's WritableComparator.hashBytes.

    Summed as start * 31**n + sum(b_i * 31**(n-1-i)) with C-level map/sum; a byte >= 0x80 counts 256 less.
    """
    n = len(data)
    pw = _powers(n)
    weights = pw[n - 1 :: -1] if n else []
    h = start * pw[n] + sum(map(mul, data, weights))
    if not data.isascii():
        h -= 256 * sum(w for b, w in zip(data, weights) if b & 0x80)
    return h & _M32


def _biginteger_hash(n: int) -> int:
    """java.math.BigInteger.hashCode: its magnitude's 32-bit words folded by 31, times the sign."""
    mag = abs(n)
    h = 0
    for (w,) in struct.iter_unpack(">I", mag.to_bytes(((mag.bit_length() + 31) // 32) * 4, "big")):
        h = (31 * h + w) & _M32
    return (-h if n < 0 else h) & _M32


def _v1_decimal(precision: int, scale: int) -> Hasher:
    def h(v: object) -> int:
        parts = _decimal_parts(v, precision, scale)
        if parts is None:
            return 0
        unscaled, s = parts
        return (31 * _biginteger_hash(unscaled) + s) & _M32  # BigDecimal.hashCode

    return h


def _v1_timestamp(v: object) -> int:
    seconds, nanos = _timestamp_parts(v, hybrid=True)
    return _fold64((seconds << 30) | nanos)


# ---- version 2: Murmur3 over bytes ----


def _vlong(n: int) -> bytes:
    """Hadoop's WritableUtils variable-length long, as TimestampWritable writes its fields."""
    if -112 <= n <= 127:
        return bytes([n & 0xFF])
    first = -112
    if n < 0:
        n = ~n
        first = -120
    size = (n.bit_length() + 7) // 8
    return bytes([(first - size) & 0xFF]) + n.to_bytes(size, "big")


def _timestamp_bytes(v: object) -> bytes:
    """TimestampWritable's serialized form: 31 bits of seconds (top bit: more follows), then the
    nanos with their 9 digits reversed as a VLong (negative: a VLong of the seconds' high bits follows)."""
    seconds, nanos = _timestamp_parts(v)
    reversed_nanos = int(f"{nanos:09d}"[::-1]) if nanos else 0
    wide = seconds < 0 or seconds > 0x7FFFFFFF
    first = seconds & 0x7FFFFFFF
    if wide or reversed_nanos:
        first |= 0x80000000
    out = first.to_bytes(4, "big")
    if wide:
        out += _vlong(-1 - reversed_nanos) + _vlong(seconds >> 31)
    elif reversed_nanos:
        out += _vlong(reversed_nanos)
    return out


def _v2_decimal(precision: int, scale: int) -> Hasher:
    def h(v: object) -> int:
        parts = _decimal_parts(v, precision, scale)
        if parts is None:
            return 0
        n = parts[0]  # BigInteger.toByteArray: minimal two's complement, the scale is not hashed
        return murmur3_32(n.to_bytes((n if n >= 0 else ~n).bit_length() // 8 + 1, "big", signed=True))

    return h


def _v2_float(v: object) -> int:
    as_number = float(_signed32(_float_bits(v)))  # Java widens the int bits to a float
    return murmur3_32(struct.pack(">f", as_number))


def _v2_double(v: object) -> int:
    bits = _double_bits(v)
    return murmur3_32(struct.pack(">d", float(bits - (1 << 64) if bits >> 63 else bits)))


# ---- types ----

_PARAMS = re.compile(r"^(\w+)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?$")


def _int32(v: object) -> int:
    return int(v) & _M32


def _hasher(hive_type: str, version: int) -> Hasher:
    m = _PARAMS.match(hive_type.strip().lower())
    name = m.group(1) if m else ""
    if name in ("decimal", "numeric"):
        precision = int(m.group(2) or 10)
        scale = int(m.group(3) or 0)
        return (_v1_decimal if version == 1 else _v2_decimal)(precision, scale)
    if name in ("varchar", "char") and m.group(2):
        clip = _limit(int(m.group(2)), pad=name == "char")
        if version == 1:
            return lambda v: _bytes_hash(clip(v), 1)
        return lambda v: murmur3_32(clip(v))
    simple = (_V1 if version == 1 else _V2).get(name if m and not m.group(2) else "")
    if simple is None:
        raise ValueError(f"cannot bucket by a column of type {hive_type!r}")
    return simple


_V1: dict[str, Hasher] = {
    "boolean": lambda v: 1 if v else 0,
    "tinyint": _int32,
    "smallint": _int32,
    "int": _int32,
    "integer": _int32,
    "bigint": lambda v: _fold64(int(v)),
    "float": lambda v: _float_bits(v),
    "double": lambda v: _fold64(_double_bits(v)),
    "string": lambda v: _bytes_hash(_utf8(v), 0),  # ObjectInspectorUtils' own loop, from 0
    "binary": lambda v: _bytes_hash(bytes(v), 1),
    "date": lambda v: _date_days(v, hybrid=True) & _M32,
    "timestamp": _v1_timestamp,
}

_V2: dict[str, Hasher] = {
    "boolean": lambda v: 1 if v else 0,
    "tinyint": _int32,  # not hashed
    "smallint": lambda v: murmur3_32(struct.pack(">h", int(v))),
    "int": lambda v: _murmur_int(int(v)),
    "integer": lambda v: _murmur_int(int(v)),
    "bigint": lambda v: murmur3_32((int(v) & _M64).to_bytes(8, "big")),
    "float": _v2_float,
    "double": _v2_double,
    "string": lambda v: murmur3_32(_utf8(v)),
    "binary": lambda v: murmur3_32(bytes(v)),
    "date": lambda v: _murmur_int(_date_days(v)),
    "timestamp": lambda v: murmur3_32(_timestamp_bytes(v)),
}


@lru_cache(maxsize=256)
def _row_hasher(hive_types: tuple[str, ...], bucketing_version: int) -> Callable[[Sequence[object]], int]:
    if bucketing_version not in (1, 2):
        raise ValueError(f"unknown bucketing_version {bucketing_version!r} (Hive knows 1 and 2)")
    hashers = tuple(_hasher(t, bucketing_version) for t in hive_types)
    width = len(hashers)

    def row_hash(values: Sequence[object]) -> int:
        if len(values) != width:
            raise ValueError(f"{len(values)} values for {width} bucket columns")
        h = 0
        for hasher, v in zip(hashers, values):
            h = (31 * h + (0 if v is None else hasher(v))) & _M32
        return h

    return row_hash


def hive_hash(values: Sequence[object], hive_types: Sequence[str], bucketing_version: int = 1) -> int:
    """The row's signed 32-bit hash, as ObjectInspectorUtils.getBucketHashCode (v2) or its v1 twin returns it."""
    return _signed32(_row_hasher(tuple(hive_types), bucketing_version)(values))


@lru_cache(maxsize=256)
def bucketer(hive_types: tuple[str, ...], num_buckets: int, bucketing_version: int = 1) -> Callable[[Sequence[object]], int]:
    """The bucket function of one table: ``values -> bucket number``, the types resolved once."""
    if num_buckets <= 0:
        raise ValueError(f"number of buckets must be > 0, not {num_buckets}")
    row_hash = _row_hasher(tuple(hive_types), bucketing_version)
    return lambda values: (row_hash(values) & 0x7FFFFFFF) % num_buckets


def bucket_of(values: Sequence[object], hive_types: Sequence[str], num_buckets: int, bucketing_version: int = 1) -> int:
    """Hive's bucket number (0 .. num_buckets - 1) of a row whose bucket columns hold ``values``."""
    return bucketer(tuple(hive_types), num_buckets, bucketing_version)(values)

"""bucket_of against Hive's own code, value by value.

Version 1 against Hive 2.3's ObjectInspectorUtils in pyspark's jars; version 2 against Hive 3.1.3's
(hive-serde from Maven; skipped when Maven cannot fetch it). Each oracle is a plain py4j JVM on those
jars rather than the SparkSession's (the same classes, no metastore needed, and 3.1's serde cannot
share a classpath with Spark's 2.3). Thousands of generated values per type with the edge cases
first, then rows of 1-4 bucket columns of mixed types (with NULLs) over several bucket counts.
"""

from __future__ import annotations

import datetime
import random
import struct
from decimal import Decimal

import pytest

from hmsproxy.streaming.buckets import bucket_of, hive_hash
from tests.contract.jars import JarsUnavailable
from tests.support.hive_buckets import HiveOracle, hive31_classpath, pyspark_jars_dir

pytestmark = pytest.mark.spark

PER_TYPE = 2000
ROWS = 1500
BUCKET_COUNTS = (1, 2, 3, 4, 7, 8, 16, 31, 32, 64, 100, 256, 1000)
EPOCH = datetime.datetime(1970, 1, 1)
UNICODE = "aZ09 _-,é߷ßüñ中文日本語한국어\u20ac\U0001f600\U00010348\u00a0\t"


def _text(rng: random.Random, longest: int) -> str:
    return "".join(rng.choice(UNICODE) for _ in range(rng.randint(0, longest)))


def _float32_from_bits(bits: int) -> float:
    return struct.unpack(">f", struct.pack(">I", bits))[0]


def _double_from_bits(bits: int) -> float:
    return struct.unpack(">d", struct.pack(">Q", bits))[0]


def _timestamp(rng: random.Random) -> datetime.datetime:
    # 0001..9999, the Julian years before 1582-10-15 included.
    seconds = rng.randint(-62_135_596_800, 253_402_300_799)
    micros = rng.choice((0, rng.randint(0, 999_999), rng.randint(1, 999) * 1000, 500_000))
    return EPOCH + datetime.timedelta(seconds=seconds, microseconds=micros)


def _decimal(rng: random.Random) -> Decimal:
    digits = rng.randint(1, 38)
    unscaled = rng.randint(0, 10**digits - 1) * rng.choice((1, -1))
    return Decimal(unscaled).scaleb(-rng.randint(0, min(digits + 2, 38)))


EDGES: dict[str, list] = {
    "boolean": [True, False],
    "tinyint": list(range(-128, 128)),
    "smallint": [0, 1, -1, 32767, -32768, 255, 256, -256],
    "int": [0, 1, -1, 2**31 - 1, -(2**31), 65535, 65536, -65536, 31, -31],
    "bigint": [0, 1, -1, 2**63 - 1, -(2**63), 2**31, -(2**31) - 1, 2**32, -(2**32), 0xFFFFFFFF],
    "float": [
        0.0,
        -0.0,
        1.0,
        -1.0,
        float("nan"),
        float("inf"),
        float("-inf"),
        3.4028234663852886e38,
        1e39,
        -1e39,
        1.401298464324817e-45,
        0.1,
    ],
    "double": [0.0, -0.0, 1.0, -1.0, float("nan"), float("inf"), float("-inf"), 1.7976931348623157e308, 5e-324, 0.1, 2.0**63],
    "string": ["", " ", "a", "ab", "abc", "abcd", "abcde", "\u00e9", "\u20ac", "\U0001f600", "x" * 300, "é" * 3, "\x7f\x80"],
    "varchar(10)": ["", "short", "exactly10!", "longer than ten", "trailing  ", "\U0001f600" * 12, "é" * 11],
    "char(5)": ["", "a", "a    ", "abcde", "abcdefgh", "  x  ", "\U0001f600\U0001f600 ", "     "],
    "binary": [b"", b"\x00", b"\xff", b"\x80\x7f", b"abc", b"\xff\xff\xff", bytes(range(256))],
    "date": [
        datetime.date(1970, 1, 1),
        datetime.date(1969, 12, 31),
        datetime.date(1600, 1, 1),
        datetime.date(9999, 12, 31),
        datetime.date(2000, 2, 29),
    ],
    "timestamp": [
        EPOCH,
        EPOCH - datetime.timedelta(microseconds=1),
        EPOCH + datetime.timedelta(microseconds=1),
        datetime.datetime(2038, 1, 19, 3, 14, 7),  # the last second in 31 bits
        datetime.datetime(2038, 1, 19, 3, 14, 8),
        datetime.datetime(2038, 1, 19, 3, 14, 8, 1),
        datetime.datetime(1969, 12, 31, 23, 59, 59, 500000),
        datetime.datetime(1600, 1, 1),
        datetime.datetime(1, 1, 1),
        datetime.datetime(1582, 10, 4, 23, 59, 59, 999999),
        datetime.datetime(1582, 10, 15),
        datetime.datetime(9999, 12, 31, 23, 59, 59, 999999),
        datetime.datetime(2026, 11, 25, 12, 34, 56, 123456),
        datetime.datetime(2026, 11, 25, 12, 34, 56, 100000),
    ],
    "decimal(10,2)": [
        "0",
        "0.00",
        "1.5",
        "1.50",
        "-1.5",
        "15",
        "100",
        "12345678.99",
        "123456789.99",
        "0.005",
        "0.004",
        "-0.005",
        "99999999.995",
    ],
    "decimal(38,18)": ["0", "1E-18", "1E-19", "12345678901234567890.123456789012345678", "-99999999999999999999.999999999999999999"],
    "decimal(5,0)": ["0", "99999", "100000", "-99999", "0.5", "-0.5", "1E+2", "12.3"],
    "decimal": ["0", "9999999999", "10000000000", "-1", "0.4", "0.5"],
}


def _generated(hive_type: str, rng: random.Random) -> object:
    name = hive_type.split("(")[0]
    if name == "boolean":
        return rng.random() < 0.5
    if name == "tinyint":
        return rng.randint(-128, 127)
    if name == "smallint":
        return rng.randint(-32768, 32767)
    if name == "int":
        return rng.choice((rng.randint(-(2**31), 2**31 - 1), rng.randint(-1000, 1000)))
    if name == "bigint":
        return rng.choice((rng.randint(-(2**63), 2**63 - 1), rng.randint(-(2**33), 2**33)))
    if name == "float":
        return rng.choice((_float32_from_bits(rng.getrandbits(32)), rng.uniform(-1e6, 1e6), _double_from_bits(rng.getrandbits(64))))
    if name == "double":
        return rng.choice((_double_from_bits(rng.getrandbits(64)), rng.uniform(-1e6, 1e6), float(rng.randint(-(2**60), 2**60))))
    if name in ("string", "varchar", "char"):
        return _text(rng, 14 if name != "string" else 40)
    if name == "binary":
        return rng.randbytes(rng.randint(0, 24))
    if name == "date":
        return datetime.date(1, 1, 1) + datetime.timedelta(days=rng.randint(0, 3_652_058))
    if name == "timestamp":
        return _timestamp(rng)
    if name == "decimal":
        return _decimal(rng)
    raise AssertionError(hive_type)


def _values(hive_type: str, count: int, seed: int) -> list:
    rng = random.Random(f"{hive_type}/{seed}")
    edges = [Decimal(v) if hive_type.startswith("decimal") else v for v in EDGES[hive_type]]
    return edges + [_generated(hive_type, rng) for _ in range(count)]


@pytest.fixture(scope="module")
def hive23():
    try:
        oracle = HiveOracle([str(p) for p in sorted(pyspark_jars_dir().glob("*.jar"))], hive3=False)
    except JarsUnavailable as exc:
        pytest.skip(str(exc))
    yield oracle
    oracle.close()


@pytest.fixture(scope="module")
def hive31():
    try:
        classpath = hive31_classpath()
    except JarsUnavailable as exc:
        pytest.skip(f"Hive 3.1.3's serde jars are not available: {exc}")
    oracle = HiveOracle(classpath, hive3=True)
    yield oracle
    oracle.close()


def _check_fields(oracle: HiveOracle, hive_type: str, version: int) -> int:
    values = _values(hive_type, PER_TYPE, version)
    mismatches = []
    for v in values:
        ours = hive_hash([v], [hive_type], version)
        theirs = oracle.field_hash(hive_type, v, murmur=version == 2)
        if ours != theirs:
            mismatches.append((v, ours, theirs))
    assert not mismatches, f"{hive_type} v{version}: {len(mismatches)}/{len(values)} differ, first: {mismatches[:5]}"
    return len(values)


TYPES = list(EDGES)


@pytest.mark.parametrize("hive_type", TYPES)
def test_version_1_field_hashes_are_hive_2_3s(hive23, hive_type):
    _check_fields(hive23, hive_type, 1)


@pytest.mark.parametrize("hive_type", TYPES)
def test_version_2_field_hashes_are_hive_3_1s_murmur(hive31, hive_type):
    _check_fields(hive31, hive_type, 2)


def _rows(seed: int) -> list[tuple[list[str], list]]:
    rng = random.Random(seed)
    rows = []
    for _ in range(ROWS):
        types = [rng.choice(TYPES) for _ in range(rng.randint(1, 4))]
        values = [None if rng.random() < 0.1 else _generated(t, rng) for t in types]
        rows.append((types, values))
    return rows


@pytest.mark.parametrize("version", [1, 2])
def test_bucket_numbers_of_mixed_rows_are_hives(request, version):
    oracle: HiveOracle = request.getfixturevalue("hive23" if version == 1 else "hive31")
    rng = random.Random(version)
    mismatches = []
    for types, values in _rows(version):
        n = rng.choice(BUCKET_COUNTS)
        ours = (hive_hash(values, types, version), bucket_of(values, types, n, bucketing_version=version))
        theirs = (oracle.row_hash(values, types, murmur=version == 2), oracle.bucket(values, types, n))
        if ours != theirs:
            mismatches.append((types, values, n, ours, theirs))
    assert not mismatches, f"{len(mismatches)}/{ROWS} rows differ, first: {mismatches[:3]}"


def test_hive_3_buckets_version_1_tables_as_hive_2_3_does_but_for_dates_before_1582(hive31):
    """Hive 3 hashes bucketing_version=1 tables with getBucketHashCodeOld, which is version 1 except
    that it counts dates before the Gregorian reform in the proleptic calendar (2.3: Julian)."""
    mismatches = {}
    for hive_type in TYPES:
        for v in _values(hive_type, 300, 3):
            if hive31.row_hash([v], [hive_type], murmur=False) != hive_hash([v], [hive_type], 1):
                mismatches.setdefault(hive_type, []).append(v)
    # Where the calendars give the same day number (the 3rd century) the two Hives agree again.
    julian = [v for v in _values("date", 300, 3) if hive_hash([v], ["date"], 1) != (v - EPOCH.date()).days]
    assert julian and max(julian) < datetime.date(1582, 10, 15)
    assert mismatches == {"date": julian}

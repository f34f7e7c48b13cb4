"""hmsproxy.streaming.buckets on known vectors.

Murmur3: the published MurmurHash3 x86_32 vectors (any seed, tails below 0x80, where Hive's variant
is the standard one) and Hive's own Murmur3.hash32 for tails with bytes >= 0x80. The field hashes
and bucket numbers were printed by Hive 2.3's and 3.1.3's ObjectInspectorUtils (the same calls as
tests/spark/test_streaming_buckets_spark.py, which checks thousands more against the jars).
"""

from __future__ import annotations

import datetime
from decimal import Decimal

import pytest

from hmsproxy.streaming.buckets import bucket_of, bucketer, hive_hash, murmur3_32


def signed(x: int) -> int:
    return x - (1 << 32) if x >= 1 << 31 else x


@pytest.mark.parametrize(
    "data, seed, expected",
    [
        (b"", 0, 0),
        (b"", 1, 0x514E28B7),
        (b"", 0xFFFFFFFF, 0x81F16F39),
        (b"\x00\x00\x00\x00", 0, 0x2362F9DE),
        (b"\x21\x43\x65\x87", 0, 0xF55B516B),
        (b"\x21\x43\x65", 0, 0x7E4A8634),
        (b"\x21\x43", 0, 0xA0F7B07A),
        (b"\x21", 0, 0x72661CF4),
        (b"Hello, world!", 1234, 0xFAF6CDB3),
        (b"The quick brown fox jumps over the lazy dog", 0, 0x2E4FF723),
    ],
)
def test_murmur3_is_the_standard_one_on_published_vectors(data, seed, expected):
    assert murmur3_32(data, seed) == expected


@pytest.mark.parametrize(
    "data, expected",
    [
        (b"", -965378730),
        (b"\xff", -1036465288),  # the standard algorithm gives another value: Hive sign-extends tail bytes
        (b"\x80\x7f\x01", 1017394373),
        (b"abcd\xe9", 570349858),
    ],
)
def test_murmur3_is_hives_with_seed_104729_and_signed_tail_bytes(data, expected):
    assert signed(murmur3_32(data)) == expected


# (hive type, value, Hive 2.3 ObjectInspectorUtils.hashCode, Hive 3.1.3 hashCodeMurmur)
FIELDS = [
    ("int", 0, 0, 1362653161),
    ("int", -1, -1, 1626716813),
    ("bigint", -1, 0, -237789309),
    ("double", 1.5, 1073217536, 76905473),
    ("float", 1.5, 1069547520, -1009260869),
    ("string", "abc", 96354, -885266671),
    ("string", "é", -1978, -527561221),
    ("varchar(2)", "abc", 4066, 398604456),  # cut to "ab"; Text.hashCode starts from 1, STRING from 0
    ("char(5)", "ab  ", 4066, 398604456),  # hashed without its trailing spaces
    ("binary", b"\x80", -97, 1104592682),
    ("date", datetime.date(1969, 12, 31), -1, 1626716813),
    ("date", datetime.date(1000, 1, 1), -354280, -427603763),  # 2.3: Julian 1000-01-01; 3.1: proleptic
    ("timestamp", datetime.datetime(1000, 1, 1, 12, 0, 0, 5), 937492664, -1701047536),
    ("timestamp", datetime.datetime(1969, 12, 31, 23, 59, 59, 500000), 573741823, 171279716),
    ("timestamp", datetime.datetime(2038, 1, 19, 3, 14, 8, 1), 536871912, -1551924810),
    ("decimal(10,2)", Decimal("1.50"), 466, 864210675),
    ("decimal(10,2)", Decimal("15"), 465, 864210675),  # version 2 hashes the unscaled digits only
    ("decimal(10,2)", Decimal("-0.005"), -29, -1036465288),  # rounded half up to -0.01
    ("tinyint", -5, -5, -5),
    ("smallint", -2, -2, 864251930),
    ("boolean", True, 1, 1),
]


@pytest.mark.parametrize("hive_type, value, v1, v2", FIELDS)
def test_field_hashes_are_hives(hive_type, value, v1, v2):
    assert hive_hash([value], [hive_type], 1) == v1
    assert hive_hash([value], [hive_type], 2) == v2


@pytest.mark.parametrize(
    "types, values, buckets, v1, v2",
    [
        (["int", "string"], [7, "x"], 8, 1, 2),
        (["int", "string"], [None, "x"], 8, 0, 2),
        (["bigint", "date", "string"], [-3, datetime.date(2026, 11, 25), "héllo"], 31, 16, 17),
    ],
)
def test_bucket_numbers_are_hives(types, values, buckets, v1, v2):
    assert bucket_of(values, types, buckets) == v1
    assert bucket_of(values, types, buckets, bucketing_version=2) == v2


def test_columns_fold_left_by_31_and_null_hashes_to_zero():
    assert hive_hash([1, 2], ["int", "int"]) == 31 * 1 + 2
    assert hive_hash([None, 2], ["int", "int"]) == 2
    assert hive_hash([None, None], ["string", "double"], 2) == 0


def test_negative_hashes_lose_their_sign_bit_before_the_modulo():
    # -1 & 0x7fffffff = 2147483647
    assert bucket_of([-1], ["int"], 10) == 2147483647 % 10
    assert bucket_of([-(2**31)], ["int"], 7) == 0


def test_values_are_first_made_what_the_column_stores():
    assert hive_hash([Decimal("1.234")], ["decimal(10,2)"]) == hive_hash([Decimal("1.23")], ["decimal(10,2)"])
    assert hive_hash([Decimal("1.235")], ["decimal(10,2)"]) == hive_hash([Decimal("1.24")], ["decimal(10,2)"])
    assert hive_hash([Decimal("123456789.99")], ["decimal(10,2)"]) == 0  # too many digits: NULL
    assert hive_hash([1.1], ["float"]) != hive_hash([1.1], ["double"])
    assert hive_hash(["abcdef"], ["varchar(3)"]) == hive_hash(["abc"], ["varchar(3)"])
    assert hive_hash(["ab"], ["char(4)"]) == hive_hash(["ab  "], ["char(4)"])
    assert hive_hash([float("nan")], ["double"]) == hive_hash([-float("nan")], ["double"])


def test_aware_timestamps_are_taken_in_utc():
    aware = datetime.datetime(2026, 1, 1, 2, 0, tzinfo=datetime.timezone(datetime.timedelta(hours=2)))
    naive = datetime.datetime(2026, 1, 1, 0, 0)
    for version in (1, 2):
        assert hive_hash([aware], ["timestamp"], version) == hive_hash([naive], ["timestamp"], version)


def test_type_names_are_read_as_the_metastore_writes_them():
    assert hive_hash([5], ["INT"]) == hive_hash([5], ["int"])
    assert hive_hash([Decimal(5)], ["decimal"]) == hive_hash([Decimal(5)], ["decimal(10,0)"])
    assert hive_hash(["x"], ["varchar( 10 )"], 2) == hive_hash(["x"], ["string"], 2)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: bucket_of([1], ["int"], 0), "must be > 0"),
        (lambda: bucket_of([1], ["int"], 4, bucketing_version=3), "bucketing_version"),
        (lambda: bucket_of([[1]], ["array<int>"], 4), "cannot bucket"),
        (lambda: bucket_of([1], ["varchar"], 4), "cannot bucket"),
        (lambda: bucket_of([1, 2], ["int"], 4), "2 values for 1"),
        (lambda: bucket_of([Decimal("NaN")], ["decimal(5,2)"], 4), "not a decimal"),
    ],
)
def test_what_hive_cannot_bucket_is_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_a_tables_bucket_function_is_resolved_once():
    assert bucketer(("int", "string"), 8, 1) is bucketer(("int", "string"), 8, 1)
    assert bucketer(("int", "string"), 8, 1)([7, "x"]) == 1

"""Streamed data files read by Spark 4 from Hive tables, value by value, for every column type.

The tables are created on the primary metastore directly (as Hive would, with the format's SerDe);
records of every type go through the writers, a RowBuffer and write_file into the table's location,
and Spark reads them through the proxy with its default settings for Hive tables; the real Hive 2.3
CLI reads the same files too.
"""

from __future__ import annotations

import base64
import datetime
import json
import uuid
from decimal import Decimal
from pathlib import Path

import pytest

from hmsproxy.features.skew.create import FORMATS
from hmsproxy.protocol import idl
from hmsproxy.streaming.datafiles import RowBuffer, write_file
from hmsproxy.streaming.writers import DelimitedInputWriter, StrictJsonWriter

pytestmark = pytest.mark.spark
hive = idl.hive
DB = "stream_files"

COLUMNS = [
    ("t_tiny", "tinyint"),
    ("t_small", "smallint"),
    ("t_int", "int"),
    ("t_big", "bigint"),
    ("t_float", "float"),
    ("t_double", "double"),
    ("t_dec", "decimal(12,3)"),
    ("t_string", "string"),
    ("t_varchar", "varchar(4)"),
    ("t_char", "char(5)"),
    ("t_bool", "boolean"),
    ("t_date", "date"),
    ("t_ts", "timestamp"),
    ("t_bin", "binary"),
    ("t_array", "array<int>"),
    ("t_map", "map<string,double>"),
    ("t_struct", "struct<a:int,b:array<string>>"),
]
NAMES = [name for name, _ in COLUMNS]

# Delimited text in LazySimpleSerDe's form (collections with \002, map keys with \003).
CSV = [
    "-128|-32768|-2147483648|-9223372036854775808|1.5|-2.25|123456789.125|héllo, world|abcdef|ab|TRUE|1970-01-01|2026-11-25 12:30:45.123456"
    "|aGVsbG8=|1\x02\\N\x023|k\x031.5\x02j\x03-2|7\x02x\x03y",
    "127|32767|2147483647|9223372036854775807|-0.0|1e300|-0.0005||abcd|abcde|false|9999-12-31|1900-01-01 00:00:00|raw bytes!|||\\N",
    "\\N|\\N|\\N|\\N|\\N|\\N|\\N|\\N|\\N|\\N|\\N|\\N|\\N|\\N|\\N|\\N|\\N",
]
JSON = [
    {
        "T_TINY": 5,
        "t_small": "12",
        "t_int": 7.0,
        "t_big": 2**40,
        "t_float": 0.25,
        "t_double": 3,
        "t_dec": 1.1,
        "t_string": "\\N",
        "t_varchar": "xyzzy",
        "t_char": "c",
        "t_bool": True,
        "t_date": "2024-02-29",
        "t_ts": "2000-02-29 23:59:59.999999999",
        "t_bin": base64.b64encode(b"\x00\xff").decode(),
        "t_array": [None],
        "t_map": {"z": None},
        "t_struct": {"A": 1, "b": []},
        "ignored": 1,
    },
    {},
]
EXPECTED = [
    (
        -128, -32768, -2147483648, -9223372036854775808, 1.5, -2.25, Decimal("123456789.125"), "héllo, world", "abcd", "ab   ", True,
        datetime.date(1970, 1, 1), datetime.datetime(2026, 11, 25, 12, 30, 45, 123456), bytearray(b"hello"), [1, None, 3],
        {"k": 1.5, "j": -2.0}, (7, ["x", "y"]),
    ),
    (
        127, 32767, 2147483647, 9223372036854775807, -0.0, 1e300, Decimal("-0.001"), "", "abcd", "abcde", False,
        datetime.date(9999, 12, 31), datetime.datetime(1900, 1, 1), bytearray(b"raw bytes!"), [], {}, None,
    ),
    (None,) * 17,
    (
        5, 12, 7, 2**40, 0.25, 3.0, Decimal("1.100"), "\\N", "xyzz", "c    ", True, datetime.date(2024, 2, 29),
        datetime.datetime(2000, 2, 29, 23, 59, 59, 999999), bytearray(b"\x00\xff"), [None], {"z": None}, (1, []),
    ),
    (None,) * 17,
]  # fmt: skip


# The same rows as Hive 2.3's CLI prints them (binary as hex; the map by key, as ORC's reader gives
# Hive a HashMap), sorted as text.
HIVE_ROWS = sorted(
    "\t".join(row)
    for row in [
        ["-128", "-9223372036854775808", "1.5", "123456789.125", "abcd", "ab   ", "true", "1970-01-01", "2026-11-25 12:30:45.123456",
         "68656C6C6F", "[1,null,3]", "1.5", "2", '{"a":7,"b":["x","y"]}'],
        ["127", "9223372036854775807", "-0.0", "-0.001", "abcd", "abcde", "false", "9999-12-31", "1900-01-01 00:00:00",
         "72617720627974657321", "[]", "NULL", "0", "NULL"],
        ["5", "1099511627776", "0.25", "1.100", "xyzz", "c    ", "true", "2024-02-29", "2000-02-29 23:59:59.999999",
         "00FF", "[null]", "NULL", "1", '{"a":1,"b":[]}'],
        ["NULL"] * 12 + ["-1", "NULL"],
        ["NULL"] * 12 + ["-1", "NULL"],
    ]
)  # fmt: skip


def create_table(client, name: str, file_format: str, location: Path) -> None:
    serde, input_format, output_format = FORMATS[file_format]
    sd = hive.StorageDescriptor(
        cols=[hive.FieldSchema(name=n, type=t, comment=None) for n, t in COLUMNS],
        location=location.as_uri(),
        inputFormat=input_format,
        outputFormat=output_format,
        compressed=False,
        numBuckets=-1,
        serdeInfo=hive.SerDeInfo(name=None, serializationLib=serde, parameters={"serialization.format": "1"}),
        bucketCols=[],
        sortCols=[],
        parameters={},
    )
    client.create_table(
        hive.Table(
            tableName=name, dbName=DB, owner="tester", sd=sd, partitionKeys=[], parameters={"EXTERNAL": "TRUE"}, tableType="EXTERNAL_TABLE"
        )
    )


@pytest.fixture(scope="module")
def primary_client(metastores, tmp_path_factory):
    client = metastores[0].client()
    if DB not in client.get_all_databases():
        location = tmp_path_factory.mktemp("stream-files") / f"{DB}.db"
        client.create_database(hive.Database(name=DB, description="streamed files", locationUri=location.as_uri(), parameters={}))
    yield client
    client.close()


def streamed_rows() -> RowBuffer:
    buf = RowBuffer(COLUMNS)
    csv = DelimitedInputWriter(NAMES, "|")
    csv.bind(COLUMNS)
    js = StrictJsonWriter()
    js.bind(COLUMNS)
    for record in CSV:
        buf.append(csv.parse(record.encode()))
    for obj in JSON:
        buf.append(js.parse(json.dumps(obj).encode()))
    return buf


def streamed_table(client, tmp_path: Path, file_format: str) -> str:
    """A new table of ``file_format`` holding one streamed file of the CSV and JSON records."""
    name = f"types_{file_format}_{uuid.uuid4().hex[:6]}"
    location = tmp_path / name
    location.mkdir()
    create_table(client, name, file_format, location)
    write_file(streamed_rows().to_arrow(), location / f"stream-1-{uuid.uuid4()}-00000.{file_format}", file_format)
    return name


@pytest.mark.parametrize("file_format", ["parquet", "orc"])
def test_every_type_reads_back_in_spark(spark, primary_client, tmp_path, file_format):
    assert_spark_reads_every_type(spark, streamed_table(primary_client, tmp_path, file_format), file_format)


@pytest.mark.parametrize("file_format", ["parquet", "orc"])
def test_every_type_streamed_through_the_proxy_reads_back_in_spark(spark, proxy, primary_client, tmp_path, file_format):
    """The same records through the streaming API: transaction batches over the proxy, published at commit."""
    from hmsproxy.streaming import HiveEndPoint

    name = f"api_{file_format}_{uuid.uuid4().hex[:6]}"
    (tmp_path / name).mkdir()
    create_table(primary_client, name, file_format, tmp_path / name)
    ep = HiveEndPoint(proxy.uri, DB, name)
    with ep.new_connection() as conn:
        for writer, records in (
            (DelimitedInputWriter(NAMES, "|"), [r.encode() for r in CSV]),
            (StrictJsonWriter(), [json.dumps(o).encode() for o in JSON]),
        ):
            batch = conn.fetch_transaction_batch(1, writer)
            batch.begin_next_transaction()
            assert batch.write_many(records) == []
            batch.commit()
            batch.close()
    spark.catalog.refreshTable(f"{DB}.{name}")
    assert_spark_reads_every_type(spark, name, file_format)


def assert_spark_reads_every_type(spark, name: str, file_format: str) -> None:
    rows = spark.sql(f"SELECT {', '.join(NAMES)} FROM {DB}.{name}").collect()
    got = sorted((tuple(r) for r in rows), key=repr)
    expected = sorted(EXPECTED, key=repr)
    assert len(got) == len(expected)
    for got_row, expected_row in zip(got, expected, strict=True):
        for column, g, e in zip(NAMES, got_row, expected_row, strict=True):
            assert _same(g, e), f"{file_format} {column}: Spark read {g!r}, expected {e!r}"


def _same(got, expected) -> bool:
    if isinstance(got, tuple):  # a struct comes as a Row, a tuple
        return tuple(got) == expected
    if isinstance(expected, float) and expected == 0.0:
        return got == 0.0 and str(got) == str(expected)  # -0.0 stays -0.0
    return got == expected and type(got) is type(expected)


@pytest.mark.parametrize("file_format", ["parquet", "orc"])
def test_hive_23_reads_the_same_files(proxy, hive_cli, primary_client, tmp_path, file_format):
    name = streamed_table(primary_client, tmp_path, file_format)
    select = "SELECT t_tiny, t_big, t_float, t_dec, t_varchar, t_char, t_bool, t_date, t_ts, hex(t_bin), t_array, t_map['k'], size(t_map), t_struct"
    result = hive_cli(proxy.uri, f"{select} FROM {DB}.{name};\n")
    assert result.returncode == 0, f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-3000:]}"
    rows = sorted(line for line in result.stdout.splitlines() if line.count("\t") == 13)
    assert rows == HIVE_ROWS

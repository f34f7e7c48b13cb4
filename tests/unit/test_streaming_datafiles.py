"""RowBuffer to Arrow and data files: the table's column names and types, INT96 timestamps in Parquet."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest

from hmsproxy.streaming.datafiles import RowBuffer, write_file

COLUMNS = [
    ("ID", "int"),
    ("amount", "decimal(6,2)"),
    ("at", "timestamp"),
    ("tags", "array<string>"),
    ("attrs", "map<string,int>"),
    ("p", "struct<x:double,d:date>"),
]
ROWS = [
    [1, Decimal("1.50"), datetime.datetime(2026, 11, 25, 8, 0, 1, 250000), ["a"], {"k": 1}, {"x": 1.0, "d": datetime.date(2026, 1, 2)}],
    [None, None, None, None, None, None],
    [3, Decimal("-0.01"), datetime.datetime(1900, 1, 1), [], {}, {"x": None, "d": None}],
]


def filled() -> RowBuffer:
    buf = RowBuffer(COLUMNS)
    for row in ROWS:
        buf.append(row)
    return buf


def test_row_buffer_to_arrow():
    buf = filled()
    assert len(buf) == 3
    table = buf.to_arrow()
    assert table.column_names == ["id", "amount", "at", "tags", "attrs", "p"]
    assert table.schema.field("amount").type == pa.decimal128(6, 2)
    assert [list(r.values()) for r in table.to_pylist(maps_as_pydicts="strict")] == ROWS
    buf.clear()
    assert len(buf) == 0 and buf.to_arrow().num_rows == 0


def test_row_buffer_rejects_rows_of_the_wrong_width_and_type():
    buf = RowBuffer([("a", "int")])
    buf.append([1, 2])
    with pytest.raises(ValueError):
        buf.to_arrow()
    buf = RowBuffer([("a", "int")])
    buf.append(["x"])
    with pytest.raises((TypeError, pa.ArrowInvalid)):
        buf.to_arrow()


def test_parquet_file_has_int96_timestamps_and_reads_back(tmp_path):
    path = tmp_path / "f.parquet"
    write_file(filled().to_arrow(), path, "parquet")
    schema = pq.ParquetFile(path).schema
    assert schema.column(2).physical_type == "INT96"
    assert schema.column(1).physical_type == "FIXED_LEN_BYTE_ARRAY"  # Hive 2.3 reads no other decimal
    back = pq.read_table(path)
    assert [list(r.values()) for r in back.to_pylist(maps_as_pydicts="strict")][:2] == ROWS[:2]


def test_orc_file_reads_back(tmp_path):
    path = tmp_path / "f.orc"
    write_file(filled().to_arrow(), path, "orc")
    back = orc.read_table(path)
    assert back.column_names == ["id", "amount", "at", "tags", "attrs", "p"]
    assert back.column("amount").to_pylist() == [Decimal("1.50"), None, Decimal("-0.01")]


def test_unknown_format(tmp_path):
    with pytest.raises(ValueError, match="avro"):
        write_file(filled().to_arrow(), tmp_path / "f", "avro")

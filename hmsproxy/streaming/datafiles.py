"""Rows to Arrow tables to data files that Spark 4 and Hive 2.3 read from a Parquet or ORC Hive table."""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq

from hmsproxy.streaming.types import arrow_type

FILE_FORMATS = ("parquet", "orc")
EXTENSIONS = {"parquet": "parquet", "orc": "orc"}


class RowBuffer:
    """The rows of one transaction (lists in the table's column order) until they become an Arrow table."""

    def __init__(self, columns: list[tuple[str, str]]):
        # Readers of Hive tables match file columns by lower-case name (Spark) or by position (Hive).
        self.schema = pa.schema([pa.field(name.lower(), arrow_type(hive_type)) for name, hive_type in columns])
        self._rows: list[list] = []
        self.append = self._rows.append  # one bound call per row; columns are built once in to_arrow

    def __len__(self) -> int:
        return len(self._rows)

    def clear(self) -> None:
        self._rows.clear()

    def to_arrow(self) -> pa.Table:
        width = len(self.schema)
        if any(len(row) != width for row in self._rows):
            raise ValueError(f"every row must have {width} values")
        columns = list(zip(*self._rows)) if self._rows else [()] * width
        arrays = [pa.array(values, type=field.type) for values, field in zip(columns, self.schema, strict=True)]
        return pa.Table.from_arrays(arrays, schema=self.schema)


def write_file(table: pa.Table, path: str | os.PathLike, file_format: str, filesystem=None) -> None:
    """Write ``table`` to ``path`` as one file of ``file_format`` ("parquet" or "orc"); ``path`` is in
    ``filesystem`` (a pyarrow file system: S3, HDFS, …) when given, a local path otherwise."""
    if file_format not in ("parquet", "orc"):
        raise ValueError(f"unknown file format {file_format!r} (one of {', '.join(FILE_FORMATS)})")
    if filesystem is None:
        _write(table, path, file_format)
        return
    with filesystem.open_output_stream(str(path)) as sink:
        _write(table, sink, file_format)


def _write(table: pa.Table, where, file_format: str) -> None:
    if file_format == "parquet":
        # INT96 timestamps: Hive 2.3's Parquet reader knows no other; Spark reads them as well.
        # Decimals stay fixed-length byte arrays (pyarrow's default), the only form Hive 2.3 reads.
        pq.write_table(table, where, compression="snappy", use_deprecated_int96_timestamps=True)
    else:
        orc.write_table(table, where, compression="snappy")

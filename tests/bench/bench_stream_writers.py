"""Streaming writers alone: rows/s of parse + RowBuffer + to_arrow + write_file, no metastore.

Run with ``.venv/bin/python -m tests.bench.bench_stream_writers [--rows N] [--format parquet|orc]``.
Not a pytest test. The records are the issue's benchmark rows: 5 columns (int, bigint, string,
double, timestamp) as CSV and as JSON. Each writer runs ``--repeats`` times, best run kept; both
wall and CPU time are printed, since CPU time is what a loaded machine doesn't distort.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from hmsproxy.streaming.datafiles import RowBuffer, write_file
from hmsproxy.streaming.writers import DelimitedInputWriter, RecordWriter, StrictJsonWriter

COLUMNS = [("id", "int"), ("big", "bigint"), ("name", "string"), ("score", "double"), ("at", "timestamp")]
NAMES = [name for name, _ in COLUMNS]


def csv_records(n: int) -> list[bytes]:
    return [f"{i},{i * 1000003},name-{i},{i * 0.5},2026-11-25 12:{i % 60:02d}:{i % 60:02d}.123".encode() for i in range(n)]


def json_records(n: int) -> list[bytes]:
    return [
        json.dumps(dict(zip(NAMES, [i, i * 1000003, f"name-{i}", i * 0.5, f"2026-11-25 12:{i % 60:02d}:{i % 60:02d}.123"]))).encode()
        for i in range(n)
    ]


@dataclass(frozen=True)
class Run:
    rows: int
    wall_s: float
    cpu_s: float

    @property
    def wall_rows_per_s(self) -> float:
        return self.rows / self.wall_s

    @property
    def cpu_rows_per_s(self) -> float:
        return self.rows / self.cpu_s


def one_transaction(writer: RecordWriter, records: list[bytes], path: Path, file_format: str) -> Run:
    """One transaction's worth of records, end to end: parse, buffer, Arrow, one file."""
    wall, cpu = time.perf_counter(), time.process_time()
    buf = RowBuffer(COLUMNS)
    parse, append = writer.parse, buf.append
    for record in records:
        append(parse(record))
    write_file(buf.to_arrow(), path, file_format)
    return Run(len(records), time.perf_counter() - wall, time.process_time() - cpu)


def best_of(writer: RecordWriter, records: list[bytes], file_format: str, repeats: int) -> Run:
    writer.bind(COLUMNS)
    with tempfile.TemporaryDirectory() as tmp:
        runs = [one_transaction(writer, records, Path(tmp) / f"f{i}.{file_format}", file_format) for i in range(repeats)]
    return min(runs, key=lambda r: r.wall_s)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--format", choices=("parquet", "orc"), default="parquet")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    for kind, writer, records in (
        ("csv", DelimitedInputWriter(NAMES, ","), csv_records(args.rows)),
        ("json", StrictJsonWriter(), json_records(args.rows)),
    ):
        run = best_of(writer, records, args.format, args.repeats)
        print(
            f"{kind:5} {args.format:8} {args.rows:>9,} rows: {run.wall_rows_per_s:>10,.0f} rows/s wall, {run.cpu_rows_per_s:>10,.0f} rows/s CPU"
        )


if __name__ == "__main__":
    main()

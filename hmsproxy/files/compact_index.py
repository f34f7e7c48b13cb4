"""The compact index of data files: which row groups (Parquet) or stripes (ORC) of which file
hold each combination of the indexed columns' values — the rows of a compact index table
(indexed columns, `_bucketname`, `_offsets`), and the fingerprint that says whether a base
partition still holds the files an index partition was built from.

Pure functions of a file at a time (pyarrow reads only the indexed columns, one row group or
stripe at a time), so a rebuild can run them on Spark's executors, one task per file.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from hmsproxy.files.storage import Entry, arrow_filesystem, data_files

#: A row of the index table: (indexed values..., file, offsets)
IndexRow = tuple


def file_rows(path: str, columns: list[str], file_format: str = "parquet") -> list[IndexRow]:
    """The index rows of one data file: one per distinct combination of `columns`' values, with the
    file and the sorted positions (row groups or stripes) holding it; nulls are values too."""
    filesystem, inner = arrow_filesystem(path)
    found: dict[tuple, list[int]] = {}
    for position, table in _pieces(filesystem, inner, columns, file_format):
        arrays = [table.column(c).to_pylist() for c in columns]
        for values in set(zip(*arrays)):
            found.setdefault(values, []).append(position)
    return [(*values, path, sorted(set(positions))) for values, positions in sorted(found.items(), key=_null_first)]


def _pieces(filesystem, inner: str, columns: list[str], file_format: str) -> Iterator[tuple[int, object]]:
    with filesystem.open_input_file(inner) as source:
        if file_format == "orc":
            from pyarrow import orc

            reader = orc.ORCFile(source)
            for i in range(reader.nstripes):
                yield i, reader.read_stripe(i, columns=columns)
            return
        import pyarrow.parquet as pq

        reader = pq.ParquetFile(source)
        for i in range(reader.num_row_groups):
            yield i, reader.read_row_group(i, columns=columns)


def _null_first(item) -> tuple:
    return tuple((v is not None, v) for v in item[0])


def fingerprint(entries: Iterable[Entry]) -> list[list]:
    """What a base partition holds: [name, size, modified] of each data file, by name. Taken with
    the same listing and clock when an index partition is built and when it is checked, so files
    added, removed or rewritten since the build make it stale (HIVE-15282 compared two clocks)."""
    return [[e.name, e.size, e.modified] for e in data_files(list(entries))]

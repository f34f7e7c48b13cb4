"""The compact index of a data file (hmsproxy/files/compact_index.py): every combination of the
indexed values with the row groups or stripes that hold it, checked against the file itself,
and the fingerprint a base partition's staleness is decided with."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq

from hmsproxy.files.compact_index import file_rows, fingerprint
from hmsproxy.files.storage import Entry


def rows(n: int):
    return pa.table(
        {
            "user_id": [i % 7 if i % 50 else None for i in range(n)],
            "action": ["view" if i % 3 else "buy" for i in range(n)],
            "payload": [f"p{i}" for i in range(n)],
        }
    )


def expected(table: pa.Table, group_rows: int, columns: list[str]) -> dict[tuple, list[int]]:
    found: dict[tuple, set[int]] = {}
    data = [table.column(c).to_pylist() for c in columns]
    for i, values in enumerate(zip(*data)):
        found.setdefault(values, set()).add(i // group_rows)
    return {k: sorted(v) for k, v in found.items()}


def test_each_value_lists_exactly_the_row_groups_that_hold_it(tmp_path):
    table = rows(1000)
    path = tmp_path / "part-0.parquet"
    pq.write_table(table, path, row_group_size=100)
    got = file_rows(path.as_uri(), ["user_id"])
    assert {r[0]: r[2] for r in got} == {k[0]: v for k, v in expected(table, 100, ["user_id"]).items()}
    assert all(r[1] == path.as_uri() for r in got)
    assert [r[0] for r in got] == [None, 0, 1, 2, 3, 4, 5, 6]  # sorted on the values, nulls first
    assert {r[0]: r[2] for r in got}[None] == list(range(10))  # every 50th row: in each group
    # Two columns: one row per combination; Hadoop's file:/ form of the path works too.
    two = file_rows(f"file:{path}", ["action", "user_id"])
    assert {(r[0], r[1]): r[3] for r in two} == expected(table, 100, ["action", "user_id"])


def test_orc_stripes_are_the_offsets_of_an_orc_file(tmp_path):
    table = rows(300)
    path = tmp_path / "part-0.orc"
    orc.write_table(table, str(path))
    stripes = orc.ORCFile(str(path)).nstripes
    got = file_rows(str(path), ["user_id"], "orc")
    assert {r[0] for r in got} == set(table.column("user_id").to_pylist())
    assert all(r[2] and max(r[2]) < stripes for r in got)


def test_the_fingerprint_names_each_data_file_with_its_size_and_time():
    entries = [
        Entry("/p/b.parquet", "b.parquet", 20, False, 2000),
        Entry("/p/a.parquet", "a.parquet", 10, False, 1000),
        Entry("/p/_SUCCESS", "_SUCCESS", 0, False, 3000),
        Entry("/p/sub", "sub", 0, True, 4000),
    ]
    assert fingerprint(entries) == [["a.parquet", 10, 1000], ["b.parquet", 20, 2000]]
    rewritten = [Entry("/p/a.parquet", "a.parquet", 10, False, 5000), entries[0]]
    assert fingerprint(rewritten) != fingerprint(entries)  # same name and size, newer: not the same data

"""`hmsproxy stream` as a user runs it: lines on standard input into a table through the proxy."""

from __future__ import annotations

import contextlib
import json
import subprocess
import uuid
from pathlib import Path
from urllib.parse import urlparse

import pyarrow.parquet as pq

from hmsproxy.testing.builders import parquet_table
from tests.integration.test_cli import HMSPROXY

COLUMNS = (("id", "int"), ("msg", "string"), ("score", "double"))


def rows_in(location: str) -> list[tuple]:
    root = Path(urlparse(location).path)
    files = sorted(p for p in root.iterdir() if p.is_file() and not p.name.startswith(("_", ".")))
    return sorted((r["id"], r["msg"], r["score"]) for f in files for r in pq.read_table(f).to_pylist())


def stream(proxy, table: str, lines: list[str], *extra: str, cwd: Path) -> subprocess.CompletedProcess:
    command = [*HMSPROXY, "stream", table, "--uri", proxy.uri, *extra]
    return subprocess.run(command, input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=300, cwd=cwd)


def test_csv_lines_with_a_bad_one_and_json_lines(proxy, metastores, tmp_path):
    name = f"cli_{uuid.uuid4().hex[:8]}"
    location = (tmp_path / name).as_uri()
    with contextlib.closing(metastores[0].client()) as c:
        c.create_table(parquet_table("default", name, location, columns=COLUMNS, partition_keys=(("ds", "string"),)))
    lines = [f"{i},line {i},{i / 2}" for i in range(25)]
    lines.insert(10, "not-a-number,oops,1.0")
    done = stream(proxy, f"default.{name}", lines, "--partition", "ds=2026-11-25", "--rows-per-txn", "10", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "rows 25 (" in done.stderr and "commits 3" in done.stderr and "rejected 1" in done.stderr
    assert "1 record(s) rejected: see rejected.txt" in done.stderr
    [dead] = (tmp_path / "rejected.txt").read_text().splitlines()
    assert dead.startswith("not-a-number,oops,1.0\t")
    partition = f"{location}/ds=2026-11-25"
    assert rows_in(partition) == [(i, f"line {i}", i / 2) for i in range(25)]

    records = [json.dumps({"id": 100 + i, "msg": f"json {i}", "score": 1.5}) for i in range(3)]
    done = stream(proxy, f"default.{name}", records, "--partition", "ds=2026-11-26", "--format", "json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert rows_in(f"{location}/ds=2026-11-26") == [(100 + i, f"json {i}", 1.5) for i in range(3)]


def test_usage_errors_exit_2(proxy, metastores, tmp_path):
    name = f"cli_{uuid.uuid4().hex[:8]}"
    with contextlib.closing(metastores[0].client()) as c:
        c.create_table(parquet_table("default", name, (tmp_path / name).as_uri(), columns=COLUMNS, partition_keys=(("ds", "string"),)))
    wrong = stream(proxy, f"default.{name}", [], "--partition", "day=1", cwd=tmp_path)
    assert wrong.returncode == 2 and "--partition must give exactly the partition keys (ds)" in wrong.stderr
    bare = stream(proxy, name, [], cwd=tmp_path)
    assert bare.returncode == 2 and "give the table as DB.TABLE" in bare.stderr
    missing = stream(proxy, "default.no_such_table", [], cwd=tmp_path)
    assert missing.returncode == 1 and "table default.no_such_table does not exist" in missing.stderr

"""How a streamed transaction's files become visible (publish.py), on the local file system."""

from __future__ import annotations

from pathlib import Path

import pytest

from hmsproxy.streaming.cli import _partition_values
from hmsproxy.streaming.heartbeats import parse_duration_s
from hmsproxy.streaming.publish import COMMITTED, STAGING, TxnFiles, publish_agent, publishing, recover


def visible(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.is_file() and not p.name.startswith(("_", ".")))


def stage(root: Path, txnid: int, buckets=(0,)) -> TxnFiles:
    files = TxnFiles(root.as_uri(), txnid, "parquet")
    for b in buckets:
        Path(files.staged_path(b)).write_bytes(b"rows")
    return files


def test_staged_files_are_invisible_until_published(tmp_path):
    files = stage(tmp_path, 7, buckets=(0, 3))
    assert visible(tmp_path) == []
    names = files.publish()
    assert visible(tmp_path) == sorted(names) and [n[:6] for n in sorted(names)] == ["000000", "000003"]
    assert all("stream-7-" in n for n in names)
    assert not (tmp_path / STAGING / "7").exists()


def test_an_aborted_transaction_leaves_nothing(tmp_path):
    files = stage(tmp_path, 8)
    files.discard()
    assert visible(tmp_path) == [] and not (tmp_path / STAGING / "8").exists()
    TxnFiles(tmp_path.as_uri(), 9, "orc").discard()  # nothing staged: nothing to do


def test_recover_finishes_marked_ones_and_deletes_dead_ones(tmp_path):
    stage(tmp_path, 1)  # its writer died before the metastore committed; the transaction is gone now
    stage(tmp_path, 2)  # still open: its writer may live
    marked = stage(tmp_path, 3)  # committed and marked, then its writer died mid-renames
    (Path(marked.staging) / COMMITTED).write_bytes(b"")
    stage(tmp_path, 4)  # the caller's own
    stage(tmp_path, 5)  # another writer, holding its batch's lock: alive
    states = {1: "gone", 2: "open", 3: "gone", 4: "open", 5: "gone"}
    asked = []

    def alive():
        asked.append(True)
        return frozenset({5})

    published, deleted = recover(tmp_path.as_uri(), states.__getitem__, skip=frozenset({4}), alive=alive)
    assert (published, deleted) == ([3], [1])
    assert sorted(p.name for p in (tmp_path / STAGING).iterdir()) == ["2", "4", "5"]
    assert [n for n in visible(tmp_path) if "stream-3-" in n] and len(visible(tmp_path)) == 1
    assert asked == [True]


def test_recover_asks_nobody_when_nothing_was_left(tmp_path):
    def never(*_):
        raise AssertionError("asked")

    assert recover(tmp_path.as_uri(), never, alive=never) == ([], [])


def test_a_batch_lock_names_its_transactions():
    agents = [publish_agent("ingest", 10, 12), "hive cli", None, publish_agent("other", 20, 20)]
    assert publishing(agents) == frozenset({10, 11, 12, 20})


@pytest.mark.parametrize(
    ("text", "seconds"), [("300", 300.0), ("300s", 300.0), ("5m", 300.0), ("1500ms", 1.5), ("junk", 300.0), (None, 300.0)]
)
def test_hive_durations(text, seconds):
    assert parse_duration_s(text) == seconds


def test_partition_values_follow_the_tables_keys():
    assert _partition_values("country=India, continent=Asia", ("continent", "country")) == ["Asia", "India"]
    assert _partition_values("", ()) == []
    with pytest.raises(ValueError, match="exactly the partition keys"):
        _partition_values("continent=Asia", ("continent", "country"))
    with pytest.raises(ValueError, match="not key=value"):
        _partition_values("Asia", ("continent",))

"""Index builds and staleness (features/indexes/builds.py), the file listing they are decided with
(jobs/storage.ArrowStorage), and `hmsproxy lookup`'s --where conditions."""

from __future__ import annotations

import argparse
import os

import pytest

from hmsproxy.clients.lookup_cli import parse_where
from hmsproxy.features.indexes.builds import FRESH, NEVER_BUILT, STALE, IndexBuild, digest, read_manifest, state, write_manifest
from hmsproxy.files.storage import ArrowStorage, data_files


def listing(path) -> list:
    """As a metastore writes locations: file:/x/ds=1 (Hadoop's form; '%' in it is a real character)."""
    files = data_files(ArrowStorage().list(f"file:{path}"))
    return files


def test_a_partition_is_fresh_until_a_file_is_added_removed_or_rewritten(tmp_path):
    part = tmp_path / "ds=1"
    part.mkdir()
    (part / "a.parquet").write_bytes(b"x" * 10)
    (part / "_SUCCESS").write_bytes(b"")  # hidden: not data, not in the digest
    built = IndexBuild("ds=1", 1, 3, 1, (("ds=1", digest(listing(part))),))
    assert state(built, "ds=1", digest(listing(part))) == FRESH
    assert state(built, "ds=2", digest(listing(part))) == NEVER_BUILT
    assert state(None, "ds=1", digest(listing(part))) == NEVER_BUILT

    (part / "b.parquet").write_bytes(b"y")
    assert state(built, "ds=1", digest(listing(part))) == STALE
    (part / "b.parquet").unlink()
    assert state(built, "ds=1", digest(listing(part))) == FRESH
    stat = (part / "a.parquet").stat()
    os.utime(part / "a.parquet", ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000))  # rewritten: same name and size
    assert state(built, "ds=1", digest(listing(part))) == STALE


def test_the_build_travels_as_json_and_beside_the_index_files(tmp_path):
    build = IndexBuild("ds=1", 1700000000, 42, 3, (("ds=1/hr=0", "ab"), ("ds=1/hr=1", "cd")))
    assert IndexBuild.from_json(build.to_json()) == build
    assert build.digest_of("ds=1/hr=1") == "cd" and build.digest_of("ds=2") is None
    with pytest.raises(ValueError, match="not an index build record"):
        IndexBuild.from_json('{"partition": "x"}')
    location = f"file:{tmp_path}/idx/ds=1.hmsproxy-rebuild-index-t"
    assert read_manifest(location) is None  # nothing there yet
    write_manifest(location, build)  # creates the directory of an index with no rows
    assert read_manifest(location) == build
    assert listing(tmp_path / "idx" / "ds=1.hmsproxy-rebuild-index-t") == []  # hidden from readers


def test_arrow_storage_lists_and_deletes_as_hadoop_names_them(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f.parquet").write_bytes(b"abc")
    storage = ArrowStorage()
    location = f"file:{tmp_path}/d"
    [entry] = storage.list(location)
    assert (entry.path, entry.name, entry.size, entry.is_dir) == (f"{location}/f.parquet", "f.parquet", 3, False)
    assert entry.modified == (tmp_path / "d" / "f.parquet").stat().st_mtime_ns // 1_000_000
    assert storage.exists(location) and not storage.exists(f"file:{tmp_path}/nope")
    storage.delete(location)
    assert not (tmp_path / "d").exists()


def test_lookup_conditions():
    assert parse_where("user_id=42") == ("user_id", ["42"])
    assert parse_where(" Country IN ('US', 'it''s', 3) ") == ("country", ["US", "it's", "3"])
    assert parse_where("name = 'a b'") == ("name", ["a b"])
    for bad in ("42", "x IN ()", "= 3"):
        with pytest.raises(argparse.ArgumentTypeError):
            parse_where(bad)

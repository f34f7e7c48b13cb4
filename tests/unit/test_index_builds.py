"""Index builds and staleness (features/indexes/builds.py), the file listing they are decided with
(jobs/storage.ArrowStorage), and `hmsproxy lookup`'s --where conditions."""

from __future__ import annotations

import argparse
import os

import pytest

from hmsproxy.clients.lookup_cli import parse_where
from hmsproxy.features.indexes.builds import (
    FRESH,
    NEVER_BUILT,
    STALE,
    IndexBuild,
    digest,
    index_files,
    read_manifest,
    state,
    write_manifest,
)
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


def test_a_build_describes_only_the_index_files_it_wrote(tmp_path):
    """What Hive's loadPartition leaves (its own visible files, the hidden manifest kept) is not the build."""
    part = tmp_path / "ds=1.hmsproxy-rebuild-index-t"
    part.mkdir()
    (part / "part-00000.parquet").write_bytes(b"x" * 10)
    build = IndexBuild("ds=1", 1, 3, 1, (("ds=1", "ab"),), index_files(listing(part)))
    assert build.index_files == (("part-00000.parquet", 10),)
    location = f"file:{part}"
    write_manifest(location, build)
    assert read_manifest(location) == build and build.describes(ArrowStorage().list(location))  # the manifest is hidden
    (part / "part-00000.parquet").unlink()
    (part / "000000_0").write_bytes(b"y" * 10)  # another writer's file
    assert read_manifest(location) == build and not build.describes(ArrowStorage().list(location))
    (part / "000000_0").unlink()
    (part / "part-00000.parquet").write_bytes(b"x" * 11)  # same name, other size
    assert not build.describes(ArrowStorage().list(location))
    legacy = IndexBuild.from_json('{"partition": "ds=1", "built_at": 1, "rows": 3, "files": 1, "base": {"ds=1": "ab"}}')
    assert legacy.index_files is None and not legacy.describes([])  # names no files: trusted by no one
    assert IndexBuild.from_json(build.to_json()) == build and IndexBuild.from_json(legacy.to_json()) == legacy


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

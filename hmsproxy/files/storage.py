"""Files under a table's locations, listed through hmsproxy's storage door (`filesystems`:
pyarrow's file systems for file:, s3a:// and the other S3 schemes, hdfs-native for hdfs://,
docs/storage.md), in Spark drivers and where no Spark runs (the proxy, `hmsproxy lookup`) alike; a
driver first hands the door its session's Hadoop settings (`storage_for`, jobs/job_files.py). An
index's staleness is so decided with one listing, at build and at check alike, so both see one
clock (HIVE-15282).
The swap only needs the small `Storage` protocol, so its logic is tested with a
local stand-in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlparse


@dataclass(frozen=True)
class Entry:
    path: str
    name: str
    size: int
    is_dir: bool
    #: Last modification, milliseconds since the epoch, by the storage's clock (0: not known).
    modified: int = 0


def is_hidden(name: str) -> bool:
    """Hive's and Spark's rule: names starting with '_' or '.' (_SUCCESS, .crc, staging dirs) are not data."""
    return name.startswith(("_", "."))


def data_files(entries: list[Entry]) -> list[Entry]:
    return sorted((e for e in entries if not e.is_dir and not is_hidden(e.name)), key=lambda e: e.name)


def data_dirs(entries: list[Entry]) -> list[Entry]:
    """Visible subdirectories: data a reader of the location may see, that a flat rewrite would lose."""
    return [e for e in entries if e.is_dir and not is_hidden(e.name)]


class Storage(Protocol):
    def exists(self, location: str) -> bool: ...

    def list(self, location: str) -> list[Entry]: ...

    def delete(self, location: str) -> None: ...

    def move(self, source: str, target: str) -> None: ...


def storage_for(spark: Any, locations: list[str]) -> Storage:
    """How a driver lists these locations: through the storage door (`filesystems`), with the
    session's Hadoop settings when a location is not local (classic or Spark Connect alike: no JVM
    round trip per file, and no `sparkContext` needed). Local ones skip reading the session's
    settings: a pruned read's fixed cost stays small."""
    if not all(urlparse(loc).scheme in ("", "file") for loc in locations):
        from hmsproxy.files import hadoop_conf

        hadoop_conf.use_spark(spark)
    return ArrowStorage()


#: pyarrow file systems whose move() takes files only.
OBJECT_STORES = frozenset({"s3", "gcs"})


def arrow_filesystem(location: str):
    """(pyarrow FileSystem, path in it) for a Hadoop-style location (file:/x, /x, hdfs://..., s3a://...):
    the one door, `hmsproxy.files.filesystems`."""
    from hmsproxy.files.filesystems import filesystem

    return filesystem(location)


def join(location: str, name: str) -> str:
    return f"{location.rstrip('/')}/{name}"


class ArrowStorage:
    """`Storage` over pyarrow's file systems; entries keep the location's own form of path."""

    def exists(self, location: str) -> bool:
        from pyarrow import fs

        filesystem, inner = arrow_filesystem(location)
        return filesystem.get_file_info(inner).type != fs.FileType.NotFound

    def list(self, location: str) -> list[Entry]:
        from pyarrow import fs

        filesystem, inner = arrow_filesystem(location)
        entries = []
        for info in filesystem.get_file_info(fs.FileSelector(inner, allow_not_found=True)):
            is_dir = info.type == fs.FileType.Directory
            modified = info.mtime_ns // 1_000_000 if info.mtime_ns is not None else 0
            entries.append(Entry(join(location, info.base_name), info.base_name, 0 if is_dir else int(info.size or 0), is_dir, modified))
        return entries

    def delete(self, location: str) -> None:
        filesystem, inner = arrow_filesystem(location)
        filesystem.delete_dir(inner)

    def move(self, source: str, target: str) -> None:
        """Rename `source` to `target`. An object store has no directories to rename: a directory
        there moves file by file, each a copy and a delete (pyarrow's S3 move takes files only)."""
        from pyarrow import fs

        filesystem, inner = arrow_filesystem(source)
        dst = arrow_filesystem(target)[1]
        if filesystem.type_name not in OBJECT_STORES or filesystem.get_file_info(inner).type != fs.FileType.Directory:
            filesystem.move(inner, dst)
            return
        for found in filesystem.get_file_info(fs.FileSelector(inner, recursive=True)):
            if found.type == fs.FileType.File:
                filesystem.move(found.path, f"{dst}/{found.path[len(inner) :].lstrip('/')}")
        filesystem.delete_dir(inner)

"""Files under a table's locations: through Hadoop's FileSystem in Spark's JVM, or pyarrow's.

Going through Hadoop (not the local file system) means any scheme the cluster
reads (hdfs://, s3a://, abfs://, file:) works the same, with Spark's credentials.
Where no Spark runs (the proxy, `hmsproxy lookup`) pyarrow's file systems list
the same locations (S3 and HDFS included: `filesystems`, docs/storage.md); an index's staleness is always decided with pyarrow's
listing, at build and at check alike, so both see one clock (HIVE-15282).
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


class HadoopStorage:
    def __init__(self, spark: Any):
        jvm = spark.sparkContext._jvm
        self._path = jvm.org.apache.hadoop.fs.Path
        self._conf = spark.sparkContext._jsc.hadoopConfiguration()

    def _fs(self, location: str):
        path = self._path(location)
        return path.getFileSystem(self._conf), path

    def exists(self, location: str) -> bool:
        fs, path = self._fs(location)
        return bool(fs.exists(path))

    def list(self, location: str) -> list[Entry]:
        fs, path = self._fs(location)
        entries = []
        for status in fs.listStatus(path):
            p = status.getPath()
            entries.append(
                Entry(p.toString(), p.getName(), int(status.getLen()), bool(status.isDirectory()), int(status.getModificationTime()))
            )
        return entries

    def delete(self, location: str) -> None:
        fs, path = self._fs(location)
        if not fs.delete(path, True) and fs.exists(path):
            raise OSError(f"could not delete {location}")

    def move(self, source: str, target: str) -> None:
        fs, path = self._fs(source)
        if not fs.rename(path, self._path(target)):
            raise OSError(f"could not move {source} to {target}")


def storage_for(spark: Any, locations: list[str]) -> Storage:
    """How a driver lists these locations: local ones with pyarrow (no JVM round trip per file
    and field), any other through Spark's Hadoop file systems (their schemes and credentials)."""
    if all(urlparse(loc).scheme in ("", "file") for loc in locations):
        return ArrowStorage()
    return HadoopStorage(spark)


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
        filesystem, inner = arrow_filesystem(source)
        filesystem.move(inner, arrow_filesystem(target)[1])

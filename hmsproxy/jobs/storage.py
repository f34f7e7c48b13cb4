"""Files under a table's locations, through Hadoop's FileSystem in Spark's JVM.

Going through Hadoop (not the local file system) means any scheme the cluster
reads (hdfs://, s3a://, abfs://, file:) works the same, with Spark's credentials.
The swap only needs the small `Storage` protocol, so its logic is tested with a
local stand-in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol


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

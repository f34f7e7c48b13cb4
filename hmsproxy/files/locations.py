"""Which file system serves a location written in Hadoop's forms, and where in it.

    s3a://bucket/key, s3://…, s3n://…      -> S3 (bucket, key)
    hdfs://nameservice-or-host:port/path    -> HDFS (authority, path)
    file:/x, file:///x                      -> the local file system
    /x (no scheme)                          -> against fs.defaultFS (file:/// when unset)
    gs://…, abfs://…, abfss://…             -> pyarrow's own file systems for them

Anything else is a `StorageError` naming the location. Pure functions: no file system is reached here.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlparse

S3_SCHEMES = ("s3a", "s3", "s3n")
HDFS_SCHEMES = ("hdfs",)
LOCAL_SCHEMES = ("file",)
#: Served by pyarrow.fs.FileSystem.from_uri as they are (Google Cloud Storage, Azure).
ARROW_SCHEMES = ("gs", "gcs", "abfs", "abfss")
KNOWN = (*S3_SCHEMES, *HDFS_SCHEMES, *LOCAL_SCHEMES, *ARROW_SCHEMES)


class StorageError(OSError):
    """A location no file system can be reached for, with what to set; one line."""


@dataclass(frozen=True)
class Place:
    kind: str  # "s3", "hdfs", "local" or "arrow"
    authority: str  # the bucket (s3), host[:port] or nameservice (hdfs); "" for local
    path: str  # the path inside that file system, in pyarrow's form ("bucket/key" for S3, "/x" otherwise)
    location: str  # the location as given (errors name it)


def place(location: str, default_fs: str | None = None) -> Place:
    """Where `location` is (see the module doc); `default_fs`: fs.defaultFS, for paths without a scheme."""
    if not location:
        raise StorageError("an empty location: the table or partition has no LOCATION")
    parsed = urlparse(location)
    scheme = parsed.scheme.lower()
    if not scheme:
        default = urlparse(default_fs or "file:///")
        if default.scheme.lower() in ("", "file"):
            return Place("local", "", parsed.path, location)
        return _placed(default.scheme.lower(), default.netloc, parsed.path, location)
    return _placed(scheme, parsed.netloc, parsed.path, location)


def _placed(scheme: str, netloc: str, path: str, location: str) -> Place:
    if scheme in LOCAL_SCHEMES:
        return Place("local", "", path or "/", location)
    if scheme in S3_SCHEMES:
        if not netloc:
            raise StorageError(f"{location}: an S3 location needs a bucket ({scheme}://BUCKET/path)")
        return Place("s3", netloc, f"{netloc}/{path.lstrip('/')}".rstrip("/"), location)
    if scheme in HDFS_SCHEMES:
        if not netloc:
            raise StorageError(f"{location}: no NameNode in the location and fs.defaultFS names none (set fs.defaultFS in core-site.xml)")
        return Place("hdfs", netloc, path or "/", location)
    if scheme in ARROW_SCHEMES:
        return Place("arrow", f"{scheme}://{netloc}", path, location)
    raise StorageError(
        f"{location}: no file system for scheme {scheme!r} (hmsproxy reads {', '.join(s + '://' for s in KNOWN if s != 'file')}, file: and paths)"
    )

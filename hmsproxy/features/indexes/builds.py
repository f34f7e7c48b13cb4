"""What an index partition was built from, and whether it still matches its base partitions.

A rebuild lists each base partition it indexes and keeps the digest of that listing (each data
file's name, size and modification time). Whether an index partition is still usable for a base
partition is decided by listing it again the same way (pyarrow's listing, `ArrowStorage`, for
build and check alike: one clock, HIVE-15282) and comparing digests: any file added, removed or
rewritten since makes it stale, and a lookup scans that base partition instead.

The build is written twice, from one object: as `_hmsproxy_index.json` beside the index files
(hidden from readers by its '_'; it is swapped in with them, so it always describes the files next
to it — lookups read it), and into the proxy's store (SHOW FORMATTED INDEX), carried by the swap's
own metastore call in its EnvironmentContext under BUILD_CONTEXT_KEY (or, for a batch of partitions
swapped by one alter_partitions call, every partition's build as a list under BUILDS_CONTEXT_KEY).

The manifest also names the index files it describes (name and size of each): a directory whose
files are not exactly those (another writer's, such as a Hive MapReduce rebuild, which keeps
hidden files like the manifest when it replaces a partition's files) is not this build, and a
lookup scans instead of trusting it. A manifest naming no files (older builds) is trusted by no one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass

from hmsproxy.files.compact_index import fingerprint
from hmsproxy.files.storage import Entry, arrow_filesystem, data_files, join

MANIFEST = "_hmsproxy_index.json"
BUILD_CONTEXT_KEY = "hmsproxy.index.build"
#: Many partitions' builds (a JSON list of build records), carried by one alter_partitions call.
BUILDS_CONTEXT_KEY = "hmsproxy.index.builds"

FRESH, STALE, NEVER_BUILT = "fresh", "stale", "never built"


@dataclass(frozen=True)
class IndexBuild:
    #: The index partition's name ('' for an unpartitioned index table).
    partition: str
    built_at: int
    #: Rows of the index (one per indexed values and file) and base data files indexed.
    rows: int
    files: int
    #: (base partition name, digest of its listing at build time); '' names an unpartitioned base table.
    base: tuple[tuple[str, str], ...]
    #: (name, size) of each index data file the build wrote beside the manifest; None: not recorded.
    index_files: tuple[tuple[str, int], ...] | None = None

    def digest_of(self, base_partition: str) -> str | None:
        return dict(self.base).get(base_partition)

    def describes(self, entries: Iterable[Entry]) -> bool:
        """Whether a listing of the index partition's directory holds exactly the files this build wrote."""
        return self.index_files is not None and index_files(entries) == self.index_files

    def to_json(self) -> str:
        d = {"partition": self.partition, "built_at": self.built_at, "rows": self.rows, "files": self.files, "base": dict(self.base)}
        if self.index_files is not None:
            d["index_files"] = [list(f) for f in self.index_files]
        return json.dumps(d, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> IndexBuild:
        """ValueError for anything that is not a build record."""
        try:
            d = json.loads(text)
            listed = d.get("index_files")
            files = None if listed is None else tuple((str(name), int(size)) for name, size in listed)
            return cls(str(d["partition"]), int(d["built_at"]), int(d["rows"]), int(d["files"]), tuple(sorted(d["base"].items())), files)
        except (KeyError, TypeError, ValueError, AttributeError) as e:  # JSONDecodeError is a ValueError
            raise ValueError(f"not an index build record: {e}") from None


def builds_to_json(builds: Iterable[IndexBuild]) -> str:
    return "[" + ",".join(b.to_json() for b in builds) + "]"


def builds_from_json(text: str) -> list[IndexBuild]:
    """ValueError for anything that is not a list of build records."""
    try:
        listed = json.loads(text)
    except ValueError as e:
        raise ValueError(f"not a list of index build records: {e}") from None
    if not isinstance(listed, list):
        raise ValueError("not a list of index build records")
    return [IndexBuild.from_json(json.dumps(d)) for d in listed]


def index_files(entries: Iterable[Entry]) -> tuple[tuple[str, int], ...]:
    """(name, size) of each index data file in a listing of an index partition's directory."""
    return tuple((e.name, e.size) for e in data_files(list(entries)))


def digest(entries: Iterable[Entry]) -> str:
    """The digest of a base partition's data files (name, size, modification time of each)."""
    return hashlib.sha256(json.dumps(fingerprint(entries)).encode()).hexdigest()[:32]


def state(build: IndexBuild | None, base_partition: str, current: str) -> str:
    """fresh / stale / never built, for one base partition whose listing has digest `current`."""
    if build is None or build.digest_of(base_partition) is None:
        return NEVER_BUILT
    return FRESH if build.digest_of(base_partition) == current else STALE


def write_manifest(location: str, build: IndexBuild) -> None:
    filesystem, inner = arrow_filesystem(join(location, MANIFEST))
    filesystem.create_dir(inner.rpartition("/")[0], recursive=True)  # an empty index has no files beside it
    with filesystem.open_output_stream(inner) as out:
        out.write(build.to_json().encode())


def read_manifest(location: str) -> IndexBuild | None:
    """The build beside an index partition's files; None where there is none (or it is unreadable)."""
    filesystem, inner = arrow_filesystem(join(location, MANIFEST))
    try:
        with filesystem.open_input_stream(inner) as source:
            return IndexBuild.from_json(source.read().decode())
    except (OSError, ValueError, UnicodeDecodeError):
        return None

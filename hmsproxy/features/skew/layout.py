"""The layout record: what the skew-layout job (jobs/skew_layout.py) leaves on a partition it laid out.

Stored as the partition parameter `hmsproxy.skew.layout` (LAYOUT_PARAMETER), compact JSON:

    {"version": 1,                       # FORMAT_VERSION; other versions are not trusted
     "columns": ["x", "y"],              # the skewed columns, in SkewedInfo order
     "format": "parquet",                # the files' format
     "subdirectories": false,            # false: flat files in the partition directory;
                                         # true: Hive's directories (x=10/y=a/, HIVE_DEFAULT_LIST_BUCKETING_DIR_NAME/...)
     "groups": [                         # one per skewed value tuple, in SkewedInfo order, then the default group
        {"values": ["10", "a"], "rows": 812, "files": [["skew-0-10_a-000.parquet", 20480]]},
        {"values": null, "rows": 95, "files": [["skew-2-default-000.parquet", 4096]]}],
     "rows": 907,                        # all groups' rows
     "checksum": "123456789",            # sum of xxhash64 over every row's columns (Spark), as written
     "laid_out_at": "2026-11-02T03:04:05Z"}

File names are relative to the partition's location, with their sizes. The record is
trusted only while it describes the partition's files exactly (`matches_files`): a client
that rewrites the partition (Spark's INSERT OVERWRITE) leaves the parameter behind but not
the files, so readers then scan the partition in full. Layout state is recorded here, never
inferred from SkewedInfo (Spark adds partitions that carry the table's SkewedInfo with flat,
unsorted files).

Pure Python: no Spark, no Thrift. SHOW SKEW reads it with `from_parameter`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

LAYOUT_PARAMETER = "hmsproxy.skew.layout"
FORMAT_VERSION = 1
#: Hive 2.3 keeps partition parameter values in a VARCHAR(4000); a longer record would be cut.
MAX_PARAMETER_CHARS = 4000


@dataclass(frozen=True)
class LayoutFile:
    name: str  # relative to the partition's location, '/'-separated
    size: int


@dataclass(frozen=True)
class Group:
    """The files of one skewed value tuple, or of every other row (values None: the default group)."""

    values: tuple[str, ...] | None
    files: tuple[LayoutFile, ...]
    rows: int

    @property
    def is_default(self) -> bool:
        return self.values is None


@dataclass(frozen=True)
class LayoutRecord:
    columns: tuple[str, ...]
    groups: tuple[Group, ...]  # skewed groups, then exactly one default group, last
    rows: int
    checksum: str
    laid_out_at: str
    format: str = "parquet"
    subdirectories: bool = False
    version: int = field(default=FORMAT_VERSION)

    @property
    def skewed_values(self) -> list[tuple[str, ...]]:
        return [g.values for g in self.groups if g.values is not None]

    @property
    def files(self) -> list[LayoutFile]:
        return [f for g in self.groups for f in g.files]


def now_text(now: datetime | None = None) -> str:
    return f"{(now or datetime.now(UTC)):%Y-%m-%dT%H:%M:%SZ}"


def value_text(value) -> str | None:
    """A filter value as skewed values are written (strings; Spark casts booleans to 'true'/'false')."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def to_parameter(record: LayoutRecord) -> str:
    data = {
        "version": record.version,
        "columns": list(record.columns),
        "format": record.format,
        "subdirectories": record.subdirectories,
        "groups": [
            {"values": None if g.values is None else list(g.values), "rows": g.rows, "files": [[f.name, f.size] for f in g.files]}
            for g in record.groups
        ],
        "rows": record.rows,
        "checksum": record.checksum,
        "laid_out_at": record.laid_out_at,
    }
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    if len(text) > MAX_PARAMETER_CHARS:
        raise ValueError(
            f"the layout record is {len(text)} characters; the metastore keeps at most {MAX_PARAMETER_CHARS} "
            "(fewer skewed values, or fewer files per group)"
        )
    return text


def from_parameter(text: str | None) -> LayoutRecord | None:
    """The record in a partition parameter; None when it is missing, garbled or of another version."""
    if not text:
        return None
    try:
        data = json.loads(text)
        if data.get("version") != FORMAT_VERSION:
            return None
        columns = tuple(_str(c) for c in data["columns"])
        groups = tuple(_group(g, len(columns)) for g in data["groups"])
        record = LayoutRecord(
            columns=columns,
            groups=groups,
            rows=_count(data["rows"]),
            checksum=_str(data["checksum"]),
            laid_out_at=_str(data["laid_out_at"]),
            format=_str(data.get("format", "parquet")),
            subdirectories=bool(data.get("subdirectories", False)),
        )
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
    # Exactly one default group, last; every value once; the groups add up.
    if not columns or not groups or not groups[-1].is_default or any(g.is_default for g in groups[:-1]):
        return None
    if len(set(record.skewed_values)) != len(record.skewed_values):
        return None
    if sum(g.rows for g in groups) != record.rows:
        return None
    return record


def _str(value) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, not {value!r}")
    return value


def _count(value) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"expected a count, not {value!r}")
    return value


def _group(data: Mapping, arity: int) -> Group:
    values = data["values"]
    if values is not None:
        values = tuple(_str(v) for v in values)
        if len(values) != arity:
            raise ValueError(f"value {values} for {arity} columns")
    files = tuple(LayoutFile(_str(name), _count(size)) for name, size in data["files"])
    return Group(values, files, _count(data["rows"]))


def from_parameters(parameters: Mapping[str, str] | None) -> LayoutRecord | None:
    return from_parameter((parameters or {}).get(LAYOUT_PARAMETER))


def matches_files(record: LayoutRecord, files: Iterable[tuple[str, int]]) -> bool:
    """Whether the partition's data files (relative name, size), all of them, are exactly the record's.

    A file added, removed, renamed or rewritten with another size means someone else wrote
    the partition: the record no longer says which rows are where.
    """
    return sorted(files) == sorted((f.name, f.size) for f in record.files)


def select_groups(record: LayoutRecord, equals: Mapping[str, str | None]) -> list[Group]:
    """The groups that may hold rows with these column values (others are pruned).

    `equals` maps column names (any case) to value_text() values; columns that are not
    skewed don't prune. A skewed group is kept when it agrees with every named skewed
    column. The default group is kept unless every skewed column is named and the tuple
    is a skewed value (then its rows are all in that value's group). So naming a prefix
    (x = 10 of (x, y)) prunes the groups of other x values and keeps the default group.
    """
    wanted = {k.lower(): v for k, v in equals.items()}
    positions = [(i, wanted[c.lower()]) for i, c in enumerate(record.columns) if c.lower() in wanted]
    kept = [g for g in record.groups if g.values is not None and all(g.values[i] == v for i, v in positions)]
    fully_named = len(positions) == len(record.columns)
    if not (fully_named and kept):
        kept.append(record.groups[-1])
    return kept

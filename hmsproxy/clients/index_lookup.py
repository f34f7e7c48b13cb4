"""Index-driven lookups: which files, and which row groups in them, can hold the rows wanted.

    result = arrow_lookup("thrift://proxy:9083", "shop.events", {"user_id": [42]})
    result.table            # a pyarrow Table: exactly the matching rows, the table's columns
    result.files_opened     # data files read

`plan_lookup` decides per base partition (those the partition columns' values select):
- an index partition built from exactly the files the partition holds now (`builds.py`: the
  digest of the same listing) is fresh: only the files and row groups its rows name are read;
- any other partition (stale, never built, or no index on these columns) is scanned whole.
So the answer is always the full answer. `arrow_lookup` reads the plan with pyarrow alone (no
Spark: `hmsproxy lookup`); `hmsproxy.clients.spark.lookup` reads it with Spark.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from hmsproxy.clients.kept_connections import deferred, raised
from hmsproxy.features.indexes.builds import FRESH, STALE, IndexBuild, digest, read_manifest, state
from hmsproxy.features.indexes.compact import COMPACT
from hmsproxy.files.storage import ArrowStorage, arrow_filesystem, data_files, join
from hmsproxy.jobs.tables import data_format, partition_name

BUCKET_COLUMN, OFFSETS_COLUMN = "_bucketname", "_offsets"
NO_INDEX = "no index"


@dataclass(frozen=True)
class PartitionRead:
    """What a lookup reads of one base partition (or of an unpartitioned table)."""

    values: dict[str, str]  # partition column -> value; {} for an unpartitioned table
    location: str
    state: str  # fresh / stale / never built / no index
    #: file -> the row groups (Parquet) or stripes (ORC) to read; None: every one (the file is scanned)
    files: dict[str, tuple[int, ...] | None]


@dataclass
class LookupPlan:
    table: Any  # the base Table
    format: str
    index: str | None  # the index used, if any
    wanted: dict[str, list]  # column -> the values it may have (equality: one)
    reads: list[PartitionRead] = field(default_factory=list)
    index_files_opened: int = 0

    @property
    def keys(self) -> list[str]:
        return [k.name.lower() for k in self.table.partitionKeys or []]

    @property
    def columns(self) -> list[str]:
        return [c.name.lower() for c in self.table.sd.cols or []]


def as_values(value: Any) -> list:
    """A lookup's value: a scalar means equality, a list/tuple/set means IN."""
    return list(value) if isinstance(value, (list, tuple, set, frozenset)) else [value]


def _text(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def choose_index(indexes: Iterable[Any], wanted: dict[str, list]) -> Any | None:
    """The compact index with the most columns, all of them given values (an index on columns the
    lookup leaves open can't say where the rows are)."""
    usable = [
        i for i in indexes if i.indexHandlerClass == COMPACT and i.indexTableName and all(c.name.lower() in wanted for c in i.sd.cols or [])
    ]
    return max(usable, key=lambda i: (len(i.sd.cols or []), i.indexName), default=None)


def plan_lookup(connections: Any, db: str, table: str, equals: dict[str, Any]) -> LookupPlan:
    """What to read for the rows of db.table whose columns have these values (see the module doc).

    A lookup's fixed cost is mostly metastore round trips, so there are two in the common case
    (`connections`: clients/kept_connections.py): the index list (answered by the proxy from its
    memory), then, at the same time on three connections, the base and index tables (one call),
    the base table's partitions and the index table's."""
    wanted = {k.lower(): as_values(v) for k, v in equals.items()}
    if not wanted or any(not v for v in wanted.values()):
        raise ValueError("a lookup needs a value for at least one column (an empty IN list matches nothing)")
    index = connections.run(lambda ms: choose_index(ms.indexes(db, table), wanted))
    index_db, _, index_name = index.indexTableName.rpartition(".") if index is not None else ("", "", "")
    index_db = index_db or db
    # Partitions are chosen by their names only when a wanted column may be a partition column:
    # one the index doesn't cover (indexed columns are data columns).
    indexed = {c.name.lower() for c in index.sd.cols or []} if index is not None else set()
    filtered = not set(wanted) <= indexed
    # The partition calls' failures wait for the tables' answer: a missing table is said as such.
    works = [
        lambda ms: ms.tables(db, [table, index_name] if index is not None and index_db == db else [table]),
        lambda ms: deferred(lambda: _partitions(ms, db, table, wanted, filtered)),
    ]
    if index is not None:
        works.append(
            lambda ms: (
                ms.tables(index_db, [index_name]) if index_db != db else {},
                deferred(lambda: _partitions(ms, index_db, index_name, wanted, filtered)),
            )
        )
    found, base_partitions, *index_found = connections.together(*works)
    base = found.get(table)
    if base is None:
        connections.run(lambda ms: ms.get_table(db, table))  # says which table is missing, as the metastore says it
    if base.tableType == "VIRTUAL_VIEW":  # before its partitions: a view's have no files
        raise ValueError(_not_a_table(db, table, base.parameters or {}))
    base_partitions = raised(base_partitions)
    plan = LookupPlan(base, data_format(base, need="a lookup reads Parquet and ORC files"), None, wanted)
    unknown = sorted(set(wanted) - set(plan.columns) - set(plan.keys))
    if unknown:
        raise ValueError(f"{db}.{table} has no column {', '.join(unknown)} (columns: {', '.join(plan.columns + plan.keys)})")
    if plan.keys:
        partitions = [(dict(zip(plan.keys, p.values)), p.sd.location) for p in base_partitions]
    else:
        partitions = [({}, base.sd.location)]
    data_wanted = {k: v for k, v in wanted.items() if k not in plan.keys}
    index_side = None
    if index_found and data_wanted:
        ((index_tables, index_partitions),) = index_found
        index_table = (found if index_db == db else index_tables).get(index_name)
        if index_table is None:
            connections.run(lambda ms: ms.get_table(index_db, index_name))  # the index table is missing
        index_side = _IndexSide(index_table, index, data_wanted, raised(index_partitions))
        plan.index = index.indexName
    storage = ArrowStorage()
    for values, location in partitions:
        listed = data_files(storage.list(location)) if location else []
        everything = {join(location, e.name): None for e in listed}
        if index_side is None:
            plan.reads.append(PartitionRead(values, location, NO_INDEX, everything))
            continue
        name = partition_name(plan.keys, values) if plan.keys else ""
        build, rows = index_side.for_partition(values)
        found_state = state(build, name, digest(listed))
        files = index_side.listed_files(rows, location, [e.name for e in listed], build) if found_state == FRESH else None
        if files is None:
            plan.reads.append(PartitionRead(values, location, STALE if found_state == FRESH else found_state, everything))
        else:
            plan.reads.append(PartitionRead(values, location, FRESH, files))
    plan.index_files_opened = index_side.files_opened if index_side is not None else 0
    return plan


def _not_a_table(db: str, table: str, parameters: dict) -> str:
    """Why a lookup can't read a view, and where the rows are instead."""
    source = parameters.get("hmsproxy.dependent.depends-on")
    if source is None:
        return f"{db}.{table} is a view: a lookup reads a table's files; look the rows up in the table it reads"
    keys = parameters.get("hmsproxy.dependent.partitioned-by", "")
    day = f", with --where {keys.split(',')[0]}=… for a published partition" if keys else ""
    return f"{db}.{table} is a dependent table (a view over {source}): look the rows up in {source}{day}"


def _partitions(ms: Any, db: str, table: str, wanted: dict[str, list], filtered: bool) -> list:
    """The table's partitions whose values the lookup allows ([] for an unpartitioned or missing
    table): all in one call unless some wanted column may be a partition column."""
    if not filtered:
        return ms.partitions(db, table)
    return ms.partitions_matching(db, table, {k: [_text(v) for v in values] for k, values in wanted.items()})


class _IndexSide:
    """The index partitions a lookup reads, each once: its build and its rows for the wanted values."""

    def __init__(self, table: Any, index: Any, wanted: dict[str, list], partitions: list):
        self.table = table
        self.keys = [k.name.lower() for k in table.partitionKeys or []]
        self.columns = [c.name.lower() for c in index.sd.cols or []]
        self.wanted = wanted
        self.format = data_format(table)
        self.files_opened = 0
        self._seen: dict[str, tuple[IndexBuild | None, Any]] = {}
        if self.keys:
            self._locations = {partition_name(self.keys, dict(zip(self.keys, p.values))): p.sd.location for p in partitions}
        else:
            self._locations = {"": table.sd.location}

    def for_partition(self, values: dict[str, str]) -> tuple[IndexBuild | None, Any]:
        """(the build, its rows for the wanted values) of the index partition covering these base values."""
        key = partition_name(self.keys, values) if self.keys else ""
        if key not in self._seen:
            self._seen[key] = self._load(key)
        return self._seen[key]

    def _load(self, key: str) -> tuple[IndexBuild | None, Any]:
        location = self._locations.get(key)
        build = read_manifest(location) if location else None
        if build is None or build.partition != key:
            return None, None
        listing = ArrowStorage().list(location)
        if not build.describes(listing):  # other files than the build's (another writer's): not an index to trust
            return None, None
        return build, self._rows([join(location, e.name) for e in data_files(listing)])

    def _rows(self, files: list[str]) -> Any:
        """The index rows naming the wanted values: pyarrow reads only the row groups whose statistics match."""
        import pyarrow.compute as pc
        import pyarrow.dataset as ds

        if not files:
            return None
        self.files_opened += len(files)
        filesystem, _ = arrow_filesystem(files[0])
        dataset = ds.dataset([arrow_filesystem(f)[1] for f in files], format=self.format, filesystem=filesystem)
        condition = None
        for column in self.columns:
            field_type = dataset.schema.field(column).type
            term = pc.field(column).isin(_typed(self.wanted[column], field_type))
            condition = term if condition is None else condition & term
        return dataset.to_table(columns=[BUCKET_COLUMN, OFFSETS_COLUMN], filter=condition)

    @staticmethod
    def listed_files(rows: Any, location: str, names: list[str], build: IndexBuild) -> dict[str, tuple[int, ...]] | None:
        """file -> row groups for one fresh base partition; None when a listed file can't be placed in it
        (then the partition is scanned: a lookup never guesses)."""
        if rows is None:
            return {}
        current = set(names)
        only_one = len(build.base) == 1
        files: dict[str, set[int]] = {}
        for bucket, offsets in zip(rows.column(BUCKET_COLUMN).to_pylist(), rows.column(OFFSETS_COLUMN).to_pylist()):
            parent, name = posixpath.split(bucket)
            if name not in current:
                continue  # a file of another base partition the index partition covers
            if not only_one and not _same_dir(parent, location):
                continue  # same name, another base partition's directory
            files.setdefault(join(location, name), set()).update(offsets or ())
        return {f: tuple(sorted(groups)) for f, groups in sorted(files.items())}


def _same_dir(a: str, b: str) -> bool:
    """Two Hadoop-style directory paths naming the same place (file:/x and file:///x alike)."""
    from urllib.parse import urlparse

    pa_, pb = urlparse(a), urlparse(b)
    return (pa_.scheme or "file", pa_.netloc, pa_.path.rstrip("/")) == (pb.scheme or "file", pb.netloc, pb.path.rstrip("/"))


def _typed(values: list, arrow_type: Any) -> Any:
    """The lookup's values as an Arrow array of the column's type ('42' from a command line included)."""
    import pyarrow as pa

    try:
        return pa.array(values, type=arrow_type)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.array([_text(v) for v in values]).cast(arrow_type)


# --- reading the plan with pyarrow -----------------------------------------------------------------


@dataclass
class LookupResult:
    table: Any  # pyarrow Table
    plan: LookupPlan
    files_opened: int = 0  # data files
    bytes_read: int = 0  # column chunks (and footers) of data and index files read
    index_files_opened: int = 0


HIVE_TO_ARROW = {"tinyint": "int8", "smallint": "int16", "int": "int32", "bigint": "int64", "float": "float32", "double": "float64"}


def arrow_lookup(
    uri: str, table: str, equals: dict[str, Any], user: str | None = None, *, sasl_principal: str | None = None
) -> LookupResult:
    """The matching rows of `table` ('db.t' or 't' in default), read with pyarrow alone. The
    metastore connections are kept for the next lookup of this process (clients/kept_connections.py).
    `sasl_principal`: the proxy's, its port Kerberized (the caller is its ticket cache's)."""
    import getpass

    from hmsproxy.clients.kept_connections import kept
    from hmsproxy.jobs.tables import split_table_name

    db, name = split_table_name(table)
    plan = plan_lookup(kept(uri, user or getpass.getuser(), sasl_principal), db, name, equals)
    return read_plan(plan)


def read_plan(plan: LookupPlan) -> LookupResult:
    import pyarrow as pa

    result = LookupResult(None, plan, index_files_opened=plan.index_files_opened)
    columns = plan.columns
    key_types = {k.name.lower(): HIVE_TO_ARROW.get(k.type.lower(), "string") for k in plan.table.partitionKeys or []}
    pieces = []
    for read in plan.reads:
        for path, groups in read.files.items():
            piece, size = _read_file(path, groups, plan.format, columns)
            result.files_opened += 1
            result.bytes_read += size
            condition = _condition(piece, plan.wanted, plan.keys)
            if condition is not None:
                piece = piece.filter(condition)
            for key in plan.keys:
                piece = piece.append_column(key, pa.array([read.values[key]] * piece.num_rows, "string").cast(key_types[key]))
            pieces.append(piece.select([c for c in [*columns, *plan.keys] if c in piece.column_names]))
    if pieces:
        result.table = pa.concat_tables(pieces, promote_options="permissive")
    else:
        result.table = pa.table({c: pa.array([], "string") for c in [*columns, *plan.keys]})
    return result


def _condition(piece: Any, wanted: dict[str, list], keys: list[str]) -> Any | None:
    """The rows of a piece with the wanted data column values (partitions were chosen by theirs)."""
    import pyarrow.compute as pc

    mask = None
    for column, values in wanted.items():
        if column in keys or column not in piece.column_names:
            continue
        term = pc.is_in(piece.column(column), value_set=_typed(values, piece.schema.field(column).type))
        mask = term if mask is None else pc.and_(mask, term)
    return mask


def _read_file(path: str, groups: tuple[int, ...] | None, fmt: str, columns: list[str]) -> tuple[Any, int]:
    """(the rows of those row groups or stripes — all of them for None —, bytes read)."""
    filesystem, inner = arrow_filesystem(path)
    with filesystem.open_input_file(inner) as source:
        if fmt == "orc":
            import pyarrow as pa
            from pyarrow import orc

            reader = orc.ORCFile(source)
            present = [c for c in columns if c in reader.schema.names]
            stripes = range(reader.nstripes) if groups is None else groups
            batches = [reader.read_stripe(i, columns=present) for i in stripes]
            table = pa.Table.from_batches(batches) if batches else reader.schema.empty_table().select(present)
            return table, sum(b.nbytes for b in batches)
        import pyarrow.parquet as pq

        reader = pq.ParquetFile(source)
        present = [c for c in columns if c in reader.schema_arrow.names]
        chosen = list(range(reader.num_row_groups)) if groups is None else list(groups)
        table = reader.read_row_groups(chosen, columns=present)
        meta = reader.metadata
        wanted = set(present)
        size = meta.serialized_size
        for g in chosen:
            group = meta.row_group(g)
            size += sum(group.column(c).total_compressed_size for c in range(group.num_columns) if group.column(c).path_in_schema in wanted)
        return table, size

"""The built-in COMPACT handler's side of CREATE INDEX: the index table it needs.

Hive's compact index (the seed's reference implementation) keeps one row per (indexed values,
file): the indexed columns, `_bucketname` (the file) and `_offsets` (positions within the file;
here the Parquet row groups or ORC stripes holding those values), sorted on the indexed
columns and partitioned like the base table or by a subset of its partition columns.
"""

from __future__ import annotations

from hmsproxy.pipeline.errors import InvalidRequest
from hmsproxy.protocol import idl

hive = idl.hive

COMPACT = "org.apache.hadoop.hive.ql.index.compact.CompactIndexHandler"
#: What `AS '…'` may say for it: Hive's short name and its class.
HANDLER_NAMES = {"compact": COMPACT, COMPACT.lower(): COMPACT}
#: Marks an index table where the backend has no INDEX_TABLE type (Hive 3 removed indexes): the
#: value is "<base db>.<base table>.<index>", as that metastore names them.
INDEX_OF = "hmsproxy.index.of"
INDEX_TABLE = "INDEX_TABLE"

BUCKET_COLUMN = "_bucketname"
OFFSETS_COLUMN = "_offsets"

STORAGE = {
    "PARQUET": (
        "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
        "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
        "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
    ),
    "ORC": (
        "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat",
        "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat",
        "org.apache.hadoop.hive.ql.io.orc.OrcSerde",
    ),
}


def default_index_table_name(db: str, table: str, index: str) -> str:
    """Hive's name for an index table: <db>__<table>_<index>__, `db` being the client's name of the
    base table's database on every entry point. The Hive CLI computes it from the names its user
    typed, so hmsproxy's statements and Thrift calls that leave the name out do too: on a prefixed
    federated database the index table is waggle_sales.waggle_sales__t_idx__ (sales.waggle_sales__t_idx__
    on its metastore), the name a Hive user predicts, whichever client made it."""
    return f"{db}__{table}_{index}__"


def index_table(
    base,
    index: str,
    columns: list[tuple[str, str]],
    *,
    db: str,
    name: str,
    partitioned_by: list[str] | None = None,
    stored_as: str = "PARQUET",
    location: str | None = None,
    properties: dict[str, str] | None = None,
) -> object:
    """The index table's definition for `base` (a Table as the client sees it), as far as the
    statement says it: the handler completes it (`complete_index_table` for COMPACT)."""
    keys = list(base.partitionKeys or [])
    if partitioned_by is not None:
        known = {k.name.lower(): k for k in keys}
        missing = [c for c in partitioned_by if c not in known]
        if missing:
            raise InvalidRequest(
                f"hmsproxy: PARTITIONED BY ({', '.join(missing)}): not a partition column of {base.dbName}.{base.tableName}"
            )
        keys = [known[c] for c in partitioned_by]
    input_format, output_format, serde = STORAGE[stored_as]
    cols = [hive.FieldSchema(name=n, type=t, comment=None) for n, t in columns]
    sd = hive.StorageDescriptor(
        cols=cols,
        location=location,
        inputFormat=input_format,
        outputFormat=output_format,
        compressed=False,
        numBuckets=-1,
        serdeInfo=hive.SerDeInfo(name=None, serializationLib=serde, parameters={"serialization.format": "1"}),
        bucketCols=[],
        sortCols=[hive.Order(col=n, order=1) for n, _ in columns],
        parameters={},
    )
    return hive.Table(
        tableName=name,
        dbName=db,
        owner=base.owner,
        sd=sd,
        partitionKeys=[hive.FieldSchema(name=k.name, type=k.type, comment=k.comment) for k in keys],
        parameters=dict(properties or {}),
        tableType=INDEX_TABLE,
    )


def index_sd(columns: list[tuple[str, str]], stored_as: str = "PARQUET") -> object:
    """The Index struct's own storage descriptor: the indexed columns (Hive keeps them there)."""
    input_format, output_format, serde = STORAGE[stored_as]
    return hive.StorageDescriptor(
        cols=[hive.FieldSchema(name=n, type=t, comment=None) for n, t in columns],
        location=None,
        inputFormat=input_format,
        outputFormat=output_format,
        compressed=False,
        numBuckets=-1,
        serdeInfo=hive.SerDeInfo(name=None, serializationLib=serde, parameters={}),
        bucketCols=[],
        sortCols=[],
        parameters={},
    )


def complete_index_table(table) -> None:
    """The compact handler's columns after the indexed ones, sorted on those; Parquet unless ORC was
    asked for (the Hive CLI sends a text table, which the rebuild can't write row groups into)."""
    names = [c.name.lower() for c in table.sd.cols or []]
    if BUCKET_COLUMN not in names:
        table.sd.cols = [
            *(table.sd.cols or []),
            hive.FieldSchema(name=BUCKET_COLUMN, type="string", comment="the file holding the values"),
            hive.FieldSchema(name=OFFSETS_COLUMN, type="array<bigint>", comment="row groups or stripes within the file"),
        ]
    indexed = [c.name for c in table.sd.cols if c.name.lower() not in (BUCKET_COLUMN, OFFSETS_COLUMN)]
    if not table.sd.sortCols:
        table.sd.sortCols = [hive.Order(col=n, order=1) for n in indexed]
    if all(table.sd.inputFormat != formats[0] for formats in STORAGE.values()):
        table.sd.inputFormat, table.sd.outputFormat, serde = STORAGE["PARQUET"]
        table.sd.serdeInfo = hive.SerDeInfo(name=None, serializationLib=serde, parameters={"serialization.format": "1"})

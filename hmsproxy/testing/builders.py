"""Small builders for calls and the structs tests need, with Hive's usual defaults."""

from __future__ import annotations

from thriftpy2.thrift import TType

from hmsproxy.protocol import idl

hive = idl.hive

TEXT_INPUT = "org.apache.hadoop.mapred.TextInputFormat"
TEXT_OUTPUT = "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat"
LAZY_SIMPLE_SERDE = "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"


def args(method: str, **fields):
    """The `<method>_args` struct, e.g. args("get_table", dbname="sales", tbl_name="orders")."""
    cls = getattr(idl.HmsProxy, method + "_args", None)
    if cls is None:
        raise ValueError(f"no method {method!r} in the IDL")
    known = {spec[1] for spec in cls.thrift_spec.values()}
    unknown = set(fields) - known
    if unknown:  # thriftpy2 would ignore them silently
        raise TypeError(f"{method} has no argument(s) {sorted(unknown)}; it has {sorted(known)}")
    return cls(**fields)


def unwrap(result):
    """A `<method>_result` struct's success, or raise the declared exception it carries."""
    for spec in type(result).thrift_spec.values():
        if spec[1] != "success" and spec[0] == TType.STRUCT and getattr(result, spec[1]) is not None:
            raise getattr(result, spec[1])
    return getattr(result, "success", None)


def database(name: str, **fields):
    fields.setdefault("parameters", {})
    return hive.Database(name=name, **fields)


def _columns(columns) -> list:
    return [hive.FieldSchema(name=n, type=t, comment=None) for n, t in columns]


def storage(columns=(("id", "int"),), location: str | None = None):
    return hive.StorageDescriptor(
        cols=_columns(columns),
        location=location,
        inputFormat=TEXT_INPUT,
        outputFormat=TEXT_OUTPUT,
        serdeInfo=hive.SerDeInfo(serializationLib=LAZY_SIMPLE_SERDE, parameters={}),
        bucketCols=[],
        sortCols=[],
        numBuckets=-1,
        compressed=False,
        parameters={},
    )


PARQUET_SERDE = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
PARQUET_INPUT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat"
PARQUET_OUTPUT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"


def parquet_table(db: str, name: str, location: str, *, columns=(("id", "int"),), partition_keys=(), **fields):
    """A Parquet table at `location` (a URI), as Spark's `CREATE TABLE ... STORED AS PARQUET` makes one."""
    sd = storage(columns, location=location)
    sd.inputFormat, sd.outputFormat, sd.serdeInfo.serializationLib = PARQUET_INPUT, PARQUET_OUTPUT, PARQUET_SERDE
    return table(db, name, sd=sd, partition_keys=partition_keys, **fields)


def table(db: str, name: str, *, columns=(("id", "int"),), partition_keys=(), table_type="MANAGED_TABLE", parameters=None, **fields):
    """A Table; partition_keys like (("ds", "string"),)."""
    return hive.Table(
        dbName=db,
        tableName=name,
        owner=fields.pop("owner", "hmsproxy-test"),
        sd=fields.pop("sd", None) or storage(columns),
        partitionKeys=_columns(partition_keys),
        parameters=dict(parameters or {}),
        tableType=table_type,
        **fields,
    )


def partition(db: str, tbl: str, values, **fields):
    fields.setdefault("parameters", {})
    fields.setdefault("sd", storage())
    return hive.Partition(dbName=db, tableName=tbl, values=list(values), **fields)

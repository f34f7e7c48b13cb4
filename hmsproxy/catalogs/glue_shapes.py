"""Glue's Data Catalog objects (boto3's dicts) as Hive's structs.

Glue keeps Hive's shape under other names: a StorageDescriptor with Columns, SerdeInfo and so on,
PartitionKeys, TableType, Parameters. What Hive has and Glue lacks is filled as a Hive metastore
fills it (empty lists and maps, -1 buckets); what Glue has and Hive lacks (column parameters,
AdditionalLocations, schema references, resource-link targets) is left out. Skew information is
left out too: Glue keeps its values as strings where Hive keeps lists, and Spark reads none of it.
"""

from __future__ import annotations

from datetime import datetime

from hmsproxy.protocol import idl

hive = idl.hive

#: A Glue table with no TableType (made through the API without one) is shown as external: the
#: proxy never owns its files.
DEFAULT_TABLE_TYPE = "EXTERNAL_TABLE"


def _seconds(value) -> int:
    return int(value.timestamp()) if isinstance(value, datetime) else int(value or 0)


def _columns(items) -> list:
    return [hive.FieldSchema(name=c["Name"], type=c.get("Type", "string"), comment=c.get("Comment")) for c in items or ()]


def storage(sd: dict | None):
    """hive.StorageDescriptor of a Glue StorageDescriptor."""
    sd = sd or {}
    serde = sd.get("SerdeInfo") or {}
    return hive.StorageDescriptor(
        cols=_columns(sd.get("Columns")),
        location=sd.get("Location"),
        inputFormat=sd.get("InputFormat"),
        outputFormat=sd.get("OutputFormat"),
        compressed=bool(sd.get("Compressed", False)),
        numBuckets=sd.get("NumberOfBuckets", -1),
        serdeInfo=hive.SerDeInfo(
            name=serde.get("Name"), serializationLib=serde.get("SerializationLibrary"), parameters=dict(serde.get("Parameters") or {})
        ),
        bucketCols=list(sd.get("BucketColumns") or ()),
        sortCols=[hive.Order(col=s["Column"], order=s.get("SortOrder", 1)) for s in sd.get("SortColumns") or ()],
        parameters=dict(sd.get("Parameters") or {}),
        skewedInfo=hive.SkewedInfo(skewedColNames=[], skewedColValues=[], skewedColValueLocationMaps={}),
        storedAsSubDirectories=bool(sd.get("StoredAsSubDirectories", False)),
    )


#: Where a Glue database without a LocationUri (as Athena and the API make them) says it is: Spark
#: can't look at a database without a location, and this one is never a place with files.
NO_LOCATION = "hmsproxy-remote:/{name}"


def database(db: dict):
    """hive.Database of a Glue Database."""
    return hive.Database(
        name=db["Name"],
        description=db.get("Description"),
        locationUri=db.get("LocationUri") or NO_LOCATION.format(name=db["Name"]),
        parameters=dict(db.get("Parameters") or {}),
    )


def table(t: dict, database_name: str):
    """hive.Table of a Glue Table (its database named as the client asked for it)."""
    return hive.Table(
        tableName=t["Name"],
        dbName=database_name,
        owner=t.get("Owner"),
        createTime=_seconds(t.get("CreateTime")),
        lastAccessTime=_seconds(t.get("LastAccessTime")),
        retention=t.get("Retention", 0),
        sd=storage(t.get("StorageDescriptor")),
        partitionKeys=_columns(t.get("PartitionKeys")),
        parameters=dict(t.get("Parameters") or {}),
        viewOriginalText=t.get("ViewOriginalText"),
        viewExpandedText=t.get("ViewExpandedText"),
        tableType=t.get("TableType") or DEFAULT_TABLE_TYPE,
        temporary=False,
    )


def partition(p: dict, database_name: str, table_name: str):
    """hive.Partition of a Glue Partition."""
    return hive.Partition(
        values=list(p.get("Values") or ()),
        dbName=database_name,
        tableName=table_name,
        createTime=_seconds(p.get("CreationTime")),
        lastAccessTime=_seconds(p.get("LastAccessTime")),
        sd=storage(p.get("StorageDescriptor")),
        parameters=dict(p.get("Parameters") or {}),
    )

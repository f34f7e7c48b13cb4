"""An Iceberg table's REST answer as the Hive Table Iceberg's own HiveCatalog writes, and a
namespace as a Hive Database.

Iceberg-aware readers (pyiceberg's HiveCatalog, Spark's and Hive's Iceberg catalogs) find
`table_type=ICEBERG` and load the table from `metadata_location`; plain Hive readers see Iceberg's
storage handler, SerDe and formats and say they can't read it rather than reading files as text.
Iceberg's partitioning is hidden (in the metadata), so the Hive table has no partition keys.
"""

from __future__ import annotations

from hmsproxy.catalogs.iceberg_rest.hive_types import hive_type
from hmsproxy.protocol import idl

hive = idl.hive

STORAGE_HANDLER = "org.apache.iceberg.mr.hive.HiveIcebergStorageHandler"
SERDE = "org.apache.iceberg.mr.hive.HiveIcebergSerDe"
INPUT_FORMAT = "org.apache.iceberg.mr.hive.HiveIcebergInputFormat"
OUTPUT_FORMAT = "org.apache.iceberg.mr.hive.HiveIcebergOutputFormat"

#: Namespace properties that are Database fields rather than parameters.
_DATABASE_FIELDS = ("location", "comment")


def current_schema(metadata: dict) -> dict:
    """The table's current schema (format v2+: `schemas` and `current-schema-id`; v1: `schema`)."""
    schemas = metadata.get("schemas") or []
    wanted = metadata.get("current-schema-id")
    for schema in schemas:
        if schema.get("schema-id") == wanted:
            return schema
    return metadata.get("schema") or (schemas[-1] if schemas else {"fields": []})


def columns(schema: dict) -> list:
    return [hive.FieldSchema(name=f["name"], type=hive_type(f["type"]), comment=f.get("doc")) for f in schema.get("fields", ())]


def table(database: str, name: str, loaded: dict):
    """hive.Table of a loadTable answer (`metadata-location`, `metadata`)."""
    metadata = loaded.get("metadata") or {}
    properties = {str(k): str(v) for k, v in (metadata.get("properties") or {}).items()}
    parameters = {
        **properties,
        "table_type": "ICEBERG",
        "metadata_location": loaded.get("metadata-location") or "",
        "EXTERNAL": "TRUE",
        "storage_handler": STORAGE_HANDLER,
    }
    if metadata.get("table-uuid"):
        parameters["uuid"] = metadata["table-uuid"]
    sd = hive.StorageDescriptor(
        cols=columns(current_schema(metadata)),
        location=metadata.get("location"),
        inputFormat=INPUT_FORMAT,
        outputFormat=OUTPUT_FORMAT,
        compressed=False,
        numBuckets=-1,
        serdeInfo=hive.SerDeInfo(serializationLib=SERDE, parameters={"serialization.format": "1"}),
        bucketCols=[],
        sortCols=[],
        parameters={},
        skewedInfo=hive.SkewedInfo(skewedColNames=[], skewedColValues=[], skewedColValueLocationMaps={}),
        storedAsSubDirectories=False,
    )
    updated_s = int(metadata.get("last-updated-ms") or 0) // 1000
    return hive.Table(
        tableName=name,
        dbName=database,
        owner=properties.get("owner"),
        createTime=updated_s,
        lastAccessTime=0,
        retention=0,
        sd=sd,
        partitionKeys=[],
        parameters=parameters,
        tableType="EXTERNAL_TABLE",
    )


def database(name: str, properties: dict, default_location: str | None = None):
    """hive.Database of a namespace and its properties (`location`, `comment` become its fields)."""
    properties = {str(k): str(v) for k, v in (properties or {}).items()}
    return hive.Database(
        name=name,
        description=properties.get("comment"),
        locationUri=properties.get("location") or default_location,
        parameters={k: v for k, v in properties.items() if k not in _DATABASE_FIELDS},
        ownerName=properties.get("owner"),
    )

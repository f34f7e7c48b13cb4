"""`VIA 'tests.example_catalog.factory:JsonFileFactory'`: databases and tables listed in one JSON file.

    {"databases": {"sales": {"location": "file:/data/sales",
                             "tables": {"orders": {"location": "file:/data/sales/orders", "format": "parquet",
                                                   "columns": [["id", "bigint"], ["customer", "string"]]}}}}}

The whole of a catalog factory: `validate` names the property that is wrong, `where` names the
target (never a secret), `metastore` hands the proxy a maker of clients; the client answers the
four reads of catalogs/client.py in Hive's structs and raises the interface's three errors. The
file is read when a connection opens, so a new connection sees the file's changes.
"""

from __future__ import annotations

import json
from pathlib import Path

from hmsproxy.catalogs.client import CatalogNotFound, CatalogRefused, CatalogUnavailable
from hmsproxy.catalogs.metastore import catalog_metastore
from hmsproxy.protocol import idl

hive = idl.hive
PATH = "path"
#: Hive's formats and SerDe by the file's `format`.
FORMATS = {
    "parquet": (
        "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
        "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
        "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
    ),
    "orc": (
        "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat",
        "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat",
        "org.apache.hadoop.hive.ql.io.orc.OrcSerde",
    ),
}


class JsonFileFactory:
    def validate(self, properties: dict[str, str]) -> None:
        path = (properties.get(PATH) or "").strip()
        if not path:
            raise ValueError(f"property '{PATH}' is required (the catalog's JSON file)")
        if not Path(path).is_absolute():
            raise ValueError(f"property '{PATH}': {path!r} is not an absolute path")

    def where(self, properties: dict[str, str]) -> str:
        return f"JSON catalog {properties.get(PATH, '').strip()}"

    def metastore(self, key: str, properties: dict[str, str]):
        self.validate(properties)
        path, where = Path(properties[PATH].strip()), self.where(properties)
        return catalog_metastore(key, where, lambda connect_timeout_s, call_timeout_s: JsonFileCatalog(path, where))


class JsonFileCatalog:
    def __init__(self, path: Path, description: str):
        self.path, self.description = path, description
        self._databases: dict = {}

    def open(self) -> None:
        try:
            self._databases = json.loads(self.path.read_text(encoding="utf-8"))["databases"]
        except OSError as e:  # not there (yet), unreadable: down, as a server that doesn't answer
            raise CatalogUnavailable(f"{self.description}: {e.strerror}") from None
        except (ValueError, KeyError, TypeError) as e:
            raise CatalogRefused(f"{self.description}: not a catalog file ({e})") from None

    def close(self) -> None:
        self._databases = {}

    def databases(self) -> list[str]:
        return sorted(self._databases)

    def database(self, name: str):
        found = self._databases.get(name)
        if found is None:
            raise CatalogNotFound(f"{self.description} has no database '{name}'")
        return hive.Database(name=name, locationUri=found.get("location"), parameters={})

    def tables(self, database: str) -> list[str]:
        self.database(database)
        return sorted(self._databases[database].get("tables") or {})

    def table(self, database: str, name: str):
        found = (self._databases.get(database, {}).get("tables") or {}).get(name)
        if found is None:
            raise CatalogNotFound(f"{self.description} has no table '{database}.{name}'")
        input_format, output_format, serde = FORMATS[found.get("format", "parquet")]
        sd = hive.StorageDescriptor(
            cols=[hive.FieldSchema(name=n, type=t) for n, t in found["columns"]],
            location=found.get("location"),
            inputFormat=input_format,
            outputFormat=output_format,
            serdeInfo=hive.SerDeInfo(serializationLib=serde, parameters={}),
            bucketCols=[],
            sortCols=[],
            parameters={},
        )
        return hive.Table(
            tableName=name, dbName=database, tableType="EXTERNAL_TABLE", sd=sd, partitionKeys=[], parameters={"EXTERNAL": "TRUE"}
        )

"""Metastores of a Spark test's own holding tables whose data Spark wrote (the targets of remote links)."""

from __future__ import annotations

from pathlib import Path

from hmsproxy.protocol import idl
from hmsproxy.testing.builders import parquet_table

hive = idl.hive


def external_parquet_table(db: str, name: str, location: str, cols: list[tuple[str, str]]):
    """An external Parquet table `db.name` over the files at `location` (a URI), as Hive records one."""
    made = parquet_table(db, name, location, columns=cols, table_type="EXTERNAL_TABLE", parameters={"EXTERNAL": "TRUE"}, owner="tester")
    made.sd.serdeInfo.parameters = {"serialization.format": "1"}
    return made


def metastore_with_table(metastore_factory, spark, root: Path, name: str, table: str, schema: str, rows, *, description: str):
    """A metastore of its own (`metastore_factory`'s, named `name`) holding `table` ("db.table"): its
    database (described as `description`) and an external Parquet table over `rows` of `schema`
    (Spark's DDL, "id INT, amount INT"), which Spark writes under `root`."""
    db, tbl = table.split(".")
    (ms,) = metastore_factory(1, name=name)
    data = root / tbl
    frame = spark.createDataFrame(rows, schema)
    frame.write.parquet(data.as_uri())
    cols = [(f.name, f.dataType.simpleString()) for f in frame.schema]
    client = ms.client()
    try:
        client.create_database(hive.Database(name=db, description=description, locationUri=(root / f"{db}.db").as_uri(), parameters={}))
        client.create_table(external_parquet_table(db, tbl, data.as_uri(), cols))
    finally:
        client.close()
    return ms

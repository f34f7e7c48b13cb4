"""A SparkSession logged in from a keytab, against a Kerberized proxy federating two metastores; its own process.

`python -m tests.support.kerberos_federation_job URI PRINCIPAL KEYTAB SERVICE_PRINCIPAL WAREHOUSE DB FEDERATED_TABLE [REMOTE_TABLE]`:
lists the databases (both metastores'), creates DB on the primary with a Parquet table, inserts
two rows and reads them back, reads FEDERATED_TABLE (`prefix_db.table`, on the federated metastore)
and REMOTE_TABLE if given (a remote table on a Kerberized metastore), drops DB, and prints one line
`RESULT {json}`. The environment is kerberos_spark_job.py's.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.support.kerberos_spark_job import kerberized_spark


def main(uri: str, principal: str, keytab: str, service: str, warehouse: str, db: str, federated: str, remote: str = "") -> None:
    spark = kerberized_spark(uri, principal, keytab, service, Path(warehouse))
    try:
        databases = sorted(r[0] for r in spark.sql("SHOW DATABASES").collect())
        spark.sql(f"CREATE DATABASE {db}")
        spark.sql(f"CREATE TABLE {db}.t (id BIGINT, name STRING) USING parquet")
        spark.sql(f"INSERT INTO {db}.t VALUES (1, 'a'), (2, 'b')")
        rows = [[r.id, r.name] for r in spark.sql(f"SELECT id, name FROM {db}.t ORDER BY id").collect()]
        federated_rows = [[r.id, r.name] for r in spark.sql(f"SELECT id, name FROM {federated} ORDER BY id").collect()]
        remote_rows = [[r.id, r.name] for r in spark.sql(f"SELECT id, name FROM {remote} ORDER BY id").collect()] if remote else []
        spark.sql(f"DROP DATABASE {db} CASCADE")
    finally:
        spark.stop()
    print(
        "RESULT " + json.dumps({"databases": databases, "rows": rows, "federated_rows": federated_rows, "remote_rows": remote_rows}),
        flush=True,
    )


if __name__ == "__main__":
    main(*sys.argv[1:9])

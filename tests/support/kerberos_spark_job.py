"""A SparkSession logged in from a keytab, against a Kerberized metastore URI; run in its own process.

`python -m tests.support.kerberos_spark_job URI PRINCIPAL KEYTAB SERVICE_PRINCIPAL WAREHOUSE DB [INDEXED]`
(PRINCIPAL and KEYTAB `-`: no login, a delegation token from HADOOP_TOKEN_FILE_LOCATION instead):
creates DB and a Parquet table in it, inserts two rows, reads them back, lists the tables, drops
DB, and prints one line `RESULT {json}`. Given INDEXED (a table with an index on `id`), it also
runs `SELECT * … WHERE id = 2` on it with hmsproxy's Spark extension switched on, and reports the
rows and what the extension said it read (`extension`). The caller gives the environment Kerberos needs:
HADOOP_CONF_DIR (a core-site.xml with hadoop.security.authentication=kerberos) and
JDK_JAVA_OPTIONS (-Djava.security.krb5.conf=...). A process of its own because the Hive client's
settings are fixed when a process's one SparkSession starts (tests/support/spark.py).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from tests.support.spark import make_spark

#: Given for PRINCIPAL and KEYTAB: no Kerberos login; the delegation token in the file that
#: HADOOP_TOKEN_FILE_LOCATION names logs the session's Hive client in (DIGEST-MD5).
BY_TOKEN = "-"


def extension_notes(frame) -> list[str]:
    """What hmsproxy's Spark extension says in the frame's executed plan of the index it used, e.g.
    ["hmsproxy index id_idx: 1 of 2 files"]; [] where it left the plan alone."""
    return re.findall(r"hmsproxy index \w+: \d+ of \d+ files", frame._jdf.queryExecution().executedPlan().toString())


def kerberized_spark(uri: str, principal: str, keytab: str, service: str, warehouse: Path):
    """The SparkSession: logged in as `principal` from `keytab` (or by token: BY_TOKEN), its
    metastore `uri` Kerberized as `service`, hmsproxy's Spark extension on (where it is built)."""
    from hmsproxy.jobs.spark_extension import ENABLED_CONF

    conf = {
        "spark.hadoop.hive.metastore.sasl.enabled": "true",
        "spark.hadoop.hive.metastore.kerberos.principal": service,
        ENABLED_CONF: "true",
    }
    if principal != BY_TOKEN:
        conf |= {"spark.kerberos.principal": principal, "spark.kerberos.keytab": keytab}
    return make_spark(uri, warehouse, app_name="hmsproxy-kerberos", extra_conf=conf)


def main(uri: str, principal: str, keytab: str, service: str, warehouse: str, db: str, indexed: str = "") -> None:
    spark = kerberized_spark(uri, principal, keytab, service, Path(warehouse))
    found = {}
    try:
        if indexed:
            frame = spark.sql(f"SELECT * FROM {indexed} WHERE id = 2")
            found["indexed_rows"] = sorted([list(r) for r in frame.collect()])
            found["extension"] = extension_notes(frame)
        spark.sql(f"CREATE DATABASE {db}")
        spark.sql(f"CREATE TABLE {db}.t (id BIGINT, name STRING) USING parquet")
        spark.sql(f"INSERT INTO {db}.t VALUES (1, 'a'), (2, 'b')")
        rows = [[r.id, r.name] for r in spark.sql(f"SELECT id, name FROM {db}.t ORDER BY id").collect()]
        tables = sorted(t.name for t in spark.catalog.listTables(db))
        spark.sql(f"DROP DATABASE {db} CASCADE")
    finally:
        spark.stop()
    print("RESULT " + json.dumps({"rows": rows, "tables": tables, **found}), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:8])

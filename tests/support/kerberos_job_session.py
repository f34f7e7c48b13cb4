"""A job's SparkSession (jobs/context.JobContext.spark, as `hmsproxy job --sasl --principal` makes it)
reading a table through a Kerberized proxy port; run in its own process.

`python -m tests.support.kerberos_job_session URI PRINCIPAL DB.TABLE`: prints one line
`RESULT {json}`: the table's rows (sorted) as Spark's Hive catalog reads them, the rows with id 2 as
the Spark helpers' pruned read finds them and as plain SQL finds them (with what hmsproxy's Spark
extension, which job sessions load, says it read: its connection is Kerberized as the session's
Hive client is), and the columns of `SHOW REMOTE DATABASES` run with the Spark helper's `sql` (both
open this process's own connections, Kerberized as the session is). The caller's ticket
cache (KRB5CCNAME) and realm (KRB5_CONFIG) are the environment's; nothing else is configured here.
A process of its own because the Hive client's settings are fixed when a process's one SparkSession starts.
"""

from __future__ import annotations

import json
import sys

from hmsproxy.clients.spark import read, sql
from hmsproxy.jobs.context import JobContext
from tests.support.kerberos_spark_job import extension_notes


def main(uri: str, principal: str, table: str) -> None:
    context = JobContext(uri, sasl_principal=principal)
    try:
        spark = context.spark
        rows = sorted([list(r) for r in spark.table(table).collect()])
        pruned = sorted([list(r) for r in read(spark, table, id=2).collect()])
        frame = spark.sql(f"SELECT * FROM {table} WHERE id = 2")
        plain_sql = sorted([list(r) for r in frame.collect()])
        used = extension_notes(frame)
        remote = sql(spark, "SHOW REMOTE DATABASES").columns
    finally:
        context.close()
    answer = {"rows": rows, "pruned": pruned, "plain_sql": plain_sql, "extension": used, "remote_columns": remote}
    print("RESULT " + json.dumps(answer), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:4])

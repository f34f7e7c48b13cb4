"""A job's SparkSession (jobs/context.JobContext.spark, as `hmsproxy job --sasl --principal` makes it)
reading a table through a Kerberized proxy port; run in its own process.

`python -m tests.support.kerberos_job_session URI PRINCIPAL DB.TABLE`: prints one line
`RESULT {json}` with the table's rows (sorted) as Spark's Hive catalog reads them. The caller's ticket
cache (KRB5CCNAME) and realm (KRB5_CONFIG) are the environment's; nothing else is configured here.
A process of its own because the Hive client's settings are fixed when a process's one SparkSession starts.
"""

from __future__ import annotations

import json
import sys

from hmsproxy.jobs.context import JobContext


def main(uri: str, principal: str, table: str) -> None:
    context = JobContext(uri, sasl_principal=principal)
    try:
        rows = sorted([list(r) for r in context.spark.table(table).collect()])
    finally:
        context.close()
    print("RESULT " + json.dumps({"rows": rows}), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:4])

"""A SparkSession (tests/support/spark.make_spark: hive.metastore.failure.retries=1, retry delay 1 s)
listing a database's tables through its metastore URI again and again, until a stop file appears.

Run as a script (its own process: one SparkSession per process, and the suite's may be bound to
another metastore): `python -m tests.support.spark_catalog_loop URI WAREHOUSE DATABASE STOP_FILE`.
Prints `{"ready": true}` once the session answered a query, then one JSON line per query:
`{"t": <wall clock at its start>, "ok": bool, "error": "..."}`.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

PAUSE_S = 0.2


def main(uri: str, warehouse: str, database: str, stop_file: str) -> int:
    from tests.support.spark import make_spark

    spark = make_spark(uri, Path(warehouse), app_name="replicas-under-fault")
    ready = False
    stop = Path(stop_file)
    while not stop.exists():
        started = time.time()
        try:
            spark.sql(f"SHOW TABLES IN {database}").count()  # getDatabase and getTables on the metastore
            line = {"t": started, "ok": True}
        except Exception as e:  # counted by the test
            line = {"t": started, "ok": False, "error": str(e)[:400]}
        if not ready and line["ok"]:
            ready = True
            print(json.dumps({"ready": True}), flush=True)
        print(json.dumps(line), flush=True)
        time.sleep(PAUSE_S)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))

"""A SparkSession (tests/support/spark.make_spark: hive.metastore.failure.retries=1, retry delay 1 s)
listing a database's tables through its metastore URI(s) again and again, until a stop file appears.

Run as a script (its own process: one SparkSession per process, and the suite's may be bound to
another metastore):
`python -m tests.support.spark_catalog_loop URIS WAREHOUSE DATABASE GO_FILE STOP_FILE [CONF_JSON]`.
URIS is hive.metastore.uris as Hive takes it (one URI, or several comma-separated); CONF_JSON, a
JSON object of Spark settings laid over make_spark's (e.g. the retries off).

The session is built and runs a query that needs no metastore (nor a task) at once, so the JVM's start overlaps
whatever the caller is still setting up; its first metastore query waits for GO_FILE.
Prints `{"warm": true}` when the session is built, `{"ready": true}` once it answered a query, then
one JSON line per query: `{"t": <wall clock at its start>, "ok": bool, "error": "..."}`.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

PAUSE_S = 0.2


def say(line: dict) -> None:
    print(json.dumps(line), flush=True)


def main(uris: str, warehouse: str, database: str, go_file: str, stop_file: str, conf_json: str = "{}") -> int:
    from tests.support.spark import make_spark

    spark = make_spark(uris, Path(warehouse), app_name="replicas-under-fault", extra_conf=json.loads(conf_json))
    spark.sql("SELECT 1").collect()  # parser, analyzer and optimizer warmed; no task, no metastore
    say({"warm": True})
    go, stop = Path(go_file), Path(stop_file)
    while not go.exists() and not stop.exists():
        time.sleep(0.1)
    ready = False
    while not stop.exists():
        started = time.time()
        try:
            spark.sql(f"SHOW TABLES IN {database}").count()  # getDatabase and getTables on the metastore
            line = {"t": started, "ok": True}
        except Exception as e:  # counted by the test
            line = {"t": started, "ok": False, "error": str(e)[:400]}
        if not ready and line["ok"]:
            ready = True
            say({"ready": True})
        say(line)
        time.sleep(PAUSE_S)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))

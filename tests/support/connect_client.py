"""A Spark Connect client process, as a notebook on Connect runs hmsproxy's Spark helpers.

    python -m tests.support.connect_client sc://127.0.0.1:PORT '[["sql", "SHOW INDEX ON t"], ["lookup", "t", {"user_id": 3}]]'

Runs each action (`sql`, `lookup`, `read`: hmsproxy.clients.spark's functions) on one Connect
session and prints one JSON list: each action's rows as lists. Connect runs in its own process
because pyspark picks Connect or classic column functions for the whole process (a session made
with `builder.remote` switches it), as in a notebook on Connect.
"""

from __future__ import annotations

import json
import sys


def main(url: str, actions: list) -> list:
    from pyspark.sql import SparkSession

    from hmsproxy.clients.spark import lookup, read, sql
    from hmsproxy.jobs.spark_sessions import is_connect

    spark = SparkSession.builder.remote(url).getOrCreate()
    assert is_connect(spark), type(spark)
    helpers = {
        "sql": lambda statement: sql(spark, statement),
        "lookup": lambda t, eq: lookup(spark, t, **eq),
        "read": lambda t, eq: read(spark, t, **eq),
    }
    try:
        return [[list(row) for row in helpers[name](*args).collect()] for name, *args in actions]
    finally:
        spark.stop()


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], json.loads(sys.argv[2]))))

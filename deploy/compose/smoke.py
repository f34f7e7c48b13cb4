"""End-to-end smoke test of a running hmsproxy with a real PySpark client.

Run by the `spark` service of docker-compose.yml (mounted at /opt/hmsproxy/smoke.py):

    docker compose run --rm spark

and usable against any proxy:

    python deploy/compose/smoke.py --uri thrift://127.0.0.1:9083 --warehouse file:///tmp/wh

It creates a database and a table through the proxy, inserts three rows, reads them back,
prints them, and checks that the federated metastore's databases are visible. The last
line is ``SMOKE OK ...`` and the exit status 0 when all of that worked, else 1.

The warehouse directory must be the same path for this client and the primary metastore
(in compose: the shared `warehouse` volume at /data/warehouse): Spark writes the data
files, the metastore creates the directories.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

EXPECTED_ROWS = [(1, "alpha"), (2, "beta"), (3, "gamma")]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--uri", default="thrift://hmsproxy:9083", help="hmsproxy's Thrift URI")
    p.add_argument("--warehouse", default="file:///data/warehouse", help="spark.sql.warehouse.dir")
    p.add_argument("--database", default="smoke", help="database to create on the primary")
    p.add_argument(
        "--expect-database",
        action="append",
        default=None,
        help="a database that SHOW DATABASES must list (repeatable; default: federated_default)",
    )
    return p.parse_args(argv)


def make_spark(uri: str, warehouse: str):
    from pyspark.sql import SparkSession

    # Spark's Hive client may boot an embedded Derby for its session state: keep it in /tmp.
    scratch = Path(tempfile.mkdtemp(prefix="hmsproxy-smoke-"))
    java_opts = f"-Dderby.system.home={scratch} -Dderby.stream.error.file={scratch / 'derby.log'} -Djava.net.preferIPv4Stack=true"
    return (
        SparkSession.builder.master("local[1]")
        .appName("hmsproxy-smoke")
        .config("spark.sql.catalogImplementation", "hive")
        .config("spark.hadoop.hive.metastore.uris", uri)
        .config("spark.sql.warehouse.dir", warehouse)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.driver.memory", "1g")
        .config("spark.driver.extraJavaOptions", java_opts)
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.local.dir", str(scratch))
        .config("spark.pyspark.python", sys.executable)
        .config("spark.hadoop.hive.metastore.client.socket.timeout", "120s")
        .config("spark.hadoop.hive.metastore.failure.retries", "3")
        .config("spark.hadoop.hive.metastore.client.connect.retry.delay", "2s")
        .enableHiveSupport()
        .getOrCreate()
    )


def run(spark, database: str, expect_databases: list[str]) -> list[str]:
    """The smoke scenario; returns the problems found (empty: all good)."""
    problems: list[str] = []
    table = f"{database}.items"
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {database}")
    spark.sql(f"DROP TABLE IF EXISTS {table}")
    spark.sql(f"CREATE TABLE {table} (id INT, name STRING) USING parquet")
    values = ", ".join(f"({i}, '{name}')" for i, name in EXPECTED_ROWS)
    spark.sql(f"INSERT INTO {table} VALUES {values}")

    rows = [(r["id"], r["name"]) for r in spark.sql(f"SELECT id, name FROM {table} ORDER BY id").collect()]
    print(f"rows of {table}:")
    for row in rows:
        print(f"  {row[0]}\t{row[1]}")
    if rows != EXPECTED_ROWS:
        problems.append(f"{table} returned {rows}, expected {EXPECTED_ROWS}")

    databases = sorted(r[0] for r in spark.sql("SHOW DATABASES").collect())
    print(f"databases: {', '.join(databases)}")
    for name in [database, *expect_databases]:
        if name not in databases:
            problems.append(f"SHOW DATABASES does not list {name!r}")
    return problems


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    expect = args.expect_database if args.expect_database is not None else ["federated_default"]
    print(f"smoke: metastore {args.uri}, warehouse {args.warehouse}", flush=True)
    spark = make_spark(args.uri, args.warehouse)
    spark.sparkContext.setLogLevel("WARN")
    try:
        problems = run(spark, args.database, expect)
    finally:
        spark.stop()
    if problems:
        for problem in problems:
            print(f"SMOKE FAILED: {problem}", flush=True)
        return 1
    print(f"SMOKE OK: {len(EXPECTED_ROWS)} rows through {args.uri}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

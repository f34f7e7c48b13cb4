"""Spark with Iceberg's session catalog reading an Iceberg REST table through the proxy; run in its own
process (its session needs Iceberg's runtime jar and catalog settings, which the suite's shared session
does not have).

`python -m tests.support.iceberg_rest_spark_job PROXY_URI WAREHOUSE RUNTIME_JAR LAKE` where LAKE is a
remote database of the proxy on a REST namespace holding `orders`. It writes a Hive table on the primary
(`default.ice_customers`) and one on the federated metastore (`waggle_sales.ice_regions`), then
lists LAKE, scans `LAKE.orders`, joins the three in one query and tries an INSERT into
`LAKE.orders`. Prints one line `RESULT {json}`; the test compares.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from tests.support.spark import make_spark

PRIMARY_TABLE = "default.ice_customers"
FEDERATED_TABLE = "waggle_sales.ice_regions"


def iceberg_conf(proxy_uri: str, runtime_jar: str) -> dict[str, str]:
    """Iceberg's SparkSessionCatalog over the proxy: Iceberg tables load through Iceberg's HiveCatalog
    (get_table, then the metadata file), every other table through Spark's own Hive client."""
    return {
        "spark.jars": runtime_jar,
        "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        "spark.sql.catalog.spark_catalog": "org.apache.iceberg.spark.SparkSessionCatalog",
        "spark.sql.catalog.spark_catalog.type": "hive",
        "spark.sql.catalog.spark_catalog.uri": proxy_uri,
        # Each query loads the table afresh: the scan after the refused INSERT reads what the catalog has.
        "spark.sql.catalog.spark_catalog.cache-enabled": "false",
    }


def plain(value):
    return value if value is None or isinstance(value, (int, float, str, bool)) else str(value)


def rows(frame) -> list[list]:
    return sorted([plain(v) for v in r] for r in frame.collect())


def hive_tables(spark) -> None:
    spark.sql(f"DROP TABLE IF EXISTS {PRIMARY_TABLE}")
    spark.sql(f"CREATE TABLE {PRIMARY_TABLE} (customer STRING, region_id INT) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {PRIMARY_TABLE} VALUES ('ann', 1), ('bob', 2), ('cy', 1)")
    spark.sql(f"DROP TABLE IF EXISTS {FEDERATED_TABLE}")
    spark.sql(f"CREATE TABLE {FEDERATED_TABLE} (region_id INT, region STRING) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {FEDERATED_TABLE} VALUES (1, 'north'), (2, 'south')")


def step(what: str) -> None:
    print(f"[iceberg-rest-spark] {what}", file=sys.stderr, flush=True)  # where a hung run was, in its stderr


def main(proxy_uri: str, warehouse: str, runtime_jar: str, lake: str) -> dict:
    spark = make_spark(proxy_uri, Path(warehouse), app_name="iceberg-rest", extra_conf=iceberg_conf(proxy_uri, runtime_jar))
    try:
        step("hive tables")
        hive_tables(spark)
        step("show tables")
        result: dict = {"tables": sorted(r.tableName for r in spark.sql(f"SHOW TABLES IN {lake}").collect())}
        step("select")
        frame = spark.sql(f"SELECT * FROM {lake}.orders")
        result["columns"] = frame.columns
        result["rows"] = rows(frame)
        result["provider"] = [r[1] for r in spark.sql(f"DESCRIBE TABLE EXTENDED {lake}.orders").collect() if r[0] == "Provider"]
        step("join")
        result["join"] = rows(
            spark.sql(
                f"SELECT c.customer, r.region, sum(o.amount) AS total FROM {lake}.orders o "
                f"JOIN {PRIMARY_TABLE} c ON c.customer = o.customer "
                f"JOIN {FEDERATED_TABLE} r ON r.region_id = c.region_id "
                "GROUP BY c.customer, r.region"
            )
        )
        step("insert")
        began = time.monotonic()
        try:
            spark.sql(f"INSERT INTO {lake}.orders SELECT * FROM {lake}.orders LIMIT 1")
            result["insert"] = "written"
        except Exception as e:  # the refusal's text, with its JVM causes, for the test to read
            result["insert"] = f"{type(e).__name__}: {e}"
        result["insert_s"] = time.monotonic() - began
        result["rows_after_insert"] = rows(spark.sql(f"SELECT * FROM {lake}.orders"))
        return result
    finally:
        for table in (PRIMARY_TABLE, FEDERATED_TABLE):
            spark.sql(f"DROP TABLE IF EXISTS {table}")
        spark.stop()


if __name__ == "__main__":
    print("RESULT " + json.dumps(main(*sys.argv[1:5])), flush=True)

"""Spark with Iceberg's SparkSessionCatalog (`type=hive`, `uri` = the proxy) reading an Iceberg REST table
through a remote database `VIA 'iceberg-rest'`, against Apache Iceberg's own REST catalog server
(tests/support/iceberg_rest.py). The table is made and appended with pyiceberg's RestCatalog directly;
Spark must list it, scan the same rows, join it in one query with a Hive table on the primary and one
on the federated metastore, and have its INSERT refused with the proxy's read-only message.

One SparkSession for the module, in its own process (tests/support/iceberg_rest_spark_job.py): it needs
Iceberg's Spark runtime (`hmsproxy dev fetch iceberg-spark`), which the suite's shared session lacks.
Iceberg publishes runtimes for Spark 4.0 and 4.1 only, so on a newer pyspark the module is skipped.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import sys
import uuid
from decimal import Decimal

import pyarrow as pa
import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import NamespaceAlreadyExistsError, NoSuchTableError
from pyiceberg.schema import Schema
from pyiceberg.types import DecimalType, LongType, NestedField, StringType, TimestampType

from hmsproxy.clients.proxy import HmsProxyClient
from hmsproxy.dev import iceberg_jars, maven
from tests.spark.test_index_entry_points_spark import run
from tests.support.required import unavailable

pytestmark = [
    pytest.mark.spark,
    pytest.mark.skipif(not iceberg_jars.has_runtime(), reason="Iceberg has no Spark runtime for this pyspark's Spark"),
]

NAMESPACE = "spark_sales"  # not the integration tests' `sales`: their listings stay exactly theirs
SCHEMA = Schema(
    NestedField(1, "order_id", LongType(), required=True),
    NestedField(2, "customer", StringType()),
    NestedField(3, "amount", DecimalType(10, 2)),
    NestedField(4, "placed_at", TimestampType()),
)
BATCHES = [
    {"order_id": [1, 2], "customer": ["ann", "bob"], "amount": ["10.50", "3.25"], "day": [1, 2]},
    {"order_id": [3], "customer": ["cy"], "amount": ["99.99"], "day": [3]},
]


def arrow(batch: dict) -> pa.Table:
    return pa.table(
        {
            "order_id": pa.array(batch["order_id"], pa.int64()),
            "customer": batch["customer"],
            "amount": pa.array([Decimal(a) for a in batch["amount"]], pa.decimal128(10, 2)),
            "placed_at": pa.array([datetime.datetime(2026, 11, d, 12, 0) for d in batch["day"]], pa.timestamp("us")),
        },
        schema=pa.schema(
            [
                pa.field("order_id", pa.int64(), nullable=False),
                ("customer", pa.string()),
                ("amount", pa.decimal128(10, 2)),
                ("placed_at", pa.timestamp("us")),
            ]
        ),
    )


def plain_rows(table: pa.Table) -> list[list]:
    """The rows as the job prints Spark's: ints and strings as they are, anything else as str()."""
    return sorted([v if v is None or isinstance(v, (int, str)) else str(v) for v in row.values()] for row in table.to_pylist())


@pytest.fixture(scope="module")
def runtime_jar():
    try:
        return str(iceberg_jars.runtime_jar())
    except maven.FetchError as e:
        unavailable(f"cannot fetch Iceberg's Spark runtime with Maven: {e}")


@pytest.fixture(scope="module")
def direct(iceberg_rest):
    """The REST catalog, direct, with spark_sales.orders made afresh and appended twice (two snapshots)."""
    catalog = RestCatalog("direct", uri=iceberg_rest.uri, warehouse=iceberg_rest.warehouse)
    with contextlib.suppress(NamespaceAlreadyExistsError):  # the session's server: another module may have made it
        catalog.create_namespace(NAMESPACE)
    with contextlib.suppress(NoSuchTableError):
        catalog.drop_table(f"{NAMESPACE}.orders")
    table = catalog.create_table(f"{NAMESPACE}.orders", schema=SCHEMA)
    for batch in BATCHES:
        table.append(arrow(batch))
    return catalog


@pytest.fixture(scope="module")
def spark_result(proxy, federated_dbs, iceberg_rest, direct, runtime_jar, tmp_path_factory):
    """The job's answers (one SparkSession, its own process) over remote database `lake_<id>`."""
    lake = f"lake_{uuid.uuid4().hex[:8]}"
    tmp = tmp_path_factory.mktemp("iceberg-rest-spark")
    with HmsProxyClient(proxy.uri) as client:
        client.execute(
            f"CREATE REMOTE DATABASE {lake} CONNECTED TO {NAMESPACE} VIA 'iceberg-rest' "
            f"WITH DBPROPERTIES ('uri' = '{iceberg_rest.uri}', 'warehouse' = '{iceberg_rest.warehouse}')"
        )
        try:
            argv = [sys.executable, "-m", "tests.support.iceberg_rest_spark_job", proxy.uri, str(tmp / "warehouse"), runtime_jar, lake]
            done = run(argv, tmp, timeout=600)
        finally:
            client.execute(f"DROP REMOTE DATABASE {lake}")
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and lines, done.stderr[-6000:]
    return json.loads(lines[-1][len("RESULT ") :])


def test_spark_lists_the_namespaces_tables(spark_result):
    assert spark_result["tables"] == ["orders"]


def test_spark_scans_the_rows_restcatalog_scans_directly(spark_result, direct):
    direct_rows = plain_rows(direct.load_table(f"{NAMESPACE}.orders").scan().to_arrow())
    assert len(direct_rows) == 3  # both appends
    assert spark_result["columns"] == ["order_id", "customer", "amount", "placed_at"]
    assert spark_result["rows"] == direct_rows
    assert spark_result["provider"] == ["iceberg"]  # loaded by Iceberg from its metadata, not as a Hive table


def test_one_query_joins_primary_federated_and_iceberg_rest_tables(spark_result):
    assert spark_result["join"] == [["ann", "north", "10.50"], ["bob", "south", "3.25"], ["cy", "north", "99.99"]]


def test_spark_insert_is_refused_read_only_and_nothing_is_written(spark_result, direct, iceberg_rest):
    refusal = spark_result["insert"]
    assert refusal != "written"
    assert "read-only" in refusal and iceberg_rest.uri in refusal, refusal[:3000]
    # Not Iceberg's retries of a refused lock (3 minutes, then 4 commit attempts): the lock is granted, the swap refused.
    assert spark_result["insert_s"] < 120, spark_result["insert_s"]
    assert spark_result["rows_after_insert"] == spark_result["rows"]
    assert len(direct.load_table(f"{NAMESPACE}.orders").scan().to_arrow()) == 3

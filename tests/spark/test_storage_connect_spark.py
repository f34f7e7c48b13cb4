"""`read()` and a job on Spark Connect with the table on S3: the Connect client has no sparkContext,
so its listings go through hmsproxy's storage door with HADOOP_CONF_DIR's keys (storage_conf). One
Connect server (S3A's jars and keys in its conf) behind the storage stack's proxy; clients in their
own processes (tests/support/connect_client.py)."""

from __future__ import annotations

import subprocess

import pytest

from hmsproxy.dev.storage_jars import spark_class_path
from hmsproxy.features.skew.layout import from_parameters
from tests.spark.test_spark_connect_spark import HMSPROXY, env, job_on_connect, on_connect
from tests.spark.test_storage_spark import thrift_client
from tests.support.required import unavailable
from tests.support.storage_stack import s3a_jars

pytestmark = pytest.mark.spark

DB, TABLE = "s3_on_connect", "events"


@pytest.fixture(scope="module")
def s3_connect_server(storage_conf, storage_proxy, tmp_path_factory):
    from tests.support.spark_connect import connect_available, start_connect_server

    missing = connect_available()
    if missing:
        unavailable(missing)
    root = tmp_path_factory.mktemp("spark-connect-s3")
    extra = {**spark_class_path(s3a_jars()), **{f"spark.hadoop.{k}": v for k, v in storage_conf.s3a.items()}}
    server = start_connect_server(root, storage_proxy.uri, f"s3a://{storage_conf.bucket}/connect-warehouse", extra)
    yield server
    server.stop()


def test_read_and_skew_layout_on_connect_with_an_s3a_table(storage_conf, storage_proxy, s3_connect_server, tmp_path):
    table = f"{DB}.{TABLE}"
    location = f"s3a://{storage_conf.bucket}/{DB}/{TABLE}"
    on_connect(
        s3_connect_server,
        tmp_path,
        ["sql", f"CREATE DATABASE IF NOT EXISTS {DB}"],
        ["sql", f"DROP TABLE IF EXISTS {table}"],
        ["sql", f"CREATE TABLE {table} (user_id BIGINT, country STRING) PARTITIONED BY (ds STRING) STORED AS PARQUET LOCATION '{location}'"],
        ["sql", f"INSERT INTO {table} PARTITION (ds) SELECT /*+ REPARTITION(3) */ id, IF(id % 3 = 0, 'US', 'IN'), "
                "IF(id % 2 = 0, 'd1', 'd2') FROM range(60)"],
    )  # fmt: skip
    declared = subprocess.run(
        [HMSPROXY, "sql", "--uri", storage_proxy.uri, "-e", f"ALTER TABLE {table} SKEWED BY (country) ON ('US')"],
        capture_output=True, text=True, env=env(), timeout=120,
    )  # fmt: skip
    assert declared.returncode == 0, declared.stderr
    laid_out = job_on_connect(s3_connect_server, tmp_path, "skew-layout", table)  # the job's listings and swap on S3, from Connect
    assert laid_out.returncode == 0, laid_out.stderr[-4000:]

    with thrift_client(storage_proxy) as client:
        parts = client.get_partitions(DB, TABLE, -1)
    assert len(parts) == 2 and all(p.sd.location.startswith("s3a://") for p in parts)
    assert all(from_parameters(p.parameters) is not None for p in parts)  # read() below prunes by these layouts

    pruned, scanned, everything = on_connect(
        s3_connect_server,
        tmp_path,
        ["read", table, {"ds": "d1", "country": "US"}],
        ["sql", f"SELECT * FROM {table} WHERE ds = 'd1' AND country = 'US'"],
        ["read", table, {}],
    )
    assert sorted(pruned) == sorted(scanned) and len(scanned) == 10  # ids 0, 6, …, 54
    assert len(everything) == 60

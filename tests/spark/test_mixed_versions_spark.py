"""Spark (a Hive 2.3 client) across one proxy in front of real Hive 2.3, 3.1 and 4.0 metastores.

The same scenario runs twice under one SparkSession: with the 2.3 metastore as the primary
and 3.1/4.0 federated, then with 4.0 as the primary and 2.3/3.1 federated. Hive 4.0.1 no
longer has `get_table`, which Spark calls all the time: the proxy answers it with `get_table_req`.
"""

from __future__ import annotations

import uuid

import pytest
from pyspark.errors import AnalysisException

from hmsproxy.protocol import idl
from hmsproxy.testing import table as table_struct
from tests.support.mixed_versions import federation
from tests.support.spark_errors import META_EXCEPTION, jvm_causes

pytestmark = pytest.mark.spark
hive = idl.hive


def run_scenario(spark, by_version, primary: str) -> None:
    tag = uuid.uuid4().hex[:6]
    federated = [v for v in by_version if v != primary]
    tables = {primary: f"mixed_sales.t_{tag}"} | {v: f"h{v.replace('.', '')}_mixed_sales.t_{tag}" for v in federated}
    names = {r.namespace for r in spark.sql("SHOW DATABASES").collect()}
    assert {"mixed_sales", *(t.split(".")[0] for t in tables.values())} <= names

    for version, table in tables.items():
        spark.sql(f"CREATE TABLE {table} (id INT, v STRING) PARTITIONED BY (ds STRING) STORED AS PARQUET")
        spark.sql(f"INSERT INTO {table} PARTITION (ds='1') VALUES (1, '{version}-a'), (2, '{version}-b')")
        spark.sql(f"INSERT INTO {table} PARTITION (ds='2') VALUES (3, '{version}-c')")
        assert [r[0] for r in spark.sql(f"SHOW PARTITIONS {table}").collect()] == ["ds=1", "ds=2"]
        rows = spark.sql(f"SELECT id, v FROM {table} WHERE ds = '1' ORDER BY id").collect()
        assert [(r.id, r.v) for r in rows] == [(1, f"{version}-a"), (2, f"{version}-b")]
        # What the proxy created landed on the metastore of that version, under its own name.
        db, name = table.split(".")
        direct = by_version[version].client()
        try:
            assert direct.get_partition_names("mixed_sales", name, -1) == ["ds=1", "ds=2"]
        finally:
            direct.close()

    a, b, c = (tables[v] for v in ("2.3", "3.1", "4.0"))
    joined = spark.sql(f"SELECT a.id, a.v, b.v, c.v FROM {a} a JOIN {b} b ON a.id = b.id JOIN {c} c ON a.id = c.id ORDER BY a.id").collect()
    assert [tuple(r) for r in joined] == [(i, f"2.3-{s}", f"3.1-{s}", f"4.0-{s}") for i, s in ((1, "a"), (2, "b"), (3, "c"))]

    # Mapped tables: only t_* of the federated databases are seen.
    for version in federated:
        direct = by_version[version].client()
        try:
            direct.create_table(table_struct("mixed_sales", f"hidden_{tag}", table_type="EXTERNAL_TABLE", owner="tester"))
        finally:
            direct.close()
        db = tables[version].split(".")[0]
        shown = {r.tableName for r in spark.sql(f"SHOW TABLES IN {db}").collect() if not r.isTemporary}
        assert f"t_{tag}" in shown and f"hidden_{tag}" not in shown
        # Write refusals: creating a database on a federated metastore, writing outside the white list.
        with pytest.raises(AnalysisException) as refused:
            spark.sql(f"CREATE TABLE {db.replace('mixed_sales', 'default')}.nope_{tag} (id INT) STORED AS PARQUET")
        assert META_EXCEPTION in jvm_causes(refused.value)

    for table in tables.values():
        spark.sql(f"DROP TABLE {table}")


@pytest.mark.parametrize("primary", ["2.3", "4.0"])
def test_spark_reads_writes_and_joins_across_2_3_3_1_and_4_0(spark, proxy, proxy_config, metastores_by_version, primary):
    with proxy_config(lambda base: federation(base, metastores_by_version, primary)) as config:
        run_scenario(spark, metastores_by_version, primary)
        (hive4,) = [m.name for m in config.metastores if m.hive_version == "4.0"]
        # Spark's get_table calls reached Hive 4 as get_table_req.
        assert "get_table" in proxy.handler.backends.state(hive4).missing_methods

"""Spark (a Hive 2.3 client) across one proxy in front of real Hive 2.3, 3.1 and 4.0 metastores.

The same scenario runs twice under one SparkSession: with the 2.3 metastore as the primary
and 3.1/4.0 federated, then with 4.0 as the primary and 2.3/3.1 federated. Hive 4.0.1 no
longer has `get_table`, which Spark calls all the time: the proxy answers it with `get_table_req`.
"""

from __future__ import annotations

import dataclasses
import uuid

import pytest
from pyspark.errors import AnalysisException

from hmsproxy import idl
from hmsproxy.config_model import AccessControlType, MappedTables, MetastoreConfig
from hmsproxy.dev import maven
from hmsproxy.dev.versions import hive_version
from hmsproxy.testing import table as table_struct
from tests.support.required import unavailable
from tests.support.spark_errors import META_EXCEPTION, jvm_causes

pytestmark = pytest.mark.spark
hive = idl.hive

#: Tables the federated metastores show; the rest of their databases is hidden (mapped-tables).
MAPPED = ("t_.*",)


@pytest.fixture(scope="module")
def newer(metastore_factory):
    """A Hive 3.1 and a Hive 4.0 metastore (jars fetched with Maven on first use)."""
    for version in ("3.1", "4.0"):
        try:
            hive_version(version).prepare()
        except maven.FetchError as e:
            unavailable(f"can't fetch Hive {version} with Maven: {e}")
    return dict(zip(("3.1", "4.0"), metastore_factory(2, name="mixed", hive_versions=["3.1", "4.0"])))


@pytest.fixture(scope="module")
def by_version(metastores, newer, tmp_path_factory):
    """version -> metastore, each with a database `sales` (federated ones can't create databases)."""
    found = {"2.3": metastores[0], **newer}
    root = tmp_path_factory.mktemp("mixed-warehouse")
    for version, ms in found.items():
        client = ms.client()
        try:
            if "mixed_sales" not in client.get_all_databases():
                location = (root / f"sales_{version.replace('.', '')}.db").as_uri()
                client.create_database(hive.Database(name="mixed_sales", description=None, locationUri=location, parameters={}))
        finally:
            client.close()
    return found


def metastore(name: str, ms, version: str, *, primary: bool = False) -> MetastoreConfig:
    if primary:
        return MetastoreConfig(
            name, (ms.uri,), primary=True, access_control_type=AccessControlType.READ_AND_WRITE_AND_CREATE, hive_version=version
        )
    return MetastoreConfig(
        name,
        (ms.uri,),
        database_prefix=f"{name}_",
        access_control_type=AccessControlType.READ_AND_WRITE_ON_DATABASE_WHITELIST,
        writable_database_white_list=("mixed_sales",),
        mapped_tables=(MappedTables("mixed_sales", MAPPED),),
        hive_version=version,
    )


def federation(base, by_version, primary: str):
    """The session's proxy config with `primary` as the primary and the other two federated as h<version>."""
    # Distinct names per layout: a Spark session's backend connections are kept by metastore name.
    first = metastore(f"p{primary.replace('.', '')}", by_version[primary], primary, primary=True)
    others = tuple(metastore(f"h{v.replace('.', '')}", ms, v) for v, ms in by_version.items() if v != primary)
    return dataclasses.replace(base, primary=first, federated=others)


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
def test_spark_reads_writes_and_joins_across_2_3_3_1_and_4_0(spark, proxy, proxy_config, by_version, primary):
    with proxy_config(lambda base: federation(base, by_version, primary)) as config:
        run_scenario(spark, by_version, primary)
        (hive4,) = [m.name for m in config.metastores if m.hive_version == "4.0"]
        # Spark's get_table calls reached Hive 4 as get_table_req.
        assert "get_table" in proxy.handler.backends.state(hive4).missing_methods

"""Where index files live and which a lookup trusts (issue 41): CREATE INDEX … LOCATION puts the
index partitions a rebuild writes under that location; files that are not the build's (what a Hive
MapReduce rebuild would leave: its own rows, the build's hidden manifest kept beside them) are never
trusted by a lookup, and `--only-stale` rebuilds that partition; an index on an EXTERNAL base table
is built like any other, and dropping the index or the table leaves the base files."""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hmsproxy.clients.index_lookup import arrow_lookup
from hmsproxy.clients.spark import sql
from hmsproxy.files.storage import ArrowStorage, data_files
from hmsproxy.jobs.skew_layout import open_metastore
from tests.spark.test_index_rebuild_spark import DAYS, assert_lookups_equal_spark_sql, full_scan, make_events, rebuild_job, states

pytestmark = pytest.mark.spark

DB = "index_locations"


def local_path(location: str) -> str:
    return location.removeprefix("file://").removeprefix("file:")


def index_partition_location(proxy, table: str, index: str, day: str) -> str:
    db, name = table.split(".")
    with open_metastore(proxy.uri) as ms:
        found = ms.get_index(db, name, index)
        return ms.get_partition(db, found.indexTableName.rpartition(".")[2], [day]).sd.location


def test_index_location_and_files_a_lookup_does_not_trust(spark, proxy, tmp_path):
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {DB}")
    table = make_events(spark, DB)
    where = (tmp_path / "my_indexes" / "user_idx").as_uri()
    sql(spark, f"CREATE INDEX user_idx ON TABLE {table} (user_id) AS 'COMPACT' WITH DEFERRED REBUILD LOCATION '{where}'")
    sql(spark, f"ALTER INDEX user_idx ON {table} REBUILD")
    day0 = index_partition_location(proxy, table, "user_idx", DAYS[0])
    assert local_path(day0).startswith(str(tmp_path / "my_indexes" / "user_idx") + "/")  # the rebuild wrote under LOCATION
    assert set(states(spark, table).values()) == {"fresh"}
    assert_lookups_equal_spark_sql(spark, proxy, table)

    # What Hive's loadPartition would do to day 0's index partition: its visible files replaced by
    # Hive's own (000000_0), the hidden manifest kept. Hive's row points user 3 (day 0) at another
    # file of the day, one without user 3: trusted, the lookup would miss user 3's rows.
    base_files = [
        e.path
        for e in data_files(
            ArrowStorage().list(
                spark.sql(f"DESCRIBE FORMATTED {table} PARTITION (ds='{DAYS[0]}')").filter("col_name = 'Location'").collect()[0].data_type
            )
        )
    ]
    expected = full_scan(spark, table, "user_id = 3")
    holding_user_3 = {r for r in spark.table(table).filter("user_id = 3").selectExpr("input_file_name()").toPandas().iloc[:, 0]}
    elsewhere = next(f for f in base_files if all(not h.endswith(f.rpartition("/")[2]) for h in holding_user_3))
    for entry in data_files(ArrowStorage().list(day0)):
        os.remove(local_path(entry.path))
    hive_rows = pa.table(
        {"user_id": pa.array([3], pa.int64()), "_bucketname": [elsewhere], "_offsets": pa.array([[4]], pa.list_(pa.int64()))}
    )
    pq.write_table(hive_rows, local_path(day0) + "/000000_0")

    read = arrow_lookup(proxy.uri, table, {"user_id": 3})
    assert sorted(tuple(r.values()) for r in read.table.to_pylist()) == expected
    assert {r.values["ds"]: r.state for r in read.plan.reads}[DAYS[0]] != "fresh"  # scanned, never read through Hive's rows
    assert_lookups_equal_spark_sql(spark, proxy, table)

    # --only-stale sees the build's files are gone and rebuilds that partition (the others are skipped).
    status, ctx = rebuild_job(spark, proxy, f"{table}.user_idx", "--only-stale")
    assert status == 0, ctx.stderr.getvalue()
    assert "1 built, 2 fresh and skipped, 0 failed" in ctx.stdout.getvalue()
    read = arrow_lookup(proxy.uri, table, {"user_id": 3})
    assert [r.state for r in read.plan.reads] == ["fresh"] * 3
    assert sorted(tuple(r.values()) for r in read.table.to_pylist()) == expected
    spark.sql(f"DROP TABLE {table}")


def test_an_index_on_an_external_table(spark, proxy, tmp_path):
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {DB}")
    base_dir = tmp_path / "external_events"
    table = f"{DB}.ext_events"
    spark.sql(f"DROP TABLE IF EXISTS {table}")
    spark.sql(
        f"CREATE EXTERNAL TABLE {table} (user_id BIGINT, action STRING) PARTITIONED BY (ds STRING) STORED AS PARQUET "
        f"LOCATION '{base_dir.as_uri()}'"
    )
    spark.sql(f"INSERT INTO {table} PARTITION (ds='{DAYS[0]}') SELECT id AS user_id, 'view' AS action FROM range(50)")
    base_files = sorted(p.name for p in (base_dir / f"ds={DAYS[0]}").iterdir())
    sql(spark, f"CREATE INDEX user_idx ON TABLE {table} (user_id) AS 'COMPACT'")  # built at once
    with open_metastore(proxy.uri) as ms:
        index_table = ms.get_table(DB, f"{DB}__ext_events_user_idx__")
    # The index table is the proxy's (managed, INDEX_TABLE), in the database's directory, not beside the base files.
    assert index_table.tableType == "INDEX_TABLE" and "EXTERNAL" not in (index_table.parameters or {})
    assert not local_path(index_table.sd.location).startswith(str(base_dir))
    assert states(spark, table) == {f"ds={DAYS[0]}": "fresh"}
    read = arrow_lookup(proxy.uri, table, {"user_id": 7})
    assert [tuple(r.values()) for r in read.table.to_pylist()] == [(7, "view", DAYS[0])]
    assert [r.state for r in read.plan.reads] == ["fresh"]
    sql(spark, f"DROP INDEX user_idx ON {table}")
    spark.sql(f"DROP TABLE {table}")
    assert sorted(p.name for p in (base_dir / f"ds={DAYS[0]}").iterdir()) == base_files  # the base files are not ours

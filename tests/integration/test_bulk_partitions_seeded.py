"""Partitions written with SQL into a real Hive 2.3 metastore's PostgreSQL database
(tests/support/bulk_partitions.py, the seeding of `make bench-relay`) are partitions that
metastore serves: listed, counted by filter, read whole exactly as one it added itself, dropped
by it; and the ids reserved for them never collide with the metastore's own next ones."""

from __future__ import annotations

import psycopg2
import pytest

from hmsproxy.dev.metastore import LocalMetastore
from hmsproxy.dev.ports import free_port
from hmsproxy.protocol import idl
from tests.support.bulk_partitions import insert_partitions, verify_partitions
from tests.support.ha_pair import create_database
from tests.support.required import unavailable

hive = idl.hive
DB, TABLE = "bulk", "hourly"
PARAMETERS = {"numFiles": "1", "totalSize": "10"}
SEEDED = [[f"2026-01-{d:02d}", f"{h:02d}:00"] for d in range(1, 6) for h in range(10)]  # 50; ':' is escaped in names


@pytest.fixture(scope="module")
def metastore(postgres_server, tmp_path_factory):
    """A Hive 2.3 metastore on a new database of the session's PostgreSQL cluster, and a psycopg2 connection to that database."""
    if isinstance(postgres_server, str):
        unavailable(postgres_server)
    jdbc_url = create_database(postgres_server, prefix="bulk_parts")
    ms = LocalMetastore(free_port(), tmp_path_factory.mktemp("bulk") / "hms", name="bulk", jdbc_url=jdbc_url, notifications=False)
    conn = None
    try:
        ms.start(180)
        conn = psycopg2.connect(
            host="127.0.0.1", port=postgres_server.port, user="postgres", dbname=jdbc_url.rsplit("/", 1)[1].split("?")[0]
        )
        yield ms, conn
    finally:
        if conn is not None:
            conn.close()
        ms.stop()


def partition(values: list[str]) -> hive.Partition:
    """A partition as a client adds it: the table's storage descriptor, its location left to the metastore."""
    return hive.Partition(values=values, dbName=DB, tableName=TABLE, sd=table().sd, parameters=dict(PARAMETERS))


def table() -> hive.Table:
    sd = hive.StorageDescriptor(
        cols=[hive.FieldSchema(name="id", type="bigint", comment="row id"), hive.FieldSchema(name="v", type="string", comment=None)],
        inputFormat="org.apache.hadoop.mapred.TextInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
        compressed=False,
        numBuckets=4,
        serdeInfo=hive.SerDeInfo(serializationLib="org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe", parameters={"field.delim": ","}),
        bucketCols=["id"],
        sortCols=[hive.Order(col="id", order=1)],
        parameters={"sd.mark": "kept"},
    )
    keys = [hive.FieldSchema(name="ds", type="string", comment=None), hive.FieldSchema(name="hr", type="string", comment=None)]
    return hive.Table(tableName=TABLE, dbName=DB, owner="bulk", sd=sd, partitionKeys=keys, parameters={}, tableType="MANAGED_TABLE")


def next_ids_past_rows(conn) -> bool:
    """Whether DataNucleus' next id for partitions, storage descriptors and serdes is past every row's."""
    try:
        with conn.cursor() as cur:
            for table, column, model in (
                ("PARTITIONS", "PART_ID", "MPartition"),
                ("SDS", "SD_ID", "MStorageDescriptor"),
                ("SERDES", "SERDE_ID", "MSerDeInfo"),
            ):
                cur.execute(f'SELECT max("{column}") FROM "{table}"')
                highest = cur.fetchone()[0]
                cur.execute(
                    'SELECT "NEXT_VAL" FROM "SEQUENCE_TABLE" WHERE "SEQUENCE_NAME" = %s',
                    (f"org.apache.hadoop.hive.metastore.model.{model}",),
                )
                if cur.fetchone()[0] <= highest:
                    return False
    finally:
        conn.rollback()
    return True


def comparable(p: hive.Partition) -> hive.Partition:
    """`p` without what differs between any two partitions of the table: values, location, times."""
    p.values, p.sd.location, p.createTime, p.lastAccessTime = None, None, None, None
    p.parameters = {k: v for k, v in p.parameters.items() if k != "transient_lastDdlTime"}
    return p


def test_partitions_written_with_sql_are_served_as_the_metastores_own(metastore):
    ms, conn = metastore
    client = ms.client(timeout_s=120)
    try:
        client.create_database(hive.Database(name=DB, description="", locationUri=None, parameters={}))
        client.create_table(table())
        location = client.get_table(DB, TABLE).sd.location
        client.add_partitions([partition(["2025-12-31", "23:00"])])  # one the metastore made itself

        insert_partitions(conn, DB, TABLE, SEEDED, PARAMETERS)
        assert next_ids_past_rows(conn)

        assert verify_partitions(client, DB, TABLE, SEEDED, PARAMETERS) == 51
        got = client.get_partitions(DB, TABLE, -1)
        assert len(got) == 51
        own = next(p for p in got if p.values == ["2025-12-31", "23:00"])
        seeded = client.get_partition(DB, TABLE, ["2026-01-03", "07:00"])
        assert seeded.sd.location == f"{location}/ds=2026-01-03/hr=07%3A00"
        assert seeded.parameters["transient_lastDdlTime"].isdigit()
        assert comparable(seeded) == comparable(own)  # columns, formats, serde and its parameters, buckets, sort, sd parameters
        assert client.get_partition_names_ps(DB, TABLE, ["2026-01-02", ""], -1)[:2] == [
            "ds=2026-01-02/hr=00%3A00",
            "ds=2026-01-02/hr=01%3A00",
        ]

        # The metastore's own next partitions, storage descriptors and serdes take ids past the seeded
        # rows': more than its cached block of ids (5 here), so it asks SEQUENCE_TABLE for new ones.
        client.add_partitions([partition(["2026-02-01", f"{h:02d}:00"]) for h in range(12)])
        assert len(client.get_partition_names(DB, TABLE, -1)) == 63
        # A collision would not fail the call: the metastore retries it with new ids; its log tells.
        assert "duplicate key" not in ms.log_path.read_text(errors="replace")
        assert client.drop_partition(DB, TABLE, ["2026-01-05", "09:00"], False)
        assert client.get_num_partitions_by_filter(DB, TABLE, 'ds = "2026-01-05"') == 9
    finally:
        client.close()
    with conn.cursor() as cur:  # the dropped one's own storage descriptor and serde went with it
        cur.execute('SELECT count(*) FROM "PARTITIONS"')
        partitions = cur.fetchone()[0]
        cur.execute('SELECT count(*) FROM "SDS"')
        sds = cur.fetchone()[0]
        cur.execute('SELECT count(*) FROM "SERDES"')
        serdes = cur.fetchone()[0]
    conn.rollback()
    assert (partitions, sds, serdes) == (62, 63, 63)  # one each per partition, and the table's

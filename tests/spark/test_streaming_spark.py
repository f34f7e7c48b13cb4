"""Streaming ingest end to end: the Python streaming API through the proxy, Spark reading what was committed.

Tables are ordinary Parquet tables Spark made through the proxy; the writers commit transactions of
the metastore (through the proxy: on a federated table, the federated metastore's), and a new Spark
query must see exactly the committed rows: never an open or aborted transaction's.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from pathlib import Path
from urllib.parse import urlparse

import pytest

from hmsproxy.protocol import idl
from hmsproxy.streaming import (
    DelimitedInputWriter,
    HiveEndPoint,
    InvalidTable,
    SerializationError,
    StrictJsonWriter,
    StrictRegexWriter,
    TxnState,
)
from hmsproxy.streaming.publish import STAGING

pytestmark = pytest.mark.spark
hive = idl.hive


@pytest.fixture(scope="module")
def stream_db(spark):
    spark.sql("CREATE DATABASE IF NOT EXISTS stream_e2e")
    return "stream_e2e"


def alerts_table(spark, db: str) -> str:
    name = f"alerts_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE TABLE {db}.{name} (id INT, msg STRING) PARTITIONED BY (continent STRING, country STRING) STORED AS PARQUET")
    return name


def committed(spark, table: str, where: str = "") -> list[tuple]:
    spark.catalog.refreshTable(table)
    return sorted(tuple(r) for r in spark.sql(f"SELECT * FROM {table} {where}").collect())


def staged_leftovers(location: str) -> list[str]:
    staging = Path(urlparse(location).path) / STAGING
    return sorted(p.name for p in staging.iterdir()) if staging.exists() else []


def test_the_seeds_example_two_threads_two_batches_each(spark, proxy, stream_db):
    name = alerts_table(spark, stream_db)
    ep = HiveEndPoint(proxy.uri, stream_db, name, partition_vals=["Asia", "India"])
    errors = []

    def thread(first_id: int) -> None:
        try:
            conn = ep.new_connection(auto_create_partition=True, user="ingest")
            writer = DelimitedInputWriter(["id", "msg"], ",", ep)
            ids = iter(range(first_id, first_id + 100))
            for per_txn in ((2, 3), (2, 2)):  # batch 1: five records in two transactions; batch 2: four
                batch = conn.fetch_transaction_batch(10, writer)
                for count in per_txn:
                    batch.begin_next_transaction()
                    for _ in range(count):
                        i = next(ids)
                        batch.write(f"{i},message {i}".encode())
                    batch.commit()
                    assert batch.current_transaction_state() is TxnState.COMMITTED
                batch.begin_next_transaction()
                batch.write(b"999,never visible")
                batch.abort()
                assert batch.current_transaction_state() is TxnState.ABORTED
                assert batch.remaining_transactions() == 7
                batch.close()
            conn.close()
        except Exception as e:  # reported below, in the test's thread
            errors.append(e)

    threads = [threading.Thread(target=thread, args=(start,)) for start in (1, 21)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not errors, errors
    expected = [(i, f"message {i}", "Asia", "India") for start in (1, 21) for i in range(start, start + 9)]
    assert committed(spark, f"{stream_db}.{name}") == sorted(expected)
    [location] = [p.sd.location for p in proxy_partitions(proxy, stream_db, name)]
    assert staged_leftovers(location) == []  # every transaction published or discarded its files


def proxy_partitions(proxy, db: str, name: str) -> list:
    import thriftpy2.rpc

    client = thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", proxy.port, timeout=60_000)
    try:
        return client.get_partitions(db, name, -1)
    finally:
        client.close()


def test_writers_racing_to_create_one_partition_all_succeed(spark, proxy, stream_db):
    name = alerts_table(spark, stream_db)
    ep = HiveEndPoint(proxy.uri, stream_db, name, partition_vals=["Europe", "France"])
    errors, barrier = [], threading.Barrier(4)

    def writer(i: int) -> None:
        try:
            barrier.wait(timeout=60)
            conn = ep.new_connection(auto_create_partition=True)
            batch = conn.fetch_transaction_batch(1, DelimitedInputWriter(["id", "msg"], ",", ep))
            batch.begin_next_transaction()
            batch.write(f"{i},writer {i}".encode())
            batch.commit()
            batch.close()
            conn.close()
        except Exception as e:
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not errors, errors
    assert committed(spark, f"{stream_db}.{name}") == [(i, f"writer {i}", "Europe", "France") for i in range(4)]


def test_a_bad_record_is_rejected_alone(spark, proxy, stream_db):
    name = f"typed_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE TABLE {stream_db}.{name} (id INT, msg STRING) STORED AS PARQUET")
    ep = HiveEndPoint(proxy.uri, stream_db, name)
    with ep.new_connection() as conn:
        batch = conn.fetch_transaction_batch(2, StrictJsonWriter(ep))
        batch.begin_next_transaction()
        batch.write(b'{"id": 1, "msg": "first"}')
        with pytest.raises(SerializationError):
            batch.write(b'{"id": 2, "msg": ')  # cut off mid-record
        batch.write(b'{"id": 3, "msg": "third", "extra": true}')
        batch.commit()
        batch.close()
    assert committed(spark, f"{stream_db}.{name}") == [(1, "first"), (3, "third")]


def test_regex_writer_into_a_federated_writable_database(spark, proxy, federated_dbs, metastores):
    name = f"log_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE TABLE waggle_sales.{name} (ts STRING, level STRING, msg STRING) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    ep = HiveEndPoint(proxy.uri, "waggle_sales", name, partition_vals=["2026-11-25"])
    with ep.new_connection(auto_create_partition=True) as conn:
        batch = conn.fetch_transaction_batch(3, StrictRegexWriter(r"(?P<ts>\S+) (?P<level>[A-Z]+) (?P<msg>.*)"))
        batch.begin_next_transaction()
        assert batch.write_many([b"10:00 INFO started", b"not a log line", b"10:01 WARN slow"])[0].args
        batch.commit()
        batch.close()
    assert committed(spark, f"waggle_sales.{name}") == [("10:00", "INFO", "started", "2026-11-25"), ("10:01", "WARN", "slow", "2026-11-25")]
    # The transaction was the federated metastore's: its partition was made there, and no lock is left on either.
    fed = metastores[1].client()
    try:
        assert fed.get_partition("sales", name, ["2026-11-25"]).values == ["2026-11-25"]
        assert [e for e in fed.show_locks(hive.ShowLocksRequest()).locks if e.tablename == name] == []
    finally:
        fed.close()


def test_a_transactional_table_is_refused_with_the_reason(spark, proxy, stream_db, tmp_path):
    """Made over Thrift: Spark can't create Hive ACID tables (bucketed ORC, transactional=true)."""
    import thriftpy2.rpc

    from hmsproxy.testing.builders import storage, table

    name = f"acid_{uuid.uuid4().hex[:8]}"
    sd = storage(location=(tmp_path / name).as_uri())
    sd.inputFormat, sd.outputFormat = "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"
    sd.serdeInfo.serializationLib = "org.apache.hadoop.hive.ql.io.orc.OrcSerde"
    sd.bucketCols, sd.numBuckets = ["id"], 2
    client = thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", proxy.port, timeout=60_000)
    try:
        client.create_table(table(stream_db, name, sd=sd, parameters={"transactional": "true"}))
    finally:
        client.close()
    with pytest.raises(InvalidTable, match="transactional=true.*Spark can't read"):
        HiveEndPoint(proxy.uri, stream_db, name).new_connection()


def commit_rows(ep, rows: list[str], *, txns: int = 1, columns: tuple[str, ...] = ("id", "msg")) -> None:
    with ep.new_connection(auto_create_partition=True) as conn:
        batch = conn.fetch_transaction_batch(txns, DelimitedInputWriter(list(columns), ",", ep))
        for part in (rows[i::txns] for i in range(txns)):
            batch.begin_next_transaction()
            batch.write_many([r.encode() for r in part])
            batch.commit()
        batch.close()


def test_compact_beside_writers(spark, proxy, stream_db, monkeypatch):
    """compact takes the partition's exclusive lock: a writer of another partition goes on, a writer of
    the same partition waits for it, and no row is lost or doubled."""
    from hmsproxy.jobs import compact
    from hmsproxy.jobs.cli import build_parser
    from tests.spark.test_jobs_spark import context

    name = f"events_{uuid.uuid4().hex[:8]}"
    table = f"{stream_db}.{name}"
    spark.sql(f"CREATE TABLE {table} (id INT, msg STRING) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    here, there = (HiveEndPoint(proxy.uri, stream_db, name, [ds]) for ds in ("2026-11-01", "2026-11-02"))
    commit_rows(here, [f"{i},a{i}" for i in range(20)], txns=4)  # four small files
    commit_rows(there, [f"{i},b{i}" for i in range(10)], txns=2)

    compacting, release = threading.Event(), threading.Event()
    real_write = compact.write_files

    def write_and_hold(df, fmt, location):  # the job holds the lock while it writes
        compacting.set()
        assert release.wait(120)
        real_write(df, fmt, location)

    monkeypatch.setattr(compact, "write_files", write_and_hold)
    outcome = {}
    args = build_parser().parse_args(["compact", table, "--partition", "ds=2026-11-01", "--files", "1"])
    job = threading.Thread(target=lambda: outcome.setdefault("job", compact.JOB.run(args, context(spark, proxy))))
    job.start()
    assert compacting.wait(120), "the job never started writing"

    commit_rows(there, ["100,b100"])  # another partition: not held up
    waiting = threading.Thread(target=lambda: outcome.setdefault("writer", commit_rows(here, ["200,a200"])))
    waiting.start()
    deadline = time.monotonic() + 60
    while not any(e.state == hive.LockState.WAITING and e.tablename == name for e in proxy_locks(proxy)):
        assert time.monotonic() < deadline, "the writer of the compacted partition never waited"
        time.sleep(0.2)
    assert waiting.is_alive()
    release.set()
    job.join(timeout=300)
    waiting.join(timeout=300)
    assert outcome["job"] == 0 and "writer" in outcome
    expected_here = [(i, f"a{i}", "2026-11-01") for i in [*range(20), 200]]
    assert committed(spark, table, "WHERE ds = '2026-11-01'") == sorted(expected_here)
    assert len(committed(spark, table, "WHERE ds = '2026-11-02'")) == 11
    [location] = [p.sd.location for p in proxy_partitions(proxy, stream_db, name) if p.values == ["2026-11-01"]]
    files = [p.name for p in Path(urlparse(location).path).iterdir() if not p.name.startswith(("_", "."))]
    assert len(files) == 2, files  # the compacted file and the waiting writer's


def proxy_locks(proxy) -> list:
    import thriftpy2.rpc

    client = thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", proxy.port, timeout=60_000)
    try:
        return client.show_locks(hive.ShowLocksRequest()).locks or []
    finally:
        client.close()


def test_a_bucketed_table_gets_a_file_per_bucket_by_hives_function(spark, proxy, stream_db, tmp_path):
    import thriftpy2.rpc

    from hmsproxy.streaming.buckets import bucket_of
    from hmsproxy.testing.builders import parquet_table

    name = f"bucketed_{uuid.uuid4().hex[:8]}"
    made = parquet_table(stream_db, name, (tmp_path / name).as_uri(), columns=(("id", "int"), ("msg", "string")))
    made.sd.bucketCols, made.sd.numBuckets = ["id"], 4
    client = thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", proxy.port, timeout=60_000)
    try:
        client.create_table(made)
    finally:
        client.close()
    ep = HiveEndPoint(proxy.uri, stream_db, name)
    with ep.new_connection() as conn:
        batch = conn.fetch_transaction_batch(1, DelimitedInputWriter(["id", "msg"], ",", ep))
        batch.begin_next_transaction()
        batch.write_many([f"{i},row {i}".encode() for i in range(-50, 150)])
        batch.commit()
        batch.close()
    files = sorted(p for p in (tmp_path / name).iterdir() if p.is_file())
    assert [f.name[:6] for f in files] == ["000000", "000001", "000002", "000003"]
    import pyarrow.parquet as pq

    for f in files:
        assert {bucket_of([i], ["int"], 4) for i in pq.read_table(f).column("id").to_pylist()} == {int(f.name[:6])}
    assert committed(spark, f"{stream_db}.{name}") == [(i, f"row {i}") for i in range(-50, 150)]


def test_compact_keeps_a_bucketed_tables_buckets_one_file_each(spark, proxy, stream_db, tmp_path):
    """Streaming adds a file per bucket per transaction; compact leaves one per bucket, every row in the
    bucket Hive's function gives it (two bucket columns, string then int), and Spark reads them all once."""
    import pyarrow.parquet as pq
    import thriftpy2.rpc

    from hmsproxy.jobs import compact
    from hmsproxy.jobs.cli import build_parser
    from hmsproxy.streaming.buckets import bucket_of
    from hmsproxy.testing.builders import parquet_table
    from tests.spark.test_jobs_spark import context

    name = f"bucketed_{uuid.uuid4().hex[:8]}"
    made = parquet_table(
        stream_db, name, (tmp_path / name).as_uri(), columns=(("id", "int"), ("msg", "string")), partition_keys=(("ds", "string"),)
    )
    made.sd.bucketCols, made.sd.numBuckets = ["msg", "id"], 4
    client = thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", proxy.port, timeout=60_000)
    try:
        client.create_table(made)
    finally:
        client.close()
    rows = [f"{i},row {i % 7}" for i in range(-40, 80)]
    commit_rows(HiveEndPoint(proxy.uri, stream_db, name, ["2026-11-28"]), rows, txns=3)
    location = tmp_path / name / "ds=2026-11-28"
    assert len([p for p in location.iterdir() if p.is_file()]) == 12  # 3 transactions x 4 buckets

    table = f"{stream_db}.{name}"
    args = build_parser().parse_args(["compact", table])
    assert compact.JOB.run(args, context(spark, proxy)) == 0
    with contextlib.closing(thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", proxy.port, timeout=60_000)) as c:
        new_location = Path(urlparse(c.get_partition(stream_db, name, ["2026-11-28"]).sd.location).path)
    files = sorted(p for p in new_location.iterdir() if not p.name.startswith(("_", ".")))
    assert [f.name for f in files] == [f"{b:06d}_0.parquet" for b in range(4)]
    for f in files:
        got = pq.read_table(f).to_pylist()
        assert {bucket_of([r["msg"], r["id"]], ["string", "int"], 4) for r in got} == {int(f.name[:6])}
    expected = sorted((i, f"row {i % 7}", "2026-11-28") for i in range(-40, 80))
    assert committed(spark, table) == expected
    again = build_parser().parse_args(["compact", table])
    assert compact.JOB.run(again, context(spark, proxy)) == 0  # one file per bucket already: skipped
    assert sorted(p.name for p in new_location.iterdir() if not p.name.startswith(("_", "."))) == [f.name for f in files]

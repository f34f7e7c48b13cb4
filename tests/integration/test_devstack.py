"""The local Hive metastores of hmsproxy.dev (metastore.py, demo.py): real JVMs, real Derby, real Spark."""

from __future__ import annotations

import copy
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from urllib.parse import urlparse

import pytest

from hmsproxy.dev.jvm import pyspark_jars_dir
from hmsproxy.dev.metastore import LocalMetastore
from hmsproxy.dev.ports import free_port
from hmsproxy.protocol import idl

hive = idl.hive

REPO_ROOT = Path(__file__).resolve().parents[2]


# --------------------------------------------------------------------------- helpers


def make_partitioned_table(db: str, name: str, location: str | None = None):
    sd = hive.StorageDescriptor(
        cols=[hive.FieldSchema(name="id", type="int", comment="the id"), hive.FieldSchema(name="what", type="string", comment=None)],
        location=location,
        inputFormat="org.apache.hadoop.mapred.TextInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
        compressed=False,
        numBuckets=-1,
        serdeInfo=hive.SerDeInfo(
            name=None, serializationLib="org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe", parameters={"field.delim": ","}
        ),
        bucketCols=[],
        sortCols=[],
        parameters={},
    )
    return hive.Table(
        tableName=name,
        dbName=db,
        owner="tester",
        sd=sd,
        partitionKeys=[hive.FieldSchema(name="ds", type="string", comment=None)],
        parameters={"purpose": "devstack-test"},
        tableType="MANAGED_TABLE",
    )


def make_partition(table, value: str):
    sd = copy.deepcopy(table.sd)
    sd.location = f"{table.sd.location}/ds={value}"
    return hive.Partition(values=[value], dbName=table.dbName, tableName=table.tableName, sd=sd, parameters={})


def create_db_table_partitions(client, db: str, table: str, days=("2026-11-01", "2026-11-02")):
    client.create_database(hive.Database(name=db, description="made by test_devstack", locationUri=None, parameters={"k": "v"}))
    client.create_table(make_partitioned_table(db, table))
    created = client.get_table(db, table)  # the metastore filled in the location
    added = client.add_partitions([make_partition(created, d) for d in days])
    assert added == len(days)


def check_db_table_partitions(client, db: str, table: str, warehouse: Path, days=("2026-11-01", "2026-11-02")):
    database = client.get_database(db)
    assert database.name == db
    assert database.parameters == {"k": "v"}
    assert Path(urlparse(database.locationUri).path) == warehouse / f"{db}.db"
    assert table in client.get_all_tables(db)
    tbl = client.get_table(db, table)
    assert [c.name for c in tbl.sd.cols] == ["id", "what"]
    assert [k.name for k in tbl.partitionKeys] == ["ds"]
    assert tbl.parameters["purpose"] == "devstack-test"
    assert tbl.tableType == "MANAGED_TABLE"
    assert client.get_partition_names(db, table, -1) == [f"ds={d}" for d in days]
    parts = client.get_partitions(db, table, -1)
    assert sorted(p.values[0] for p in parts) == list(days)
    assert client.get_partition(db, table, [days[0]]).sd.location.endswith(f"/{table}/ds={days[0]}")
    # Managed table directories are created in this metastore's own warehouse.
    assert (warehouse / f"{db}.db" / table).is_dir()


def drop_db(client, db: str) -> None:
    # Check first: Hive 2.3 answers drop_database of a missing database with a
    # MetaException wrapping an NPE (from AcidEventListener), not NoSuchObjectException.
    if db in client.get_all_databases():
        client.drop_database(db, True, True)


# --------------------------------------------------------------------------- basics


def test_pyspark_jars_dir_has_the_metastore():
    jars = pyspark_jars_dir()
    assert jars.is_dir()
    assert list(jars.glob("hive-metastore-2.3.*.jar"))
    assert list(jars.glob("derby-*.jar"))


def test_free_port_is_bindable():
    port = free_port()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))


def test_session_metastores_are_two_distinct_running_backends(metastores):
    assert len(metastores) == 2
    a, b = metastores
    assert a.is_running and b.is_running
    assert a.port != b.port and a.state_dir != b.state_dir
    for ms in metastores:
        assert ms.uri == f"thrift://127.0.0.1:{ms.port}"
        assert ms.warehouse_dir == ms.state_dir / "warehouse"
        assert (ms.state_dir / "conf" / "hive-site.xml").is_file()
        assert (ms.state_dir / "metastore_db").is_dir()
        client = ms.client()
        try:
            assert "default" in client.get_all_databases()
            # hive.in.test=true created the transaction tables (other tests' transactions may be open
            # on these shared metastores); notifications are open.
            assert client.get_open_txns().txn_high_water_mark >= 0
            assert client.get_current_notificationEventId().eventId >= 0
        finally:
            client.close()


def test_database_and_partitioned_table_round_trip_via_thrift(metastores):
    db, table = "devstack_thrift", "events"
    for ms in metastores:
        client = ms.client()
        try:
            drop_db(client, db)
            create_db_table_partitions(client, db, table)
            check_db_table_partitions(client, db, table, ms.warehouse_dir)
        finally:
            drop_db(client, db)
            client.close()
    # Each backend has its own Derby: nothing leaks from one into the other.
    c0, c1 = metastores[0].client(), metastores[1].client()
    try:
        c0.create_database(hive.Database(name="devstack_only_on_0", description=None, locationUri=None, parameters={}))
        try:
            assert "devstack_only_on_0" in c0.get_all_databases()
            assert "devstack_only_on_0" not in c1.get_all_databases()
        finally:
            drop_db(c0, "devstack_only_on_0")
    finally:
        c0.close()
        c1.close()


# --------------------------------------------------------------------------- lifecycle


def test_restart_keeps_databases_tables_and_partitions(private_metastore):
    ms = private_metastore
    db, table = "devstack_restart", "events"
    client = ms.client()
    try:
        create_db_table_partitions(client, db, table)
    finally:
        client.close()
    old_pid = ms.pid

    ms.restart()
    assert ms.is_running and ms.pid != old_pid
    client = ms.client()
    try:
        check_db_table_partitions(client, db, table, ms.warehouse_dir)
    finally:
        client.close()

    # stop() is idempotent (the fixture stops it once more).
    ms.stop()
    ms.stop()
    assert not ms.is_running and ms.pid is None
    assert (ms.state_dir / "metastore_db").is_dir()


def test_start_failure_raises_with_the_log_tail(tmp_path):
    with socket.socket() as squatter:
        squatter.bind(("0.0.0.0", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        ms = LocalMetastore(port, tmp_path / "busy", log=lambda _msg: None)
        with pytest.raises(RuntimeError) as err:
            ms.start(timeout_s=120)
    assert "Address already in use" in str(err.value)
    assert str(ms.log_path) in str(err.value)
    assert not ms.is_running


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is as good as dead
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_no_jvm_outlives_a_killed_python(tmp_path):
    """SIGKILL skips atexit; the watchdog still takes the JVM down."""
    script = textwrap.dedent(
        f"""
        import os, sys
        from pathlib import Path
        from hmsproxy.dev.metastore import LocalMetastore
        from hmsproxy.dev.ports import free_port
        ms = LocalMetastore(free_port(), Path({str(tmp_path / "orphan")!r}), log=lambda m: None).start()
        print(ms.pid, flush=True)
        os.kill(os.getpid(), 9)
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=REPO_ROOT)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    jvm_pid = int(proc.stdout.strip())
    deadline = time.monotonic() + 30
    while _pid_alive(jvm_pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    alive = _pid_alive(jvm_pid)
    if alive:
        os.killpg(jvm_pid, signal.SIGKILL)
    assert not alive, "the metastore JVM survived its Python process"


def test_atexit_stops_the_jvm_on_normal_exit(tmp_path):
    script = textwrap.dedent(
        f"""
        from pathlib import Path
        from hmsproxy.dev.metastore import LocalMetastore
        from hmsproxy.dev.ports import free_port
        ms = LocalMetastore(free_port(), Path({str(tmp_path / "atexit")!r}), log=lambda m: None).start()
        print(ms.pid, flush=True)
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=REPO_ROOT)
    assert proc.returncode == 0, proc.stderr
    jvm_pid = int(proc.stdout.strip())
    alive = _pid_alive(jvm_pid)
    if alive:
        os.killpg(jvm_pid, signal.SIGKILL)
    assert not alive, "atexit did not stop the metastore JVM"


# --------------------------------------------------------------------------- demo data


def test_demo_data_is_added_once_and_left_alone_after(private_metastore):
    from hmsproxy.dev import demo

    client = private_metastore.client()
    try:
        first = demo.add_demo_data(client)
        assert first[:2] == ["created database sales", "created table sales.orders"] and len(first) == 3
        table = client.get_table("sales", "orders")
        assert [(c.name, c.type) for c in table.sd.cols] == list(demo.COLUMNS)
        data = demo.local_path(table.sd.location) / demo.DATA_FILE
        assert data.read_text() == "1,alice,12.5\n2,bob,7.25\n3,carol,30.0\n"
        # A second `dev up --demo` on the same state: nothing to do, nothing fails.
        assert demo.add_demo_data(client) == []
        # A missing data file of the demo table is written again ...
        data.unlink()
        assert demo.add_demo_data(client) == [f"wrote 3 rows to {table.sd.location}/{demo.DATA_FILE}"]  # the location's own form
        # ... but a user's own sales.orders is never written into.
        client.drop_table("sales", "orders", True)
        own = demo.orders_table()
        own.parameters = {}
        client.create_table(own)
        assert demo.add_demo_data(client) == []
        assert not list(demo.local_path(client.get_table("sales", "orders").sd.location).iterdir())
    finally:
        drop_db(client, "sales")
        client.close()


# --------------------------------------------------------------------------- Spark

SPARK_SCRIPT = textwrap.dedent(
    """
    import json, sys
    from tests.support.spark import make_spark

    uri, warehouse = sys.argv[1], sys.argv[2]
    spark = make_spark(uri, warehouse, app_name="devstack-spark-check")
    try:
        spark.sql("CREATE DATABASE devstack_spark")
        spark.sql(
            "CREATE TABLE devstack_spark.events (id INT, what STRING) "
            "PARTITIONED BY (ds STRING) STORED AS PARQUET"
        )
        spark.sql("INSERT INTO devstack_spark.events PARTITION (ds='2026-11-01') VALUES (1, 'a'), (2, 'b')")
        spark.sql("INSERT INTO devstack_spark.events PARTITION (ds='2026-11-02') VALUES (3, 'c')")
        rows = spark.sql("SELECT id, what, ds FROM devstack_spark.events ORDER BY id").collect()
        parts = [r[0] for r in spark.sql("SHOW PARTITIONS devstack_spark.events").collect()]
        dbs = [r[0] for r in spark.sql("SHOW DATABASES").collect()]
        # A second session in this process must refuse another metastore.
        try:
            make_spark("thrift://127.0.0.1:1", warehouse)
            second = "allowed"
        except RuntimeError:
            second = "refused"
        print("RESULT " + json.dumps({
            "rows": [[r.id, r.what, r.ds] for r in rows], "parts": parts, "dbs": dbs, "second": second,
        }), flush=True)
    finally:
        spark.stop()
    """
)


@pytest.mark.spark
def test_spark_against_a_backend_directly(metastores, tmp_path):
    """Validates tests/support/spark.py. Runs in a subprocess so this test
    process's one SparkSession is not pinned to a backend."""
    ms = metastores[0]
    client = ms.client()
    try:
        drop_db(client, "devstack_spark")
    finally:
        client.close()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    proc = subprocess.run(
        [sys.executable, "-c", SPARK_SCRIPT, ms.uri, str(ms.warehouse_dir)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        env=env,
    )
    result_lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and result_lines, f"stdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-6000:]}"
    result = json.loads(result_lines[-1][len("RESULT ") :])
    assert result["rows"] == [[1, "a", "2026-11-01"], [2, "b", "2026-11-01"], [3, "c", "2026-11-02"]]
    assert result["parts"] == ["ds=2026-11-01", "ds=2026-11-02"]
    assert "devstack_spark" in result["dbs"]
    assert result["second"] == "refused"

    # What Spark wrote really is in the backend's Derby and warehouse.
    client = ms.client()
    try:
        tbl = client.get_table("devstack_spark", "events")
        assert [k.name for k in tbl.partitionKeys] == ["ds"]
        assert client.get_partition_names("devstack_spark", "events", -1) == ["ds=2026-11-01", "ds=2026-11-02"]
        data_dir = ms.warehouse_dir / "devstack_spark.db" / "events" / "ds=2026-11-01"
        assert any(p.name.endswith(".parquet") for p in data_dir.iterdir())
    finally:
        drop_db(client, "devstack_spark")
        client.close()
    assert not (tmp_path / "metastore_db").exists(), "Spark booted a local Derby in its working dir"

"""Every data feature on real stores, through the proxy, with a real SparkSession; run in its own
process (this one's SparkSession needs S3A's jars, which the suite's shared session does not load).

`python -m tests.support.storage_spark_job PROXY_URI ROOTS WAREHOUSE JARS` (ROOTS: comma-separated,
one a store; JARS: comma-separated, S3A's; HADOOP_CONF_DIR gives the stores' settings to Spark and to
hmsproxy alike). The stores share the one session: a Spark start is a good part of a store's run.
For each, in database `storage_<tag>` at its root (s3a://… or hdfs://…) it streams CSV and JSON into a partitioned table with
`hmsproxy stream`, builds a compact index with the rebuild-index job, looks up with `hmsproxy lookup`
and `lookup()`, inserts with Spark and looks the index stale, lays a table out with skew-layout and
reads it with `read()`, compacts it, streams into a bucketed table, compacts a partition while two
writers stream into it, reads a dependent table over that one (S3) or a remote table whose data is
there (HDFS); each answer beside Spark's own for the same question. Prints one line
`RESULT {json}`, the results by root (a store that failed: {"error": its traceback}, the others still
run); the test compares.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import threading
import time
import traceback
import uuid
from pathlib import Path

import thriftpy2.rpc

from hmsproxy.clients.spark import lookup, read, sql
from hmsproxy.dev.storage_jars import spark_class_path
from hmsproxy.files import hadoop_conf
from hmsproxy.files.storage import ArrowStorage, data_files
from hmsproxy.jobs.cli import build_parser, run_job_command
from hmsproxy.jobs.context import JobContext
from hmsproxy.jobs.skew_layout import open_metastore
from hmsproxy.protocol import idl
from tests.support.spark import make_spark

HMSPROXY = str(Path(sys.executable).with_name("hmsproxy"))
DAYS = ("2026-11-01", "2026-11-02")


def rows_of(frame) -> list[list]:
    return sorted([_plain(v) for v in r] for r in frame.collect())


def _plain(value):
    return value if value is None or isinstance(value, (int, float, str, bool)) else str(value)


def spark_rows(spark, table: str, where: str = "true") -> list[list]:
    spark.catalog.refreshTable(table)
    return rows_of(spark.sql(f"SELECT * FROM {table} WHERE {where}"))


def hmsproxy(argv: list[str], stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([HMSPROXY, *argv], input=stdin, capture_output=True, text=True, timeout=300)


def job(spark, uri: str, argv: list[str]) -> tuple[int, str]:
    ctx = JobContext(uri, spark=spark, stdout=io.StringIO(), stderr=io.StringIO())
    status = run_job_command(build_parser().parse_args(argv), ctx)
    return status, ctx.stdout.getvalue() + ctx.stderr.getvalue()


def streaming(spark, uri: str, db: str) -> dict:
    table = f"{db}.events"
    spark.sql(f"CREATE TABLE {table} (user_id INT, action STRING, amount INT) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    csv_rows = [[u, "view" if u % 2 else "buy", u * 10] for u in range(40)]
    json_rows = [[u, "json", u] for u in range(40, 60)]
    as_csv = "".join(f"{u},{a},{m}\n" for u, a, m in csv_rows)
    as_json = "".join(json.dumps({"user_id": u, "action": a, "amount": m}) + "\n" for u, a, m in json_rows)
    csv_done = hmsproxy(["stream", table, "--uri", uri, "--partition", f"ds={DAYS[0]}", "--rows-per-txn", "15"], as_csv)
    json_done = hmsproxy(["stream", table, "--uri", uri, "--partition", f"ds={DAYS[1]}", "--format", "json"], as_json)
    written = sorted([*[[*r, DAYS[0]] for r in csv_rows], *[[*r, DAYS[1]] for r in json_rows]])
    location = spark.sql(f"DESCRIBE FORMATTED {table} PARTITION (ds='{DAYS[0]}')").where("col_name = 'Location'").first().data_type
    return {
        "table": table,
        "exits": [csv_done.returncode, json_done.returncode],
        "errors": csv_done.stderr[-2000:] + json_done.stderr[-2000:],
        "written": written,
        "spark": spark_rows(spark, table),
        "location": location,
        "files": [f.name for f in data_files(ArrowStorage().list(location))],
    }


def indexes(spark, uri: str, table: str) -> dict:
    sql(spark, f"CREATE INDEX user_idx ON TABLE {table} (user_id) AS 'COMPACT' WITH DEFERRED REBUILD")
    status, said = job(spark, uri, ["rebuild-index", f"{table}.user_idx"])
    states = {r.partition: r.state for r in sql(spark, f"SHOW FORMATTED INDEX ON {table}").collect()}
    found = hmsproxy(["lookup", table, "--uri", uri, "--where", "user_id=7", "--format", "json"])
    cli = sorted([_plain(v) for v in r.values()] for r in json.loads(found.stdout or "[]"))
    looked = rows_of(lookup(spark, table, user_id=7))
    expected = spark_rows(spark, table, "user_id = 7")
    spark.sql(f"INSERT INTO {table} PARTITION (ds='{DAYS[0]}') VALUES (7, 'late', 1)")
    stale = {r.partition: r.state for r in sql(spark, f"SHOW FORMATTED INDEX ON {table}").collect()}
    after = hmsproxy(["lookup", table, "--uri", uri, "--where", "user_id=7", "--format", "json"])
    only_stale, said_stale = job(spark, uri, ["rebuild-index", f"{table}.user_idx", "--only-stale"])
    return {
        "rebuild": [status, said[-2000:]],
        "states": states,
        "cli": [found.returncode, cli, found.stderr[-1000:]],
        "lookup": looked,
        "expected": expected,
        "stale": stale,
        "cli_after_insert": sorted([_plain(v) for v in r.values()] for r in json.loads(after.stdout or "[]")),
        "expected_after_insert": spark_rows(spark, table, "user_id = 7"),
        "lookup_after_insert": rows_of(lookup(spark, table, user_id=7)),
        "only_stale": [only_stale, said_stale[-2000:]],
        "states_after_rebuild": {r.partition: r.state for r in sql(spark, f"SHOW FORMATTED INDEX ON {table}").collect()},
    }


def skew(spark, uri: str, db: str) -> dict:
    table = f"{db}.skewed"
    spark.sql(f"CREATE TABLE {table} (id INT, country STRING) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    rows = [(i, "US" if i % 3 == 0 else f"C{i % 7}", DAYS[0]) for i in range(300)]
    spark.createDataFrame(rows, "id INT, country STRING, ds STRING").repartition(3).createOrReplaceTempView("skew_src")
    spark.sql(f"INSERT INTO {table} SELECT * FROM skew_src")
    db_name, name = table.split(".")
    with open_metastore(uri) as ms:
        t = ms.get_table(db_name, name)
        t.sd.skewedInfo = idl.hive.SkewedInfo(["country"], [["US"]], {})
        ms.alter_table(db_name, name, t)
    before = spark_rows(spark, table)
    status, said = job(spark, uri, ["skew-layout", table])
    pruned = read(spark, table, ds=DAYS[0], country="US")
    return {
        "status": [status, said[-2000:]],
        "before": before,
        "after": spark_rows(spark, table),
        "read_us": rows_of(pruned),
        "expected_us": spark_rows(spark, table, "country = 'US'"),
        "read_files": sorted(Path(f).name for f in pruned.inputFiles()),
        "read_other": rows_of(read(spark, table, country="C1")),
        "expected_other": spark_rows(spark, table, "country = 'C1'"),
    }


def compact(spark, uri: str, table: str) -> dict:
    before = spark_rows(spark, table)
    location = spark.sql(f"DESCRIBE FORMATTED {table} PARTITION (ds='{DAYS[0]}')").where("col_name = 'Location'").first().data_type
    files_before = len(data_files(ArrowStorage().list(location)))
    status, said = job(spark, uri, ["compact", table, "--partition", f"ds={DAYS[0]}", "--files", "1"])
    location = spark.sql(f"DESCRIBE FORMATTED {table} PARTITION (ds='{DAYS[0]}')").where("col_name = 'Location'").first().data_type
    return {
        "status": [status, said[-2000:]],
        "before": before,
        "after": spark_rows(spark, table),
        "files": [files_before, len(data_files(ArrowStorage().list(location)))],
    }


BUCKETS = 4


def bucketed(spark, uri: str, db: str, root: str) -> dict:
    """`hmsproxy stream` into a table CLUSTERED BY (id) INTO 4 BUCKETS (made over Thrift, as Hive makes
    one: Spark's own CREATE TABLE ... CLUSTERED BY marks Spark's bucketing, not Hive's)."""
    from hmsproxy.streaming.buckets import bucket_of
    from hmsproxy.testing.builders import parquet_table

    name = "bucketed"
    made = parquet_table(db, name, f"{root}/{db}.db/{name}", columns=(("id", "int"), ("msg", "string")), partition_keys=(("ds", "string"),))
    made.sd.bucketCols, made.sd.numBuckets = ["id"], BUCKETS
    host, port = uri.removeprefix("thrift://").split(",")[0].rsplit(":", 1)
    client = thriftpy2.rpc.make_client(idl.HmsProxy, host, int(port), timeout=60_000)
    try:
        client.create_table(made)
    finally:
        client.close()
    ids = list(range(-30, 90))
    done = hmsproxy(
        ["stream", f"{db}.{name}", "--uri", uri, "--partition", f"ds={DAYS[0]}", "--rows-per-txn", "60"],
        "".join(f"{i},row {i}\n" for i in ids),
    )
    table = f"{db}.{name}"
    spark.catalog.refreshTable(table)
    placed = spark.sql(f"SELECT id, input_file_name() AS file FROM {table}").collect()
    return {
        "exit": [done.returncode, done.stderr[-2000:]],
        "written": sorted([i, f"row {i}", DAYS[0]] for i in ids),
        "spark": spark_rows(spark, table),
        # Spark's view of which file holds each row: the file's bucket number (its name's first six digits)
        # against Hive's bucketing function of the row's id.
        "misplaced": sorted(r.id for r in placed if int(Path(r.file).name[:6]) != bucket_of([r.id], ["int"], BUCKETS)),
        "names": sorted(Path(r.file).name for r in placed),
    }


def compact_beside_writers(spark, uri: str, db: str) -> dict:
    """Two writers stream batches of transactions into one partition while `compact` rewrites it twice."""
    from hmsproxy.streaming import DelimitedInputWriter, HiveEndPoint

    table = f"{db}.live"
    spark.sql(f"CREATE TABLE {table} (id INT, msg STRING) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    errors: list[str] = []
    written: list[list] = []
    lock = threading.Lock()

    def writer(first: int) -> None:
        ep = HiveEndPoint(uri, db, "live", [DAYS[0]])
        try:
            for batch_no in range(4):
                with ep.new_connection(auto_create_partition=True) as conn:
                    batch = conn.fetch_transaction_batch(2, DelimitedInputWriter(["id", "msg"], ",", ep))
                    for txn in range(2):
                        batch.begin_next_transaction()
                        ids = range(first + (batch_no * 2 + txn) * 10, first + (batch_no * 2 + txn + 1) * 10)
                        batch.write_many([f"{i},w{first}".encode() for i in ids])
                        batch.commit()
                        with lock:
                            written.extend([i, f"w{first}", DAYS[0]] for i in ids)
                    log.append([round(time.monotonic() - t0, 2), first, batch_no, batch._location])
                    batch.close()
                time.sleep(0.2)
        except Exception as e:  # reported through the result
            errors.append(f"{type(e).__name__}: {e}")

    log: list = []
    t0 = time.monotonic()
    writers = [threading.Thread(target=writer, args=(first,)) for first in (0, 1000)]
    for w in writers:
        w.start()
    statuses = []
    time.sleep(1.0)
    for _ in range(2):
        log.append([round(time.monotonic() - t0, 2), "compact"])
        statuses.append(job(spark, uri, ["compact", table, "--partition", f"ds={DAYS[0]}", "--files", "1"]))
        log.append([round(time.monotonic() - t0, 2), "compacted"])
    for w in writers:
        w.join(300)
    return {
        "errors": errors,
        "log": log,
        "alive": [w.is_alive() for w in writers],
        "compacts": [[status, said[-1500:]] for status, said in statuses],
        "written": sorted(written),
        "spark": spark_rows(spark, table),
    }


def dependent(spark, db: str, base: str) -> dict:
    """A dependent table over `base` (partitioned by ds, its files on the store), one day published."""
    sql(spark, f"CREATE DEPENDENT TABLE {db}.daily PARTITIONED BY (ds) DEPENDS ON TABLE {base}")
    sql(spark, f"ALTER TABLE {db}.daily ADD PARTITION (ds='{DAYS[0]}')")
    return {
        "read": spark_rows(spark, f"{db}.daily"),
        "expected": spark_rows(spark, base, f"ds = '{DAYS[0]}'"),
        "unpublished": spark_rows(spark, f"{db}.daily", f"ds = '{DAYS[1]}'"),
    }


def remote(spark, db: str, backend_uri: str) -> dict:
    """A table written by Spark on the store, then reached as a remote table of the proxy: CREATE REMOTE
    TABLE connected to it in its metastore (the proxy's backend, named directly)."""
    spark.sql(f"CREATE TABLE {db}.origin (id INT, msg STRING) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {db}.origin VALUES (1, 'one'), (2, 'two'), (3, 'three')")
    sql(spark, f"CREATE REMOTE TABLE {db}.far CONNECTED TO {db}.origin WITH TBLPROPERTIES ('hive.metastore.uris'='{backend_uri}')")
    location = spark.sql(f"DESCRIBE FORMATTED {db}.far").where("col_name = 'Location'").first().data_type
    return {"read": spark_rows(spark, f"{db}.far"), "expected": spark_rows(spark, f"{db}.origin"), "location": location}


def on_store(spark, uri: str, root: str, parts: str, backend_uri: str) -> dict:
    """`parts`: "features" (streaming, indexes, skew, compact), "writers" (bucketed, compact beside writers)."""
    db = f"storage_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE DATABASE {db} LOCATION '{root}/{db}.db'")
    result = {"db": db}
    if "features" in parts:
        result["streaming"] = streaming(spark, uri, db)
        table = result["streaming"]["table"]
        result["indexes"] = indexes(spark, uri, table)
        result["skew"] = skew(spark, uri, db)
        result["compact"] = compact(spark, uri, table)
    if "writers" in parts:
        result["bucketed"] = bucketed(spark, uri, db, root)
        result["live"] = compact_beside_writers(spark, uri, db)
        if root.startswith("s3a://"):  # the pairs: a dependent table over S3, a remote table on HDFS
            result["dependent"] = dependent(spark, db, f"{db}.live")
            sql(spark, f"DROP DEPENDENT TABLE {db}.daily")
        else:
            result["remote"] = remote(spark, db, backend_uri)
            sql(spark, f"DROP REMOTE TABLE {db}.far")
    spark.sql(f"DROP DATABASE {db} CASCADE")
    return result


def main(uri: str, roots: str, warehouse: str, jars: str, parts: str = "features,writers", backend_uri: str = "") -> None:
    conf = {f"spark.hadoop.{k}": v for k, v in hadoop_conf.load().items()}  # HADOOP_CONF_DIR's keys, as a user sets them
    spark = make_spark(uri, Path(warehouse), app_name="hmsproxy-storage", extra_conf={**spark_class_path(jars.split(",")), **conf})
    results = {}
    try:
        for root in roots.split(","):
            try:
                results[root] = on_store(spark, uri, root, parts, backend_uri)
            except Exception:  # the next store still runs; this one's test shows why it failed
                results[root] = {"error": traceback.format_exc()}
    finally:
        spark.stop()
    print("RESULT " + json.dumps(results), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:7])

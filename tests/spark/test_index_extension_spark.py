"""Plain Spark SQL with hmsproxy's Spark extension (issue 42, first slice): a real SparkSession
through the proxy on a real Hive 2.3 metastore reads only the files a fresh compact index names.

One JVM serves every Spark test (tests/support/spark.py loads the extension there, switched off);
this module works in two sessions of it: `indexed` (the switch on) and `plain` (off, Spark's own
plan). Every answer is compared with `plain`'s, and the files each scan read come from Spark's
own metric (numFiles of the scan nodes). Adaptive execution is off in both so the executed plan
is the one whose scans ran."""

from __future__ import annotations

import os
import shutil
import threading
import time
import uuid
from urllib.parse import urlparse

import pytest

from hmsproxy.clients.spark import sql
from hmsproxy.jobs.spark_extension import ENABLED_CONF, TABLE_SWITCH, index_extension_jar
from tests.support.required import unavailable

pytestmark = pytest.mark.spark

DAYS = ("2026-11-01", "2026-11-02", "2026-11-03", "2026-11-04")
URIS_CONF = "spark.hmsproxy.index.metastore.uris"


@pytest.fixture(scope="module")
def sessions(spark):
    try:
        index_extension_jar()
    except FileNotFoundError as e:
        unavailable(str(e))
    if spark.conf.get("spark.sql.extensions", "") != "io.hmsproxy.spark.HmsProxyExtensions":
        unavailable("this test process's SparkSession was started without the extension (tests/support/spark.py)")
    indexed, plain = spark.newSession(), spark.newSession()
    for session, on in ((indexed, "true"), (plain, "false")):
        session.conf.set(ENABLED_CONF, on)
        session.conf.set("spark.sql.adaptive.enabled", "false")
    return indexed, plain


@pytest.fixture(scope="module")
def events(spark, sessions):
    """index_ext.events_<tag> by ds, 3 days, 4 files a day, users 0..39 (each on one day, in one file),
    with a compact index on user_id built over every day."""
    spark.sql("CREATE DATABASE IF NOT EXISTS index_ext")
    return indexed_events(spark, "index_ext")


def indexed_events(spark, db: str, stored: str = "PARQUET") -> str:
    table = f"{db}.events_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE TABLE {table} (user_id BIGINT, action STRING, amount DOUBLE) PARTITIONED BY (ds STRING) STORED AS {stored}")
    rows = [(u, ["view", "buy"][k % 2], float(u * 10 + k), DAYS[u % 3]) for u in range(40) for k in range(5)]
    frame = spark.createDataFrame(rows, "user_id BIGINT, action STRING, amount DOUBLE, ds STRING")
    frame.repartition(4, "user_id").sortWithinPartitions("user_id").createOrReplaceTempView("ext_events_src")
    spark.sql(f"INSERT INTO {table} SELECT * FROM ext_events_src")
    spark.catalog.dropTempView("ext_events_src")
    sql(spark, f"CREATE INDEX user_idx ON TABLE {table} (user_id) AS 'COMPACT'")
    return table


def run(session, query: str) -> tuple[list[tuple], int, str]:
    """(the answer sorted, data files the scans read by Spark's numFiles metric, the executed plan's text)."""
    frame = session.sql(query)
    rows = sorted(tuple(r) for r in frame.collect())
    plan = frame._jdf.queryExecution().executedPlan()
    leaves = plan.collectLeaves()
    files = 0
    for i in range(leaves.size()):
        leaf = leaves.apply(i)
        if leaf.nodeName().startswith("Scan") and leaf.metrics().contains("numFiles"):
            files += leaf.metrics().apply("numFiles").value()
    return rows, files, plan.toString()


def holding(plain, table: str, where: str) -> int:
    """How many data files hold a row matching `where`: what a fresh index must read, no more."""
    return plain.sql(f"SELECT input_file_name() FROM {table} WHERE {where}").distinct().count()


def files_of(plain, table: str, ds: str) -> int:
    return holding(plain, table, f"ds = '{ds}'")


def same_answer(sessions, query: str) -> tuple[int, int, str]:
    """(files read with the extension, without, the extension's plan) of a query both answer alike."""
    indexed, plain = sessions
    rows, files, shown = run(indexed, query)
    expected, all_files, _ = run(plain, query)
    assert rows == expected
    return files, all_files, shown


def test_a_point_lookup_reads_the_one_file_the_index_names(sessions, events):
    files, all_files, shown = same_answer(sessions, f"SELECT * FROM {events} WHERE user_id = 3")
    assert (files, all_files) == (1, 12)
    assert "hmsproxy index user_idx: 1 of 12 files (3 of 3 partitions fresh)" in shown
    assert "HmsProxyIndexedFileIndex" in shown
    indexed, _ = sessions
    explained = indexed.sql(f"EXPLAIN SELECT * FROM {events} WHERE user_id = 3").first()[0]
    assert "hmsproxy index user_idx" in explained


def test_an_in_list_reads_the_files_of_each_value(sessions, events):
    where = "user_id IN (3, 4, 39, 1000)"
    files, all_files, _ = same_answer(sessions, f"SELECT user_id, amount FROM {events} WHERE {where}")
    assert files == holding(sessions[1], events, where) and 0 < files < all_files
    # more than Spark's InSet threshold (10 values): the optimizer rewrites IN as InSet, still an index lookup
    many = f"user_id IN ({', '.join(str(u) for u in range(0, 40, 3))})"
    files, all_files, _ = same_answer(sessions, f"SELECT count(*), sum(amount) FROM {events} WHERE {many}")
    assert files == holding(sessions[1], events, many) and files < all_files


def test_a_partition_range_with_equality_reads_only_the_chosen_days_files(sessions, events):
    files, all_files, shown = same_answer(sessions, f"SELECT * FROM {events} WHERE ds >= '{DAYS[1]}' AND user_id = 4 AND action = 'buy'")
    assert (files, all_files) == (1, 8)
    assert "2 of 2 partitions fresh" in shown
    files, all_files, _ = same_answer(sessions, f"SELECT * FROM {events} WHERE ds >= '{DAYS[1]}' AND user_id = 3")
    assert (files, all_files) == (0, 8)  # user 3 is on the first day only


def test_a_join_uses_the_index_on_each_side(sessions, events):
    query = (
        f"SELECT a.user_id, a.amount, b.amount FROM {events} a JOIN {events} b ON a.user_id = b.user_id "
        f"WHERE a.user_id = 7 AND b.action = 'buy'"
    )
    files, all_files, _ = same_answer(sessions, query)
    assert (files, all_files) == (2, 24)  # the filter reaches b through the join key (inferred constraints)


def test_an_index_on_a_federated_database(spark, sessions, federated_dbs):
    table = indexed_events(spark, "waggle_sales")  # the federated metastore's database, prefixed through the proxy
    files, all_files, shown = same_answer(sessions, f"SELECT * FROM {table} WHERE user_id IN (5, 6)")
    assert (files, all_files) == (holding(sessions[1], table, "user_id IN (5, 6)"), 12) and "hmsproxy index user_idx" in shown


def test_the_switch_the_table_opt_out_and_a_metastore_that_is_not_a_proxy_leave_plans_alone(sessions, events, metastores):
    query = f"SELECT * FROM {events} WHERE user_id = 3"
    # metastores[0]: the Hive metastore behind the proxy: asked, not a hmsproxy
    assert_left_alone(sessions, events, query, 12, not_a_proxy=metastores[0].uri)
    assert same_answer(sessions, query)[0] == 1  # and back on


def assert_left_alone(sessions, table: str, query: str, all_files: int, not_a_proxy: str | None = None) -> None:
    """The query reads every file, its plan Spark's own, with the switch off, with the table opted out
    and (given its URI) asking a metastore that is not a hmsproxy."""
    indexed, _ = sessions

    def read_whole() -> None:
        files, every, shown = same_answer(sessions, query)
        assert files == every == all_files and "HmsProxyIndexedFileIndex" not in shown

    try:
        indexed.conf.set(ENABLED_CONF, "false")
        read_whole()
    finally:
        indexed.conf.set(ENABLED_CONF, "true")
    indexed.sql(f"ALTER TABLE {table} SET TBLPROPERTIES ('{TABLE_SWITCH}'='false')")
    try:
        read_whole()
    finally:
        indexed.sql(f"ALTER TABLE {table} UNSET TBLPROPERTIES ('{TABLE_SWITCH}')")
    if not_a_proxy:
        try:
            indexed.conf.set(URIS_CONF, not_a_proxy)
            read_whole()
        finally:
            indexed.conf.unset(URIS_CONF)


def test_stale_and_never_built_partitions_are_read_whole(spark, sessions, events):
    # Near the end: it changes the table. Files added to the first day after the build make it stale; a fourth day was never indexed.
    spark.sql(f"INSERT INTO {events} PARTITION (ds='{DAYS[0]}') VALUES (3, 'late', 1.5), (4, 'late', 2.5)")
    spark.sql(f"INSERT INTO {events} PARTITION (ds='{DAYS[3]}') VALUES (3, 'new', 3.5), (5, 'new', 4.5)")
    for session in sessions:
        session.catalog.refreshTable(events)
    _, plain = sessions
    day0, day3 = files_of(plain, events, DAYS[0]), files_of(plain, events, DAYS[3])
    files, all_files, shown = same_answer(sessions, f"SELECT * FROM {events} WHERE user_id = 3")
    assert files == day0 + day3 and all_files == day0 + 8 + day3
    assert "1 of 3 fresh" not in shown and "(2 of 4 partitions fresh)" in shown
    files, _, _ = same_answer(sessions, f"SELECT * FROM {events} WHERE user_id = 4")
    assert files == day0 + 1 + day3  # the stale and never-built days whole, the fresh second day's one file


def test_a_file_still_being_copied_is_not_read(spark, sessions, events):
    # After the stale test: the third day is fresh until a copy lands beside its files (`hadoop fs -put`
    # writes name._COPYING_ first). Spark skips such a file; the partition's digest counts it, so the
    # day is stale and read whole, without the copy, as Spark reads it.
    _, plain = sessions
    where = f"ds = '{DAYS[2]}' AND user_id = 5"
    assert same_answer(sessions, f"SELECT * FROM {events} WHERE {where}")[0] == 1
    source = urlparse(plain.sql(f"SELECT input_file_name() FROM {events} WHERE {where}").first()[0]).path
    shutil.copyfile(source, source + "._COPYING_")
    for session in sessions:
        session.catalog.refreshTable(events)
    try:
        files, all_files, shown = same_answer(sessions, f"SELECT * FROM {events} WHERE {where}")
        assert files == all_files == files_of(plain, events, DAYS[2]) == 4
        assert "4 of 4 files (0 of 1 partitions fresh)" in shown
    finally:
        os.remove(source + "._COPYING_")
        for session in sessions:
            session.catalog.refreshTable(events)


def test_a_rebuild_is_used_at_once(spark, sessions, events):
    # Last. The extension keeps the index table's partition locations a while (IndexTableMeta); a
    # rebuild writes each index partition anew: the kept ones no longer prove fresh, so it asks again.
    sql(spark, f"ALTER INDEX user_idx ON {events} REBUILD")
    for session in sessions:
        session.catalog.refreshTable(events)
    files, _, shown = same_answer(sessions, f"SELECT * FROM {events} WHERE user_id = 3")
    assert files == holding(sessions[1], events, "user_id = 3") and "(4 of 4 partitions fresh)" in shown


def test_a_partition_streamed_into_then_compacted_reads_right_at_every_moment(spark, proxy, sessions, monkeypatch):
    """A streaming writer commits into an indexed partition while plain SQL reads it, then `compact`
    rewrites it: every answer holds every row committed before the query (the new files make the day
    stale: read whole), and while compact has written its files but not swapped them in, the index
    still serves the old ones."""
    from hmsproxy.jobs import compact
    from hmsproxy.streaming import HiveEndPoint
    from tests.spark.test_streaming_spark import commit_rows

    indexed, plain = sessions
    db, name = "index_ext", f"streamed_{uuid.uuid4().hex[:8]}"
    table = f"{db}.{name}"
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {db}")
    spark.sql(f"CREATE TABLE {table} (user_id BIGINT, action STRING, amount DOUBLE) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    base = [(u, "base", float(u), DAYS[0]) for u in range(20)]
    spark.createDataFrame(base, "user_id BIGINT, action STRING, amount DOUBLE, ds STRING").repartition(
        4, "user_id"
    ).createOrReplaceTempView("ext_stream_src")
    spark.sql(f"INSERT INTO {table} SELECT * FROM ext_stream_src")
    spark.catalog.dropTempView("ext_stream_src")
    sql(spark, f"CREATE INDEX user_idx ON TABLE {table} (user_id) AS 'COMPACT'")
    query = f"SELECT amount FROM {table} WHERE user_id = 3 AND action = 'stream'"

    def streamed_amounts(session) -> tuple[list[float], int, int, str]:
        for each in sessions:
            each.catalog.refreshTable(table)
        rows, files, shown = run(session, query)
        return [r[0] for r in rows], files, files_of(plain, table, DAYS[0]), shown

    txns, done = 6, []  # done: transactions whose commit has returned

    def write() -> None:
        ep = HiveEndPoint(proxy.uri, db, name, [DAYS[0]])
        for k in range(txns):  # user 3's row in each, with others: each commit is one new file
            commit_rows(ep, [f"3,stream,{k}", f"{k + 10},stream,{k}"], columns=("user_id", "action", "amount"))
            done.append(k)
            time.sleep(0.3)

    writer = threading.Thread(target=write)
    writer.start()
    deadline, seen = time.monotonic() + 120, 0
    while writer.is_alive() and time.monotonic() < deadline:
        committed = len(done)
        amounts, files, _, shown = streamed_amounts(indexed)
        # whole transactions in commit order, at least those committed before the query began
        assert amounts == [float(k) for k in range(len(amounts))] and committed <= len(amounts) <= txns
        if amounts:  # stale: read whole, the 4 files inserted and one per commit it saw
            assert files == 4 + len(amounts) and "(0 of 1 partitions fresh)" in shown
        seen += 1
    writer.join(60)
    assert not writer.is_alive() and len(done) == txns and seen >= 2
    amounts, files, all_files, _ = streamed_amounts(indexed)
    assert amounts == [float(k) for k in range(txns)] and files == all_files == 4 + txns

    sql(spark, f"ALTER INDEX user_idx ON {table} REBUILD")
    fresh = streamed_amounts(indexed)
    assert fresh[0] == amounts and fresh[1] == txns + 1 and "(1 of 1 partitions fresh)" in fresh[3]  # user 3's base file and each commit's

    written, release = threading.Event(), threading.Event()
    real_write = compact.write_files

    def write_then_hold(*args, **kwargs):
        real_write(*args, **kwargs)
        written.set()
        assert release.wait(120)

    monkeypatch.setattr(compact, "write_files", write_then_hold)
    job = threading.Thread(target=run_job, args=(spark, proxy, "compact", table, "--files", "2"))
    job.start()
    try:
        assert written.wait(180), "compact never wrote its files"
        assert streamed_amounts(indexed)[:2] == (amounts, txns + 1)  # its files are beside, not swapped in: the index holds
    finally:
        release.set()
        job.join(180)
    assert not job.is_alive()
    after = streamed_amounts(indexed)
    assert after[0] == amounts and after[1] == after[2] == 2 and "(0 of 1 partitions fresh)" in after[3]
    every_user = sorted([*range(20), *[3] * txns, *range(10, 10 + txns)])
    assert [r[0] for r in run(plain, f"SELECT user_id FROM {table}")[0]] == every_user  # nothing lost or doubled


def test_a_kept_file_is_read_only_in_the_row_groups_the_index_names(spark, sessions):
    """One file of 3,000 rows in many small row groups, the user ids spread so that the row groups'
    statistics skip few (and no dictionary: off): Spark alone reads the groups its statistics
    admit; with the extension the scan returns only the rows of the groups the index's `_offsets` name."""
    import pyarrow.parquet as pq

    indexed, plain = sessions
    spark.sql("CREATE DATABASE IF NOT EXISTS index_ext")
    table = f"index_ext.groups_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE TABLE {table} (user_id BIGINT, action STRING) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    writer = spark.newSession()
    writer.conf.set("parquet.block.size", "4096")
    writer.conf.set("parquet.enable.dictionary", "false")
    rows = [(i * 7919 % 3000, f"a{i}", DAYS[0]) for i in range(3000)]
    writer.createDataFrame(rows, "user_id BIGINT, action STRING, ds STRING").coalesce(1).createOrReplaceTempView("ext_groups_src")
    writer.sql(f"INSERT INTO {table} SELECT * FROM ext_groups_src")
    sql(spark, f"CREATE INDEX user_idx ON TABLE {table} (user_id) AS 'COMPACT'")
    [path] = {urlparse(r[0]).path for r in plain.sql(f"SELECT input_file_name() FROM {table}").collect()}
    footer = pq.ParquetFile(path)
    groups = [footer.read_row_group(g, columns=["user_id"]).column(0).to_pylist() for g in range(footer.num_row_groups)]
    assert len(groups) >= 8 and os.path.getsize(path) > 4 * 4096  # 4k splits below: several

    for users in ([1500], [1500, 1234, 1777]):
        assert_reads_only_the_named_groups(sessions, table, groups, users)
    split = "spark.sql.files.maxPartitionBytes"
    try:  # the file read as several splits, each keeping the wanted groups whose middle it holds
        for session in sessions:
            session.conf.set(split, "4k")
        assert_reads_only_the_named_groups(sessions, table, groups, [1500, 1234, 1777])
    finally:
        for session in sessions:
            session.conf.unset(split)


def assert_reads_only_the_named_groups(sessions, table: str, groups: list[list[int]], users: list[int]) -> None:
    indexed, plain = sessions
    query = f"SELECT * FROM {table} WHERE user_id IN ({', '.join(map(str, users))})"
    assert same_answer(sessions, query)[:2] == (1, 1)
    holding = [g for g in groups if set(users) & set(g)]
    admitted = [g for g in groups if any(min(g) <= u <= max(g) for u in users)]  # what statistics can't skip
    assert scanned_rows(indexed, query) == sum(map(len, holding)) < 3000 // 4
    assert scanned_rows(plain, query) == sum(map(len, admitted)) > 3000 * 3 // 4


def scanned_rows(session, query: str) -> int:
    """Rows the query's scans returned (Spark's numOutputRows of the scan nodes), before any filter."""
    frame = session.sql(query)
    frame.collect()
    leaves = frame._jdf.queryExecution().executedPlan().collectLeaves()
    return sum(
        leaves.apply(i).metrics().apply("numOutputRows").value()
        for i in range(leaves.size())
        if leaves.apply(i).nodeName().startswith("Scan")
    )


# --- the skew layout (docs/skew.md): the groups `hmsproxy job skew-layout` wrote, pruned by plain SQL ---

LAID_OUT_DAYS = DAYS[:2]  # laid out by the job; DAYS[2] is added afterwards, never laid out


@pytest.fixture(scope="module")
def skewed(spark, proxy, sessions):
    """index_ext.skewed_<tag> SKEWED BY (country) ON ('US', 'IN'), by ds: the first two days laid out
    (a file per group: US, IN, default), the third added afterwards as 3 plain files."""
    return skewed_table(spark, proxy, sessions, "PARQUET")


def lay_out(spark, proxy, table: str) -> None:
    """`hmsproxy job skew-layout <table>` on this session, as the CLI runs it."""
    run_job(spark, proxy, "skew-layout", table)


def run_job(spark, proxy, *argv: str) -> None:
    """`hmsproxy job <argv>` on this session, as the CLI runs it."""
    from io import StringIO

    from hmsproxy.jobs.cli import build_parser, run_job_command
    from hmsproxy.jobs.context import JobContext

    ctx = JobContext(proxy.uri, spark=spark, stdout=StringIO(), stderr=StringIO())
    assert run_job_command(build_parser().parse_args(list(argv)), ctx) == 0, ctx.stderr.getvalue()


def skewed_table(spark, proxy, sessions, stored: str) -> str:
    spark.sql("CREATE DATABASE IF NOT EXISTS index_ext")
    table = f"index_ext.skewed_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE TABLE {table} (id BIGINT, country STRING, amount INT) PARTITIONED BY (ds STRING) STORED AS {stored}")
    sql(spark, f"ALTER TABLE {table} SKEWED BY (country) ON ('US', 'IN')")
    for ds in LAID_OUT_DAYS:
        insert_skewed_day(spark, table, ds)
    lay_out(spark, proxy, table)
    insert_skewed_day(spark, table, DAYS[2])
    for session in sessions:
        session.catalog.refreshTable(table)
    return table


def insert_skewed_day(spark, table: str, ds: str) -> None:
    """60 US rows, 30 IN, 30 spread over C00..C09, in 3 files; ids unique across days."""
    start = DAYS.index(ds) * 1000
    countries = ["US"] * 60 + ["IN"] * 30 + [f"C{k % 10:02d}" for k in range(30)]
    rows = [(start + i, c, i % 50) for i, c in enumerate(countries)]
    spark.createDataFrame(rows, "id BIGINT, country STRING, amount INT").repartition(3).createOrReplaceTempView("ext_skewed_src")
    spark.sql(f"INSERT INTO {table} PARTITION (ds='{ds}') SELECT * FROM ext_skewed_src")
    spark.catalog.dropTempView("ext_skewed_src")


def test_a_skewed_value_reads_its_group_in_laid_out_days_and_other_days_whole(sessions, skewed):
    files, all_files, shown = same_answer(sessions, f"SELECT * FROM {skewed} WHERE country = 'US'")
    assert (files, all_files) == (1 + 1 + 3, 9)
    assert "hmsproxy skew layout: 5 of 9 files (2 of 3 partitions laid out)" in shown
    explained = sessions[0].sql(f"EXPLAIN SELECT count(*) FROM {skewed} WHERE country = 'US'").first()[0]
    assert "hmsproxy skew layout" in explained
    # IN on skewed values, with a partition predicate and another conjunct: only those groups of that day
    query = f"SELECT id, amount FROM {skewed} WHERE ds = '{DAYS[0]}' AND country IN ('US', 'IN') AND amount > 10"
    assert same_answer(sessions, query)[:2] == (2, 3)


def test_a_value_not_skewed_reads_the_default_group(sessions, skewed):
    for country in ("C03", "FR"):  # rows in the default group; no rows at all
        files, all_files, _ = same_answer(sessions, f"SELECT * FROM {skewed} WHERE country = '{country}' AND ds <= '{DAYS[1]}'")
        assert (files, all_files) == (2, 6)
    # a skewed and an unskewed value: both groups
    assert same_answer(sessions, f"SELECT * FROM {skewed} WHERE ds = '{DAYS[1]}' AND country IN ('IN', 'C07')")[:2] == (2, 3)
    # a filter on a column that is not skewed: the layout says nothing, the plan stays Spark's
    files, all_files, shown = same_answer(sessions, f"SELECT * FROM {skewed} WHERE amount = 7")
    assert files == all_files == 9 and "HmsProxyIndexedFileIndex" not in shown


def test_the_switch_and_the_table_opt_out_leave_a_laid_out_table_alone(sessions, skewed):
    query = f"SELECT * FROM {skewed} WHERE country = 'IN'"
    assert_left_alone(sessions, skewed, query, 9)
    assert same_answer(sessions, query)[0] == 5


def test_an_index_and_the_layout_keep_only_the_files_both_name(spark, sessions, skewed):
    # ids 5 and 65 of the first day are a US and an IN row: the index names both groups' files, the layout only US's
    sql(spark, f"CREATE INDEX id_idx ON TABLE {skewed} (id) AS 'COMPACT'")
    files, all_files, shown = same_answer(sessions, f"SELECT * FROM {skewed} WHERE id IN (5, 65) AND country = 'US'")
    assert (files, all_files) == (1, 9)
    assert "hmsproxy index id_idx + skew layout: 1 of 9 files (3 of 3 partitions fresh, 2 laid out)" in shown
    assert same_answer(sessions, f"SELECT * FROM {skewed} WHERE id IN (5, 65)")[:2] == (2, 9)


def test_a_file_added_after_the_layout_makes_the_day_read_whole(spark, sessions, skewed):
    # Last for this table: an INSERT into a laid-out day leaves its record behind, not its files.
    spark.sql(f"INSERT INTO {skewed} PARTITION (ds='{DAYS[0]}') VALUES (999, 'US', 1)")
    for session in sessions:
        session.catalog.refreshTable(skewed)
    files, all_files, shown = same_answer(sessions, f"SELECT * FROM {skewed} WHERE country = 'US'")
    assert (files, all_files) == (4 + 1 + 3, 10)
    assert "(1 of 3 partitions laid out)" in shown


def test_orc_tables_read_only_what_the_index_and_the_layout_name(spark, proxy, sessions):
    """Spark's native ORC reader (convertMetastoreOrc, on by default) is narrowed as Parquet's is:
    by the index, by the layout, and by both."""
    spark.sql("CREATE DATABASE IF NOT EXISTS index_ext")
    events = indexed_events(spark, "index_ext", stored="ORC")
    files, all_files, shown = same_answer(sessions, f"SELECT * FROM {events} WHERE user_id = 3")
    assert (files, all_files) == (1, 12)
    assert "ORC, hmsproxy index user_idx: 1 of 12 files (3 of 3 partitions fresh)" in shown
    skewed = skewed_table(spark, proxy, sessions, "ORC")
    files, all_files, shown = same_answer(sessions, f"SELECT * FROM {skewed} WHERE country = 'US'")
    assert (files, all_files) == (1 + 1 + 3, 9)
    assert "ORC, hmsproxy skew layout: 5 of 9 files (2 of 3 partitions laid out)" in shown
    sql(spark, f"CREATE INDEX id_idx ON TABLE {skewed} (id) AS 'COMPACT'")
    assert same_answer(sessions, f"SELECT * FROM {skewed} WHERE id IN (5, 65) AND country = 'US'")[:2] == (1, 9)


def test_a_skew_on_two_columns_keeps_the_groups_whose_values_agree(spark, proxy, sessions):
    """SKEWED BY (country, tier) ON (('US', 1), ('IN', 2)): a filter on both columns reads its tuple's
    group; on one of them (a prefix or not), every group that may agree plus the default group."""
    spark.sql("CREATE DATABASE IF NOT EXISTS index_ext")
    table = f"index_ext.pairs_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE TABLE {table} (id BIGINT, country STRING, tier INT) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    sql(spark, f"ALTER TABLE {table} SKEWED BY (country, tier) ON (('US', 1), ('IN', 2))")
    pairs = [("US", 1)] * 40 + [("IN", 2)] * 20 + [("US", 2)] * 20 + [(f"C{k % 5}", k % 3) for k in range(20)]
    rows = [(i, country, tier) for i, (country, tier) in enumerate(pairs)]
    spark.createDataFrame(rows, "id BIGINT, country STRING, tier INT").repartition(3).createOrReplaceTempView("ext_pairs_src")
    spark.sql(f"INSERT INTO {table} PARTITION (ds='{DAYS[0]}') SELECT * FROM ext_pairs_src")
    spark.catalog.dropTempView("ext_pairs_src")
    lay_out(spark, proxy, table)
    for session in sessions:
        session.catalog.refreshTable(table)
    expected = {  # files read of the 3 groups: ('US', 1), ('IN', 2), the default
        "country = 'US' AND tier = 1": 1,
        "country = 'IN' AND tier = 2": 1,
        "country = 'US' AND tier = 2": 1,  # not a skewed tuple: the default group only
        "country = 'US'": 2,  # ('US', 1) and the default, where ('US', 2) rows are
        "tier = 2": 2,  # ('IN', 2) and the default
        "country IN ('US', 'IN') AND tier IN (1, 2)": 3,  # two skewed tuples and two that are not
    }
    for where, files in expected.items():
        assert same_answer(sessions, f"SELECT * FROM {table} WHERE {where}")[:2] == (files, 3), where

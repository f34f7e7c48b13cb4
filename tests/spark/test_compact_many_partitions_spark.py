"""compact over many partitions in one Spark pass (issue 46), through the proxy on a real Hive 2.3
metastore: every partition ends as the per-partition compact leaves it (its rows, one file), and a
partition with an unreadable file fails alone, left as it was, while the others are swapped in."""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hmsproxy.files.storage import ArrowStorage, arrow_filesystem, data_files
from hmsproxy.jobs import compact_pass
from hmsproxy.jobs.cli import build_parser, run_job_command
from hmsproxy.jobs.context import JobContext
from hmsproxy.jobs.metastore import MetastoreClient
from tests.spark.test_rebuild_many_partitions_spark import PARTITIONS, REFUSED_PARTITIONS, day, make_table
from tests.support.one_pass import alone_then_only_the_pass, failed_alone
from tests.support.swap_readers import assert_failed_alone_in_the_batch, refused_in_the_batch, swapped_while_read

pytestmark = pytest.mark.spark


def small_files_table(spark, proxy, partitions: int = PARTITIONS) -> str:
    """make_table's days, each with a second file (written with pyarrow): one late row a day."""
    table = make_table(spark, partitions)
    db, name = table.split(".")
    with MetastoreClient(proxy.uri) as ms:
        for p in ms.partitions(db, name):
            late = pa.table({"user_id": pa.array([10_000], pa.int64()), "action": ["late"]})
            filesystem, inner = arrow_filesystem(f"{p.sd.location}/part-late.parquet")
            pq.write_table(late, inner, filesystem=filesystem)
    spark.catalog.refreshTable(table)
    return table


def compact_job(spark, proxy, *argv: str) -> tuple[int, JobContext]:
    ctx = JobContext(proxy.uri, spark=spark, stdout=io.StringIO(), stderr=io.StringIO())
    return run_job_command(build_parser().parse_args(["compact", *argv]), ctx), ctx


def layout(spark, proxy, table: str) -> dict[str, tuple[str, list[str], list[tuple]]]:
    """ds -> (location, its data files' names, its rows sorted) as the metastore and the files say."""
    db, name = table.split(".")
    spark.catalog.refreshTable(table)
    rows: dict[str, list[tuple]] = {}
    for r in spark.sql(f"SELECT user_id, action, ds FROM {table}").collect():
        rows.setdefault(r.ds, []).append((r.user_id, r.action))
    found = {}
    with MetastoreClient(proxy.uri) as ms:
        for p in ms.partitions(db, name):
            files = sorted(f.name for f in data_files(ArrowStorage().list(p.sd.location)))
            found[p.values[0]] = (p.sd.location, files, sorted(rows.get(p.values[0], [])))
    return found


def test_one_pass_leaves_every_partition_as_compacting_it_alone_does(spark, proxy, monkeypatch):
    passed, alone = small_files_table(spark, proxy), small_files_table(spark, proxy)  # the same rows in each
    before = layout(spark, proxy, passed)
    assert len(before) == PARTITIONS and all(len(files) >= 2 for _, files, _ in before.values())
    compared = [day(i) for i in (0, 17, PARTITIONS - 1)]  # a few: alone costs Spark jobs each
    only_pass = ("compact_beside_writers", "compact_target")
    alone_then_only_the_pass(lambda *argv: compact_job(spark, proxy, *argv), alone, compared, monkeypatch, compact_pass, only_pass)
    status, ctx = compact_job(spark, proxy, passed, "--files", "1")
    assert status == 0, ctx.stderr.getvalue()
    assert f"{PARTITIONS} rewritten, 0 skipped, 0 failed; {PARTITIONS * 7:,} rows" in ctx.stdout.getvalue()

    after, single = layout(spark, proxy, passed), layout(spark, proxy, alone)
    for ds, (location, files, rows) in after.items():
        assert location != before[ds][0] and ".hmsproxy-compact-" in location
        assert len(files) == 1 and rows == before[ds][2] and len(rows) == 7
        assert not ArrowStorage().exists(before[ds][0])  # the old directory went once swapped
    for ds in compared:
        assert len(single[ds][1]) == 1 and single[ds][2] == after[ds][2]
    table_location = after[day(0)][0].rsplit("/", 1)[0]
    leftovers = [e.name for e in ArrowStorage().list(table_location.rsplit("/", 1)[0]) if "staging" in e.name]
    assert not leftovers

    status, ctx = compact_job(spark, proxy, passed, "--files", "1")  # nothing left to do: every one skipped
    assert status == 0 and f"0 rewritten, {PARTITIONS} skipped, 0 failed" in ctx.stdout.getvalue()
    for table in (passed, alone):
        spark.sql(f"DROP TABLE {table}")


def test_a_partition_with_an_unreadable_file_fails_alone_and_the_others_are_swapped_in(spark, proxy, monkeypatch):
    table = small_files_table(spark, proxy)
    bad = day(7)
    before = layout(spark, proxy, table)
    filesystem, inner = arrow_filesystem(f"{before[bad][0]}/part-broken.parquet")
    with filesystem.open_output_stream(inner) as out:
        out.write(b"not parquet at all")
    run = lambda *argv: compact_job(spark, proxy, *argv)  # noqa: E731
    failed_alone(run, table, bad, PARTITIONS, "rewritten", monkeypatch, compact_pass, "compact_beside_writers")
    db, name = table.split(".")
    with MetastoreClient(proxy.uri) as ms:
        assert ms.get_partition(db, name, [bad]).sd.location == before[bad][0]
    assert sorted(f.name for f in data_files(ArrowStorage().list(before[bad][0]))) == sorted([*before[bad][1], "part-broken.parquet"])
    os_remove = arrow_filesystem(f"{before[bad][0]}/part-broken.parquet")
    os_remove[0].delete_file(os_remove[1])  # readable again: the rest of the table is checked through Spark
    after = layout(spark, proxy, table)
    for ds, (location, files, rows) in after.items():
        assert rows == before[ds][2]
        if ds == bad:
            assert location == before[ds][0] and files == before[ds][1]
        else:
            assert location != before[ds][0] and len(files) == 1
    spark.sql(f"DROP TABLE {table}")


def test_one_refused_swap_fails_alone_and_readers_see_each_partition_old_or_new_while_the_batch_swaps(spark, proxy, monkeypatch):
    """The metastore refuses one partition of the batched alter_partitions (a parameter longer than its
    column holds), so the whole call fails and each partition is altered on its own: that one is left
    as it was, the others are swapped in. Meanwhile a reader reads every partition in a loop, and each
    read of a location still current holds its rows once (never none, never old and new files both).
    On REFUSED_PARTITIONS, swapped a few at a time: the batches beside the refused one's go through."""
    table = small_files_table(spark, proxy, REFUSED_PARTITIONS)
    bad = day(11)
    before = layout(spark, proxy, table)
    refused_in_the_batch(monkeypatch, bad)
    (status, ctx), reads = swapped_while_read(monkeypatch, proxy.uri, table, lambda: compact_job(spark, proxy, table))
    assert status == 1
    assert_failed_alone_in_the_batch(ctx, "rewritten", bad, REFUSED_PARTITIONS)
    after = layout(spark, proxy, table)
    assert after[bad] == before[bad]  # same location, same files, same rows
    for ds, (location, files, rows) in after.items():
        if ds != bad:
            assert location != before[ds][0] and len(files) == 1 and rows == before[ds][2]
    table_dir = before[bad][0].rsplit("/", 1)[0]
    assert [e.name for e in ArrowStorage().list(table_dir) if e.name.startswith(f"ds={bad}")] == [f"ds={bad}"]  # nothing left beside it

    assert len(reads.partitions()) == REFUSED_PARTITIONS
    wrong = [(ds, found) for ds, found in reads.seen if found not in ((7, len(before[ds][1])), (7, 1))]
    assert not wrong, wrong[:5]  # a read of none or of both would count 0 or 14 rows
    assert any(n == 1 for ds, (_, n) in reads.seen if ds != bad) and any(n > 1 for ds, (_, n) in reads.seen if ds != bad)
    spark.sql(f"DROP TABLE {table}")

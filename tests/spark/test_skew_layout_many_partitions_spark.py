"""skew-layout over many partitions in one Spark pass (issue 46), through the proxy on a real Hive 2.3
metastore: every partition ends laid out as laying it out alone does (files, layout record, SkewedInfo,
rows), and a partition with an unreadable file fails alone, left as it was, while the others are
swapped in."""

from __future__ import annotations

import uuid

import pytest

from hmsproxy.features.skew.layout import from_parameters
from hmsproxy.files.storage import ArrowStorage, arrow_filesystem, data_files
from hmsproxy.jobs import skew_pass
from hmsproxy.jobs.skew_layout import open_metastore
from tests.spark.test_rebuild_many_partitions_spark import PARTITIONS, REFUSED_PARTITIONS, day
from tests.spark.test_skew_layout_spark import run_job, set_skew
from tests.support.one_pass import alone_then_only_the_pass, failed_alone
from tests.support.swap_readers import assert_failed_alone_in_the_batch, refused_in_the_batch, swapped_while_read

pytestmark = pytest.mark.spark

DB = "skew_many"


def make_table(spark, partitions: int = PARTITIONS) -> str:
    """DB.ev_<tag>: `partitions` days of 10 rows each (5 US, 3 IN, 2 elsewhere)."""
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {DB}")
    table = f"{DB}.ev_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE TABLE {table} (id INT, country STRING, amount INT) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    countries = ["US"] * 5 + ["IN"] * 3 + ["FR", "BR"]
    rows = [(i * 10 + k, c, k, day(i)) for i in range(partitions) for k, c in enumerate(countries)]
    spark.createDataFrame(rows, "id INT, country STRING, amount INT, ds STRING").repartition(2).createOrReplaceTempView("skew_many_src")
    spark.sql(f"INSERT INTO {table} SELECT * FROM skew_many_src")
    spark.catalog.dropTempView("skew_many_src")
    return table


def laid_out(spark, proxy, table: str) -> dict[str, tuple]:
    """ds -> (location, file names, the layout record's groups and checksum or None, skewed values, rows)."""
    db, name = table.split(".")
    spark.catalog.refreshTable(table)
    rows: dict[str, list[tuple]] = {}
    for r in spark.sql(f"SELECT id, country, amount, ds FROM {table}").collect():
        rows.setdefault(r.ds, []).append((r.id, r.country, r.amount))
    found = {}
    with open_metastore(proxy.uri) as ms:
        for p in ms.partitions(db, name):
            record = from_parameters(p.parameters)
            groups = None if record is None else ([(g.values, g.rows, [f.name for f in g.files]) for g in record.groups], record.checksum)
            info = p.sd.skewedInfo.skewedColValues if p.sd.skewedInfo else None
            files = sorted(f.name for f in data_files(ArrowStorage().list(p.sd.location)))
            found[p.values[0]] = (p.sd.location, files, groups, info, sorted(rows.get(p.values[0], [])))
    return found


def test_one_pass_lays_out_every_partition_as_laying_it_out_alone_does(spark, proxy, monkeypatch):
    passed, alone = make_table(spark), make_table(spark)
    for table in (passed, alone):
        set_skew(proxy, table, ["country"], [["US"], ["IN"]])
    before = laid_out(spark, proxy, passed)
    compared = [day(i) for i in (0, 23, PARTITIONS - 1)]  # a few: alone costs Spark jobs each
    only_pass = ("layout_alone", "layout_target")
    alone_then_only_the_pass(lambda *argv: run_job(spark, proxy, *argv), alone, compared, monkeypatch, skew_pass, only_pass)
    status, ctx = run_job(spark, proxy, passed)
    assert status == 0, ctx.stderr.getvalue()
    assert f"{PARTITIONS} laid out, 0 skipped, 0 failed; {PARTITIONS * 10:,} rows" in ctx.stdout.getvalue()
    progress = [line for line in ctx.stderr.getvalue().splitlines() if line.startswith(f"skew-layout {passed} [")]
    assert len(progress) == PARTITIONS and all("ok, 10 rows" in line and "2 value(s): US, IN" in line for line in progress)

    after, single = laid_out(spark, proxy, passed), laid_out(spark, proxy, alone)
    for ds, (location, files, groups, info, rows) in after.items():
        assert location != before[ds][0] and rows == before[ds][4] and len(rows) == 10
        assert info == [["US"], ["IN"]] and groups is not None
        assert [(values, n) for values, n, _ in groups[0]] == [(("US",), 5), (("IN",), 3), (None, 2)]
        assert files == sorted(name for *_, names in groups[0] for name in names)
    for ds in compared:  # the same files, record (but its time) and values as laid out alone
        assert after[ds][1:] == single[ds][1:]

    status, ctx = run_job(spark, proxy, passed)  # laid out for these values already: every one skipped
    assert status == 0 and f"0 laid out, {PARTITIONS} skipped, 0 failed" in ctx.stdout.getvalue()
    for table in (passed, alone):
        spark.sql(f"DROP TABLE {table}")


def test_a_partition_with_an_unreadable_file_fails_alone_and_the_others_are_laid_out(spark, proxy, monkeypatch):
    table = make_table(spark)
    set_skew(proxy, table, ["country"], [["US"], ["IN"]])
    bad = day(5)
    before = laid_out(spark, proxy, table)
    broken = f"{before[bad][0]}/part-broken.parquet"
    filesystem, inner = arrow_filesystem(broken)
    with filesystem.open_output_stream(inner) as out:
        out.write(b"not parquet at all")
    run = lambda *argv: run_job(spark, proxy, *argv)  # noqa: E731
    failed_alone(run, table, bad, PARTITIONS, "laid out", monkeypatch, skew_pass, "layout_alone")
    filesystem.delete_file(inner)  # readable again, to compare every partition through Spark
    after = laid_out(spark, proxy, table)
    for ds, (location, files, groups, info, rows) in after.items():
        assert rows == before[ds][4]
        if ds == bad:
            assert (location, files, groups) == before[ds][:3] and groups is None
        else:
            assert location != before[ds][0] and groups is not None and info == [["US"], ["IN"]]
    spark.sql(f"DROP TABLE {table}")


def test_one_refused_swap_fails_alone_and_readers_see_each_partition_old_or_new_while_the_batch_swaps(spark, proxy, monkeypatch):
    """As compact's (test_compact_many_partitions_spark): the metastore refuses one partition of the
    batched alter_partitions, which is then left as it was (no layout record) while the others are laid
    out, and a reader of every partition in a loop never sees none of its rows or them twice. On
    REFUSED_PARTITIONS, swapped a few at a time: the batches beside the refused one's go through."""
    table = make_table(spark, REFUSED_PARTITIONS)
    set_skew(proxy, table, ["country"], [["US"], ["IN"]])
    bad = day(9)
    before = laid_out(spark, proxy, table)
    refused_in_the_batch(monkeypatch, bad)
    (status, ctx), reads = swapped_while_read(monkeypatch, proxy.uri, table, lambda: run_job(spark, proxy, table))
    assert status == 1
    assert_failed_alone_in_the_batch(ctx, "laid out", bad, REFUSED_PARTITIONS)
    after = laid_out(spark, proxy, table)
    for ds, (location, files, groups, info, rows) in after.items():
        assert rows == before[ds][4]
        if ds == bad:
            assert (location, files, groups) == before[ds][:3] and groups is None
        else:
            assert location != before[ds][0] and groups is not None and info == [["US"], ["IN"]] and len(files) == 3
    table_dir = before[bad][0].rsplit("/", 1)[0]
    assert [e.name for e in ArrowStorage().list(table_dir) if e.name.startswith(f"ds={bad}")] == [f"ds={bad}"]  # nothing left beside it

    assert len(reads.partitions()) == REFUSED_PARTITIONS
    wrong = [(ds, found) for ds, found in reads.seen if found not in ((10, len(before[ds][1])), (10, 3))]
    assert not wrong, wrong[:5]  # a read of none or of both would count 0 or 20 rows
    assert any(n == 3 for ds, (_, n) in reads.seen if ds != bad) and any(n < 3 for ds, (_, n) in reads.seen)
    spark.sql(f"DROP TABLE {table}")

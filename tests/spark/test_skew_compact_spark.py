"""compact of skewed tables and streaming into laid-out partitions, end to end.

Real metastores behind the proxy, Spark through it, rows streamed with the Python streaming API:
`compact` merges each skewed value's file group (and the default group) on its own, so a laid-out
partition keeps its layout and pruned reads stay pruned and read the same rows; a streamed commit
voids a layout (readers scan the partition whole, every row seen) until the next `skew-layout`
lays it out again. Every check compares what a reader gets with the rows written.
"""

from __future__ import annotations

import io
from pathlib import Path
from urllib.parse import urlparse

import pytest

from hmsproxy.clients.spark import read, read_subdirectories, sql
from hmsproxy.features.skew.layout import LAYOUT_PARAMETER, from_parameters, matches_files
from hmsproxy.jobs import skew_layout
from hmsproxy.jobs.cli import build_parser, run_job_command
from hmsproxy.jobs.context import JobContext
from hmsproxy.streaming import DelimitedInputWriter, HiveEndPoint
from tests.spark.test_skew_layout_spark import DAYS, files_under, full_scan, local_path, make_table, partition, rows_of, set_skew

pytestmark = pytest.mark.spark

#: Streamed rows: two of a skewed value, one of a light one (a country no generated row has).
STREAMED = [(9001, "US", 1, "a", 1), (9002, "US", 2, "b", 2), (9003, "ZZ", 0, "c", 3)]


@pytest.fixture(scope="module")
def db(spark):
    spark.sql("CREATE DATABASE IF NOT EXISTS skew_compact_e2e")
    return "skew_compact_e2e"


@pytest.fixture
def small_groups(monkeypatch):
    """skew-layout splits groups into files of 25 rows: the many files per group compact must merge
    (at full size a group splits every 5,000,000 rows)."""
    monkeypatch.setattr(skew_layout, "MAX_ROWS_PER_FILE", 25)


def run(spark, proxy, job: str, *argv: str) -> tuple[int, str, str]:
    ctx = JobContext(proxy.uri, spark=spark, stdout=io.StringIO(), stderr=io.StringIO())
    status = run_job_command(build_parser().parse_args([job, *argv]), ctx)
    return status, ctx.stdout.getvalue(), ctx.stderr.getvalue()


def stream(proxy, table: str, ds: str, rows: list[tuple]) -> None:
    """Commit `rows` into the partition with the streaming API, in two transactions (two files)."""
    db, name = table.split(".")
    ep = HiveEndPoint(proxy.uri, db, name, [ds])
    with ep.new_connection() as conn:
        batch = conn.fetch_transaction_batch(2, DelimitedInputWriter(["id", "country", "x", "y", "amount"], ",", ep))
        for part in (rows[0::2], rows[1::2]):
            batch.begin_next_transaction()
            batch.write_many([",".join(map(str, r)).encode() for r in part])
            batch.commit()
        batch.close()


def layout_of(proxy, table: str, ds: str):
    """(record, whether it describes the partition's files exactly, the partition)."""
    p = partition(proxy, table, ds)
    record = from_parameters(p.parameters)
    on_disk = [(f, (local_path(p.sd.location) / f).stat().st_size) for f in files_under(p.sd.location)]
    return record, record is not None and matches_files(record, on_disk), p


def files_per_group(record) -> list[int]:
    return [len(g.files) for g in record.groups]


def names_read(frame) -> list[str]:
    return sorted(str(Path(urlparse(f).path)) for f in frame.inputFiles())


def test_compact_merges_each_group_keeps_the_layout_and_compacts_the_rest_flat(spark, proxy, db, small_groups):
    table = make_table(spark, db)  # three days of 210 rows: US 120, IN 50, 40 light, 3 files each
    set_skew(proxy, table, ["country"], [["US"], ["IN"]])
    laid, streamed, plain = DAYS
    status, _, err = run(spark, proxy, "skew-layout", table, "--partition", f"ds={laid}", "--partition", f"ds={streamed}")
    assert status == 0, err
    stream(proxy, table, streamed, STREAMED)  # voids that day's layout
    before = full_scan(spark, table)
    assert len(before) == 3 * 210 + len(STREAMED)
    record, exact, _ = layout_of(proxy, table, laid)
    assert exact and files_per_group(record) == [5, 2, 2]  # 120, 50 and 40 rows in files of 25
    _, exact, _ = layout_of(proxy, table, streamed)
    assert not exact  # the streamed files are not the record's
    # Voided, the day reads whole: the streamed rows are there, for the pruned reader too.
    us_streamed = full_scan(spark, table, ds=streamed, country="US")
    assert rows_of(read(spark, table, ds=streamed, country="US")) == us_streamed and len(us_streamed) == 122

    status, out, err = run(spark, proxy, "compact", table)
    assert status == 0, err
    assert "3 rewritten, 0 skipped, 0 failed" in out
    assert "9 → 3 files in 3 groups, layout kept" in err

    # The laid-out day: one file per group, the record true to the files, reads still pruned.
    record, exact, p = layout_of(proxy, table, laid)
    assert exact and files_per_group(record) == [1, 1, 1]
    assert [(g.values, g.rows) for g in record.groups] == [(("US",), 120), (("IN",), 50), (None, 40)]
    assert sorted(files_under(p.sd.location)) == ["skew-0-US-000.parquet", "skew-1-IN-000.parquet", "skew-2-default-000.parquet"]
    for country, group_file in (("US", "skew-0-US-000.parquet"), ("IN", "skew-1-IN-000.parquet"), ("C03", "skew-2-default-000.parquet")):
        frame = read(spark, table, ds=laid, country=country)
        assert names_read(frame) == [str(local_path(p.sd.location) / group_file)]
        assert rows_of(frame) == [r for r in before if r[-1] == laid and r[1] == country]
    (_, shown) = sql(spark, f"SHOW SKEW ON {table} PARTITION (ds='{laid}')").collect()
    assert shown.layout.startswith("3 groups (flat), 210 rows")
    # The voided and the plain day: compacted flat into one file, and marked not laid out.
    # (The plain day was added before the table was skewed: it has no skew of its own.)
    for ds, layout in ((streamed, "not laid out"), (plain, "not skewed")):
        record, _, p = layout_of(proxy, table, ds)
        assert record is None and LAYOUT_PARAMETER not in (p.parameters or {})
        assert len(files_under(p.sd.location)) == 1
        (_, shown) = sql(spark, f"SHOW SKEW ON {table} PARTITION (ds='{ds}')").collect()
        assert shown.layout == layout
    assert full_scan(spark, table) == before

    # The next skew-layout lays the other days out, streamed rows in their groups; the compacted one is kept.
    status, out, err = run(spark, proxy, "skew-layout", table)
    assert status == 0, err
    assert "2 laid out, 1 skipped" in out
    record, exact, p = layout_of(proxy, table, streamed)
    assert exact and [(g.values, g.rows) for g in record.groups] == [(("US",), 122), (("IN",), 50), (None, 41)]
    frame = read(spark, table, ds=streamed, country="US")
    assert rows_of(frame) == us_streamed and all("skew-0-US-" in name for name in names_read(frame))
    assert rows_of(read(spark, table, ds=streamed, country="ZZ")) == [(9003, "ZZ", 0, "c", 3, streamed)]
    assert full_scan(spark, table) == before


def test_a_stream_voids_a_directories_layout_and_skew_layout_then_compact_restore_it(spark, proxy, db, small_groups):
    table = make_table(spark, db, days=DAYS[:1])
    set_skew(proxy, table, ["country"], [["US"], ["IN"]], subdirectories=True)
    (ds,) = DAYS[:1]
    read_subdirectories(spark)  # the directories layout's readers (skew.md)
    try:
        status, _, err = run(spark, proxy, "skew-layout", table, "--allow-subdirectories")
        assert status == 0, err
        written = full_scan(spark, table)
        stream(proxy, table, ds, STREAMED)
        expected = sorted([*written, *((*r, ds) for r in STREAMED)])
        record, exact, p = layout_of(proxy, table, ds)
        assert not exact and files_per_group(record) == [5, 2, 2]
        streamed_files = [f for f in files_under(p.sd.location) if "/" not in f]
        assert len(streamed_files) == 2 and all("_stream-" in f for f in streamed_files)  # beside the directories
        # Voided: the pruned reader scans the partition whole and sees the streamed rows.
        assert full_scan(spark, table) == expected
        for country in ("US", "ZZ", "C03"):
            assert rows_of(read(spark, table, ds=ds, country=country)) == [r for r in expected if r[1] == country]
        # A flat rewrite would lose the directories' meaning: compact leaves the voided partition as it was.
        status, _, err = run(spark, proxy, "compact", table)
        assert status == 1 and "it has subdirectories" in err
        assert partition(proxy, table, ds).sd.location == p.sd.location

        # skew-layout lays it out again, the streamed rows in their directories.
        status, out, err = run(spark, proxy, "skew-layout", table, "--allow-subdirectories")
        assert status == 0, err
        assert "1 laid out" in out
        record, exact, p = layout_of(proxy, table, ds)
        assert exact and [(g.values, g.rows) for g in record.groups] == [(("US",), 122), (("IN",), 50), (None, 41)]
        assert files_per_group(record) == [5, 2, 2]
        # compact merges each directory's files, the location map following the new location.
        status, out, err = run(spark, proxy, "compact", table)
        assert status == 0, err
        assert "9 → 3 files in 3 groups, layout kept" in err
        record, exact, p = layout_of(proxy, table, ds)
        assert exact and files_per_group(record) == [1, 1, 1] and record.subdirectories
        location = p.sd.location.rstrip("/")
        assert sorted(files_under(location)) == [
            f"{skew_layout.DEFAULT_DIRECTORY}/skew-000.parquet",
            "country=IN/skew-000.parquet",
            "country=US/skew-000.parquet",
        ]
        assert p.sd.skewedInfo.skewedColValueLocationMaps == {("US",): f"{location}/country=US", ("IN",): f"{location}/country=IN"}
        for country in ("US", "IN", "ZZ"):
            frame = read(spark, table, ds=ds, country=country)
            group = "country=US" if country == "US" else "country=IN" if country == "IN" else skew_layout.DEFAULT_DIRECTORY
            assert names_read(frame) == [str(local_path(location) / group / "skew-000.parquet")]
            assert rows_of(frame) == [r for r in expected if r[1] == country]
        assert full_scan(spark, table) == expected
    finally:
        read_subdirectories(spark, enabled=False)

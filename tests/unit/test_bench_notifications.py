"""A smoke run of tests/bench/bench_notifications.py's parts that need no JVM (the merge rate, and
memory while a follower reads the whole log), small, plus its report."""

from tests.bench import bench_notifications as bench


def test_the_merge_part_merges_every_generated_event(tmp_path):
    result = bench.merge_rate(2_500, tmp_path)
    assert result.events == 2_500 and result.seconds > 0 and result.per_second > 0


def test_the_memory_part_serves_every_entry_once_in_order_and_reports_rss(tmp_path):
    result = bench.memory(3_000, tmp_path)
    assert result.served == 3_000  # and in order: memory() raises on a gap
    assert result.rss_before_mb > 0 and result.rss_after_mb > 0 and result.count_ms >= 0
    lines = bench.report("no metastore in a unit test", bench.merge_rate(1_000, tmp_path / "m"), result)
    assert "not measured (no metastore in a unit test)" in lines[1]
    assert any(line.startswith("memory: 3,000 merged entries") for line in lines)


def test_the_latency_report_shows_p50_and_p95_of_both_paths():
    lat = bench.LatencyResult(1000, direct_ms=[10.0, 11.0, 12.0, 30.0], proxy_ms=[20.0, 21.0, 22.0, 50.0], rename_us=12.0)
    merged = bench.MergeResult(100, 1.0)
    mem = bench.MemoryResult(10, 10, 0.1, 0.1, 50.0, 51.0, [50.5])
    lines = bench.report(lat, merged, mem)
    direct = next(line for line in lines if line.strip().startswith("direct"))
    proxy = next(line for line in lines if line.strip().startswith("proxy"))
    assert direct.split()[1:3] == ["11.5", "30.0"] and proxy.split()[1:3] == ["21.5", "50.0"]
    assert "(p50 x1.87)" in proxy and mem.growth_mb == 1.0
    assert any("12 µs per event" in line for line in lines)


def test_the_rename_cost_is_measured_on_real_messages():
    events = [bench.event(i) for i in range(1, 51)]
    assert bench.rename_cost_us(events) > 0

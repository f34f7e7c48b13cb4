"""The benchmark's report of the byte forwarder measured in the same runs (bench_proxy --floor)."""

from tests.bench.bench_proxy import Row, RunStats, evaluate_targets, median_of, ratios, render_floor
from tests.support.bench_runs import run_stats


def _run(path: str, clients: int, p50_ms: float, throughput: float) -> RunStats:
    return run_stats(
        path, "get_table", clients, p50_ms, throughput, proxy_cpu_ms=None if path == "direct" else {"proxy": 0.4, "floor": 0.15}[path]
    )


def test_ratios_are_medians_of_the_per_run_ratios():
    direct = [_run("direct", 1, 4.0, 200), _run("direct", 1, 5.0, 180), _run("direct", 1, 4.0, 210)]
    floor = [_run("floor", 1, 4.2, 190), _run("floor", 1, 5.0, 180), _run("floor", 1, 4.4, 200)]
    p50, throughput = ratios(direct, floor)
    assert p50 == 1.05  # per run: 1.05, 1.0, 1.1
    assert round(throughput, 4) == round(200 / 210, 4)  # per run: 0.95, 1.0, 0.952


def _row(clients: int, proxy: tuple[float, float], floor: tuple[float, float]) -> Row:
    direct = [_run("direct", clients, 4.0, 400)]
    proxied = [_run("proxy", clients, 4.0 * proxy[0], 400 * proxy[1])]
    forwarded = [_run("floor", clients, 4.0 * floor[0], 400 * floor[1])]
    row = Row("get_table", clients, median_of(direct), median_of(proxied), floor=median_of(forwarded))
    row.p50_ratio, row.throughput_ratio = ratios(direct, proxied)
    row.floor_p50_ratio, row.floor_throughput_ratio = ratios(direct, forwarded)
    return row


def test_each_target_names_where_the_floor_was():
    rows = [_row(1, (1.03, 0.94), (1.01, 0.97)), _row(16, (1.13, 0.87), (1.06, 0.94))]
    targets = evaluate_targets(rows)
    assert [(t["pass"], t["value"], t["floor"]) for t in targets] == [(True, 1.03, 1.01), (False, 0.87, 0.94)]
    table = render_floor(rows).splitlines()
    assert "floor p50 x" in table[0] and "floor tput x" in table[0]
    assert table[2].split() == ["get_table", "1", "|", "1.03x", "1.01x", "|", "0.94x", "0.97x", "|", "0.40", "0.15"]


def test_without_the_floor_targets_carry_no_floor_value():
    direct = [_run("direct", 1, 4.0, 200)]
    row = Row("get_table", 1, median_of(direct), median_of([_run("proxy", 1, 4.4, 190)]))
    row.p50_ratio, row.throughput_ratio = ratios(direct, [_run("proxy", 1, 4.4, 190)])
    (target,) = evaluate_targets([row])
    assert "floor" not in target and target["pass"] is False

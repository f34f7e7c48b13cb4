"""The benchmark's transactions section (tests/bench/bench_txn.py): its cases, rows and report."""

import dataclasses
import math

from tests.bench import bench_txn
from tests.bench.bench_proxy import DB, METHODS, TABLE, RunStats, load_note, make_row, ratios, summarize
from tests.support.bench_runs import run_stats


def _run(path: str, call: str, clients: int, p50_ms: float, throughput: float) -> RunStats:
    return run_stats(path, call, clients, p50_ms, throughput, proxy_cpu_ms=None if path == "direct" else 1.0)


def test_every_case_sends_methods_the_client_processes_know_and_names_the_table_as_each_path_does():
    cases = bench_txn.cases(DB, TABLE)
    assert [(c.kind, c.metastore) for c in cases] == [
        ("lock+check_lock+unlock", "primary"),
        ("lock+check_lock+unlock", "fed"),
        ("open_txns+commit_txn", "primary"),
        ("open_txns+lock+commit_txn", "primary"),
        ("open_txns+lock+commit_txn", "fed"),
    ]
    for case in cases:  # the clients fork before the cases are known: their methods must be there already
        assert case.direct_method in METHODS and case.proxy_method in METHODS
    fed_lock = cases[1]
    assert fed_lock.direct_method == "lock+check_lock+unlock bench.events"  # the federated metastore's real name
    assert fed_lock.proxy_method == "lock+check_lock+unlock fed_bench.events"  # the proxy's prefixed name
    assert [c.metastore for c in bench_txn.cases(DB, TABLE, federated=False)] == ["primary"] * 3


def test_lock_requests_set_the_operation_type_a_hive_in_test_metastore_requires():
    from hmsproxy.protocol import idl

    request = bench_txn._lock_request("fed_bench", "events", txnid=7)
    (component,) = request.component
    assert component.operationType == idl.hive.DataOperationType.SELECT
    assert component.type == idl.hive.LockType.SHARED_READ and component.level == idl.hive.LockLevel.TABLE
    assert (component.dbname, component.tablename, request.txnid) == ("fed_bench", "events", 7)
    assert bench_txn._lock_request("bench", "events").txnid is None


def test_make_row_takes_medians_and_per_run_ratios_and_the_floor_only_when_measured():
    runs = {
        ("c", 1, "direct"): [_run("direct", "c", 1, 10.0, 100), _run("direct", "c", 1, 12.0, 80)],
        ("c", 1, "proxy"): [_run("proxy", "c", 1, 11.0, 90), _run("proxy", "c", 1, 12.0, 80)],
    }
    row = make_row("c", 1, runs, "m direct", "m proxy")
    assert row.direct["p50_ms"] == 11.0 and row.proxy["calls"] == 200
    assert row.p50_ratio == 1.05  # per run 1.1 and 1.0
    assert row.floor is None and (row.direct_method, row.proxy_method) == ("m direct", "m proxy")
    runs[("c", 1, "floor")] = [_run("floor", "c", 1, 10.0, 100), _run("floor", "c", 1, 12.0, 80)]
    assert make_row("c", 1, runs).floor_p50_ratio == 1.0


def test_report_shows_p50_at_one_client_and_throughput_at_n_and_why_a_case_was_not_measured():
    cases = bench_txn.cases(DB, TABLE)
    skipped = {cases[1].name: "NoSuchLockException: No such lock lockid:2"}
    runs = {}
    for case in cases:
        for n in (1, 16):
            runs[(case.name, n, "direct")] = [_run("direct", case.name, n, 10.0, 400)]
            runs[(case.name, n, "proxy")] = [_run("proxy", case.name, n, 11.5, 340)]
    rows = [make_row(c.name, n, runs) for n in (1, 16) for c in cases if c.name not in skipped]
    lines = bench_txn.render(cases, rows, 16, skipped, 1.0)
    assert "1 client: direct p50" in lines[1] and "16 clients: direct/s" in lines[1]
    assert lines[2].split() == ["lock+check_lock+unlock", "primary", "bench.events", "|"] + ["10.00ms", "11.50ms", "1.15x", "|"] + [
        "400",
        "340",
        "0.85x",
    ]
    assert lines[3].startswith("lock+check_lock+unlock     fed        bench.events / fed_bench.events")
    assert lines[3].endswith("not measured: fails through the proxy: NoSuchLockException: No such lock lockid:2")
    assert lines[4].split()[:4] == ["open_txns+commit_txn", "primary", "-", "|"]
    assert len(lines) == 2 + len(cases)


def test_a_run_in_which_a_path_made_no_call_gives_no_ratio_instead_of_failing_the_report():
    # At 16 clients a lock can outlast a time slice on a loaded machine: a path may then start no call in a run.
    raw = {"latencies": [[], [0.5, 0.7]], "window_s": 4.0, "client_cpu_s": 1.0, "before": {}, "after": {}, "slice_s": 1.0}
    direct, proxied = summarize("direct", "c", 16, 0, raw), summarize("proxy", "c", 16, 1, raw)
    assert direct.calls == 0 and direct.throughput == 0.0 and proxied.throughput == 1.0
    p50, throughput = ratios([direct], [proxied])
    assert math.isnan(p50) and math.isnan(throughput)


def test_a_case_whose_calls_outlast_a_third_of_a_slice_is_marked_coarse():
    case = bench_txn.cases(DB, TABLE, federated=False)[0]
    runs = {
        (case.name, n, path): [_run(path, case.name, n, p50, 20)] for n, p50 in ((1, 20.0), (16, 400.0)) for path in ("direct", "proxy")
    }
    rows = [make_row(case.name, n, runs) for n in (1, 16)]
    assert not any("*" in line for line in bench_txn.render([case], rows, 16, {}, 1.5))  # 400 ms < 500 ms
    lines = bench_txn.render([case], rows, 16, {}, 1.0)
    assert lines[2].endswith("1.00x *") and lines[3].startswith("* p50 at 16 clients above a third of the 1 s time slice")


def test_load_note_only_when_other_processes_took_more_than_a_quarter_core():
    quiet = {("c", 1, "direct"): [_run("direct", "c", 1, 10.0, 100)]}
    assert load_note(quiet, 2) is None
    busy = {**quiet, ("c", 1, "proxy"): [dataclasses.replace(_run("proxy", "c", 1, 10.0, 100), foreign_cores=1.5)]}
    assert (
        load_note(busy, 2)
        == "note: other processes used up to 1.50 of 2 cores during some runs (median 0.75); figures from a busy machine are noisy"
    )

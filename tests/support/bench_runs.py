"""RunStats of the benchmark (tests/bench/bench_proxy.py) as one run would give them, for the report's tests."""

from __future__ import annotations

from tests.bench.bench_proxy import RunStats


def run_stats(path: str, call: str, clients: int, p50_ms: float, throughput: float, *, proxy_cpu_ms: float | None = None) -> RunStats:
    """A run's stats of one path: 100 calls in a second, p99 twice the p50, JVM 4 ms and client 0.3 ms of CPU a call."""
    return RunStats(
        path=path,
        call=call,
        clients=clients,
        calls=100,
        path_time_s=1.0,
        p50_ms=p50_ms,
        p99_ms=p50_ms * 2,
        mean_ms=p50_ms,
        throughput=throughput,
        jvm_cpu_ms_per_call=4.0,
        proxy_cpu_ms_per_call=proxy_cpu_ms,
        client_cpu_ms_per_call=0.3,
        foreign_cores=0.0,
    )

"""The soak run's verdict (tests/bench/soak_trend.py): flat runs pass, each kind of growth is named."""

from __future__ import annotations

from dataclasses import replace

from tests.bench.soak_trend import MIB, Bounds, Sample, problems

BOUNDS = Bounds(warmup_s=60)


def run(count: int = 60, **change) -> list[Sample]:
    """`count` samples 10 s apart of a steady proxy; `change` maps a field to f(index) -> value."""
    base = Sample(0, 80 * MIB, 30, 20, 500, 2.0, 8.0, 0, False)
    return [replace(base, at_s=10.0 * (i + 1), **{k: f(i) for k, f in change.items()}) for i in range(count)]


def test_a_steady_run_is_flat():
    assert problems(run(), BOUNDS) == []


def test_noise_within_the_bounds_is_flat():
    assert problems(run(rss_bytes=lambda i: 80 * MIB + (i % 3) * MIB, fds=lambda i: 30 + i % 5), BOUNDS) == []


def test_memory_that_keeps_growing_is_named():
    (found,) = problems(run(rss_bytes=lambda i: 80 * MIB + i * MIB), BOUNDS)
    assert found.startswith("resident memory grew")


def test_leaked_descriptors_and_threads_are_named():
    found = problems(run(fds=lambda i: 30 + i, threads=lambda i: 20 + i), BOUNDS)
    assert [f.split()[0] for f in found] == ["fds", "threads"]


def test_latency_that_rises_is_named_but_a_restart_window_is_not_counted():
    rising = run(p99_ms=lambda i: 8.0 if i < 40 else 90.0)
    assert problems(rising, BOUNDS) == ["readers' p99 rose from 8.0 ms to 90.0 ms"]
    settling = run(p99_ms=lambda i: 8.0 if i < 40 else 90.0, settling=lambda i: i >= 40)
    assert problems(settling, BOUNDS) == []


def test_a_run_whose_calls_stop_is_not_flat():
    assert problems(run(calls=lambda i: 0 if i >= 40 else 500), BOUNDS) == ["no call finished in the last third of the run"]


def test_too_short_a_run_cannot_be_judged():
    (found,) = problems(run(count=5), BOUNDS)
    assert "too few samples" in found

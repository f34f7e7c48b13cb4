"""What a soak run samples every few seconds, the bounds that call it flat, and its plot.

A run is flat when, after the warm-up, the last third of the samples stays within a stated
distance of the first third: memory, file descriptors, threads and the readers' p99 (samples
taken while a metastore restart is settling are left out of the latency comparison, not of the
others). The bounds are absolute floors plus a share of the baseline, so a 5-minute run and an
hour's run are judged by the same rule.
"""

from __future__ import annotations

import csv
import statistics
from dataclasses import asdict, dataclass, fields
from pathlib import Path

MIB = 1024 * 1024


@dataclass(frozen=True)
class Sample:
    at_s: float  # seconds since the load started
    rss_bytes: int  # the proxy process's resident memory
    fds: int  # its open file descriptors
    threads: int
    calls: int  # client calls finished since the previous sample
    p50_ms: float  # of the readers' calls since the previous sample
    p99_ms: float
    errors: int  # calls failed since the previous sample (any cause)
    settling: bool  # a metastore restart happened in or just before this window


@dataclass(frozen=True)
class Bounds:
    warmup_s: float = 60.0
    rss_growth_bytes: int = 24 * MIB
    rss_growth_share: float = 0.10
    fd_growth: int = 8
    thread_growth: int = 4
    p99_ratio: float = 2.0
    p99_slack_ms: float = 20.0  # a few ms of p99 doubles on one GC pause: judge a trend, not noise

    def describe(self) -> str:
        return (
            f"after a {self.warmup_s:g} s warm-up, the last third against the first: RSS up at most "
            f"max({self.rss_growth_bytes // MIB} MiB, {self.rss_growth_share:.0%}), fds +{self.fd_growth}, "
            f"threads +{self.thread_growth}, readers' p99 at most {self.p99_ratio:g}x + {self.p99_slack_ms:g} ms"
        )


def thirds(samples: list[Sample], warmup_s: float) -> tuple[list[Sample], list[Sample]]:
    """The first and last thirds of the samples after the warm-up (empty when too few)."""
    steady = [s for s in samples if s.at_s >= warmup_s]
    third = len(steady) // 3
    return (steady[:third], steady[-third:]) if third else ([], [])


def problems(samples: list[Sample], bounds: Bounds) -> list[str]:
    """Every way the run is not flat within `bounds` (an empty list: flat)."""
    first, last = thirds(samples, bounds.warmup_s)
    if not first:
        return [f"too few samples after the {bounds.warmup_s:g} s warm-up to judge a trend ({len(samples)} in all)"]
    found = []
    base_rss = statistics.median(s.rss_bytes for s in first)
    rss_limit = max(bounds.rss_growth_bytes, bounds.rss_growth_share * base_rss)
    rss_growth = max(s.rss_bytes for s in last) - base_rss
    if rss_growth > rss_limit:
        found.append(f"resident memory grew {rss_growth / MIB:.1f} MiB (limit {rss_limit / MIB:.1f} MiB over {base_rss / MIB:.1f} MiB)")
    for name, growth in (("fds", bounds.fd_growth), ("threads", bounds.thread_growth)):
        before, after = max(getattr(s, name) for s in first), max(getattr(s, name) for s in last)
        if after > before + growth:
            found.append(f"{name} grew from at most {before} to {after} (limit +{growth})")
    quiet_first = [s.p99_ms for s in first if not s.settling and s.calls]
    quiet_last = [s.p99_ms for s in last if not s.settling and s.calls]
    if quiet_first and quiet_last:
        before, after = statistics.median(quiet_first), statistics.median(quiet_last)
        if after > bounds.p99_ratio * before + bounds.p99_slack_ms:
            found.append(f"readers' p99 rose from {before:.1f} ms to {after:.1f} ms")
    if not any(s.calls for s in last):
        found.append("no call finished in the last third of the run")
    return found


def write_csv(samples: list[Sample], path: Path) -> None:
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=[f.name for f in fields(Sample)])
        writer.writeheader()
        writer.writerows(asdict(s) for s in samples)


def plot(samples: list[Sample], restarts_s: list[float], path: Path, title: str) -> None:
    """Four panels over minutes (RSS, fds and threads, p50/p99, calls and errors), restarts as lines."""
    import matplotlib

    matplotlib.use("Agg")  # no display here
    import matplotlib.pyplot as plt

    minutes = [s.at_s / 60 for s in samples]
    figure, axes = plt.subplots(4, 1, sharex=True, figsize=(9, 10))
    panels = (
        ("resident memory (MiB)", {"RSS": [s.rss_bytes / MIB for s in samples]}),
        ("open", {"file descriptors": [s.fds for s in samples], "threads": [s.threads for s in samples]}),
        ("readers' latency (ms)", {"p50": [s.p50_ms for s in samples], "p99": [s.p99_ms for s in samples]}),
        ("per sample", {"calls": [s.calls for s in samples], "errors": [s.errors for s in samples]}),
    )
    for axis, (label, series) in zip(axes, panels):
        for name, values in series.items():
            axis.plot(minutes, values, label=name)
        for at in restarts_s:
            axis.axvline(at / 60, color="grey", linestyle="--", linewidth=0.8)
        axis.set_ylabel(label)
        axis.legend(loc="upper left", fontsize="small")
    axes[-1].set_xlabel("minutes (dashed: metastore restarted)")
    figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(path, dpi=80)
    plt.close(figure)

"""A soak run: `hmsproxy serve` in front of a real Hive 2.3 metastore under mixed load for a set
time, with its memory, file descriptors, threads and the readers' latency sampled and judged flat.

    python -m tests.bench.soak --minutes 60 --out .state/soak      # make soak (MINUTES=60)

The load (tests/bench/soak_load.py): four readers, a DDL writer, a transaction client and a
streaming writer through the proxy; the metastore is restarted half-way (every 20 minutes in
runs of 40 minutes or more). Calls failing while a restart settles are expected and counted;
any other failure, a streamed row lost or written twice, or a trend beyond the bounds
(soak_trend.Bounds) fails the run. Its directory keeps samples.csv, soak.png and summary.txt.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

from tests.bench.soak_load import DB, TABLE, DdlWriter, Reader, Streamer, Tally, TxnClient
from tests.bench.soak_trend import Bounds, Sample, plot, problems, write_csv

#: Seconds after a restart ends during which failed calls and slow reads are the restart's.
SETTLE_S = 20.0


@dataclass
class Report:
    out: Path
    samples: list[Sample]
    restarts_s: list[float]
    expected_errors: int
    unexpected_errors: list[str]
    streamed_rows: int
    visible_rows: int
    duplicate_rows: int
    bounds: Bounds
    trend_problems: list[str] = field(default_factory=list)

    @property
    def problems(self) -> list[str]:
        found = list(self.trend_problems)
        if self.unexpected_errors:
            found.append(f"{len(self.unexpected_errors)} calls failed outside a restart, first: {self.unexpected_errors[0]}")
        if self.visible_rows != self.streamed_rows or self.duplicate_rows:
            found.append(
                f"streamed rows: {self.streamed_rows} acknowledged, {self.visible_rows} visible, {self.duplicate_rows} written twice"
            )
        return found

    def summary(self) -> str:
        steady = [s for s in self.samples if s.at_s >= self.bounds.warmup_s] or self.samples
        rss = [s.rss_bytes / 2**20 for s in steady]
        quiet_p99 = [s.p99_ms for s in steady if not s.settling and s.calls]
        lines = [
            f"soak: {self.samples[-1].at_s / 60:.1f} min, {len(self.samples)} samples, metastore restarts at "
            + (", ".join(f"{r / 60:.1f}" for r in self.restarts_s) or "none")
            + " min",
            f"calls: {sum(s.calls for s in self.samples)}; failed during restarts: {self.expected_errors}; "
            f"failed otherwise: {len(self.unexpected_errors)}",
            f"proxy RSS {min(rss):.1f}-{max(rss):.1f} MiB; fds {min(s.fds for s in steady)}-{max(s.fds for s in steady)}; "
            f"threads {min(s.threads for s in steady)}-{max(s.threads for s in steady)}",
            f"readers' p99 outside restarts: median {statistics.median(quiet_p99) if quiet_p99 else float('nan'):.1f} ms, "
            f"max {max(quiet_p99, default=float('nan')):.1f} ms",
            f"streamed rows: {self.streamed_rows} acknowledged, {self.visible_rows} visible, {self.duplicate_rows} written twice",
            f"bounds: {self.bounds.describe()}",
            "verdict: " + ("flat" if not self.problems else "NOT flat: " + "; ".join(self.problems)),
        ]
        return "\n".join(lines) + "\n"


def proc_stats(pid: int) -> tuple[int, int, int]:
    """(resident bytes, open fds, threads) of a process, from /proc."""
    status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    rss = int(status["VmRSS"].split()[0]) * 1024
    return rss, len(list(Path(f"/proc/{pid}/fd").iterdir())), int(status["Threads"])


def restart_times(minutes: float) -> list[float]:
    """When (seconds into the load) the metastore is restarted: half-way, or every 20 minutes in long runs."""
    if minutes >= 40:
        return [60.0 * m for m in range(20, int(minutes), 20)]
    return [30.0 * minutes]


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0


def _stored_rows(metastore) -> tuple[int, int]:
    """(rows, ids seen twice) in soak.events' visible Parquet files."""
    import pyarrow.parquet as pq

    with contextlib.closing(metastore.client()) as client:
        locations = [p.sd.location for p in client.get_partitions(DB, TABLE, -1)]
    ids: list[int] = []
    for location in locations:
        root = Path(urlparse(location).path)
        for f in root.iterdir() if root.is_dir() else ():
            if f.is_file() and not f.name.startswith(("_", ".")):
                ids.extend(pq.read_table(f, columns=["id"]).column("id").to_pylist())
    return len(ids), len(ids) - len(set(ids))


def _prepare(metastore, warehouse: Path) -> None:
    from hmsproxy.protocol import idl
    from hmsproxy.testing.builders import parquet_table

    with contextlib.closing(metastore.client()) as client:
        client.create_database(idl.hive.Database(name=DB, locationUri=(warehouse / f"{DB}.db").as_uri(), parameters={}))
        columns, keys = (("id", "int"), ("msg", "string")), (("ds", "string"),)
        client.create_table(parquet_table(DB, TABLE, (warehouse / f"{DB}.db" / TABLE).as_uri(), columns=columns, partition_keys=keys))


def run_soak(
    metastore, out: Path, minutes: float, *, sample_s: float = 10.0, bounds: Bounds | None = None, log: Callable[[str], None] = print
) -> Report:
    """Soak `metastore` (a started LocalMetastore this run may restart) behind a new `hmsproxy serve`."""
    from hmsproxy.dev.ports import free_port
    from tests.bench.bench_proxy import ProxyProcess, write_proxy_config

    bounds = bounds or Bounds(warmup_s=min(60.0, 12 * sample_s))
    out.mkdir(parents=True, exist_ok=True)
    warehouse = out / "warehouse"
    _prepare(metastore, warehouse)
    port = free_port()
    write_proxy_config(out / "proxy.yml", port, metastore.uri, store_url=f"sqlite:///{out}/store.db")
    proxy = ProxyProcess(out / "proxy.yml", out / "proxy.log")
    stop, tally = threading.Event(), Tally()
    restarts: list[list] = []  # [start, end or None while under way], monotonic
    try:
        proxy.wait_ready("127.0.0.1", port)
        began = time.monotonic()
        since = lambda: time.monotonic() - began  # noqa: E731 - the clock every part shares
        workers = [Reader(f"reader{i}", port, tally, stop) for i in range(4)]
        workers += [DdlWriter("ddl", port, tally, stop, warehouse=(warehouse / "ddl").as_uri()), TxnClient("txn", port, tally, stop)]
        workers.append(Streamer(f"thrift://127.0.0.1:{port}", tally, stop, since))
        for w in workers:
            w.start()
        restarter = threading.Thread(target=_restarts, args=(metastore, restart_times(minutes), since, stop, restarts, log), daemon=True)
        restarter.start()
        samples = _sample(proxy.pid, tally, minutes * 60, sample_s, since, stop, restarts, log)
        stop.set()
        for w in [*workers, restarter]:
            w.join(timeout=120)
        streamed = tally.streamed_rows
    finally:
        stop.set()
        proxy.stop()
    visible, twice = _stored_rows(metastore)
    settling = [(a, (b or time.monotonic()) + SETTLE_S) for a, b in restarts]
    errors = tally.take()[2]
    expected = [e for e in errors if any(a <= e[0] <= b for a, b in settling)]
    report = Report(
        out=out,
        samples=samples,
        restarts_s=[a - began for a, _ in restarts],
        expected_errors=len(expected),
        unexpected_errors=[what for at, what in errors if not any(a <= at <= b for a, b in settling)],
        streamed_rows=streamed,
        visible_rows=visible,
        duplicate_rows=twice,
        bounds=bounds,
        trend_problems=problems(samples, bounds),
    )
    write_csv(samples, out / "samples.csv")
    plot(samples, report.restarts_s, out / "soak.png", f"hmsproxy soak: {minutes:g} min of mixed load")
    (out / "summary.txt").write_text(report.summary())
    return report


def _restarts(metastore, at_s: list[float], since, stop: threading.Event, restarts: list, log) -> None:
    for at in at_s:
        if stop.wait(max(0.0, at - since())):
            return
        log(f"soak: restarting metastore {metastore.name} at {since() / 60:.1f} min")
        span = [time.monotonic(), None]  # the sampler sees a restart under way as settling
        restarts.append(span)
        metastore.restart()
        span[1] = time.monotonic()


def _sample(pid: int, tally: Tally, duration_s: float, every_s: float, since, stop, restarts: list, log) -> list[Sample]:
    samples: list[Sample] = []
    errors_seen: list[tuple[float, str]] = []
    while since() < duration_s and not stop.wait(every_s):
        now = time.monotonic()
        read_ms, calls, errors = tally.take()
        errors_seen.extend(errors)
        rss, fds, threads = proc_stats(pid)
        settling = any(a - every_s <= now and (b is None or now - every_s <= b + SETTLE_S) for a, b in restarts)
        samples.append(
            Sample(since(), rss, fds, threads, calls, _percentile(read_ms, 0.5), _percentile(read_ms, 0.99), len(errors), settling)
        )
        if len(samples) % 6 == 0:
            s = samples[-1]
            log(f"soak: {s.at_s / 60:.1f} min, RSS {s.rss_bytes / 2**20:.0f} MiB, fds {s.fds}, threads {s.threads}, p99 {s.p99_ms:.1f} ms")
    with tally.lock:  # give the errors back: the run sorts them by restart windows at the end
        tally.errors[:0] = errors_seen
    return samples


def main(argv: list[str] | None = None) -> int:
    from hmsproxy.dev.metastore import start_metastores

    parser = argparse.ArgumentParser(prog="make soak", description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--sample-s", type=float, default=10.0)
    parser.add_argument("--out", type=Path, default=Path(".state/soak") / time.strftime("%Y%m%d-%H%M%S"))
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    (metastore,) = start_metastores(1, args.out / "metastore", names=["soak"], log=print)
    try:
        report = run_soak(metastore, args.out, args.minutes, sample_s=args.sample_s)
    finally:
        metastore.stop()
    print(report.summary(), end="")
    print(f"samples, plot and summary in {args.out}")
    return 1 if report.problems else 0


if __name__ == "__main__":
    sys.exit(main())

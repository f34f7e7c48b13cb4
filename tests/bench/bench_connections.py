"""`make bench-connections`: many idle connections beside a few busy clients, hmsproxy and Waggle Dance.

One Hive 2.3 metastore (default JVM flags, WARN logging, handler threads raised so it can hold every
idle client's backend connection), `hmsproxy serve` and Waggle Dance 3.13.3 in front of it. For each
path: REPEATS busy runs (BUSY client processes loop get_table for SECONDS: tests/bench/bench_proxy.ClientPool);
then IDLE connections are opened from this process (set_ugi and get_database each, as a Hive client
starts, then nothing) and held through REPEATS more; then they are closed and REPEATS more follow.
Reported: the busy clients' p50 and throughput without (median of the runs before and after) and with
the idle ones, the serving process's resident memory per idle connection (RSS growth / IDLE), its
threads and file descriptors, and the metastore's threads (each idle client keeps a connection to it,
through either
proxy, until hmsproxy's server.upstream-idle-s closes them). Then, still holding the idle clients, it
waits --quiet-wait seconds (past --upstream-idle-s, which the proxy is given, and the metastore's
60 s keep-alive for idle worker threads) and counts the metastore's connections (TCP, from the
kernel's table) and threads again. Target: p50 and throughput with the idle connections within 1.1x
of the run without. A path that cannot hold IDLE (Waggle Dance: one worker thread per client, 1,000
by default) is measured with those it held when the first failed to open; the report says so.

    make bench-connections ARGS="--idle 300 --seconds 3 --repeats 1"   # a smoke run
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from tests.bench.bench_proxy import DB, ClientPool, ProxyProcess, log, make_client, percentile, seed, write_proxy_config
from tests.support.tcp_connections import established_to

#: p50 and throughput with the idle connections may differ from the run without by this factor.
TARGET_RATIO = 1.1


@dataclass
class Sample:
    """What /proc says of one process."""

    rss_kib: int
    threads: int
    fds: int


def sample(pid: int) -> Sample:
    status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return Sample(int(status["VmRSS"].split()[0]), int(status["Threads"]), len(os.listdir(f"/proc/{pid}/fd")))


@dataclass
class Busy:
    p50_ms: float
    throughput: float


def busy_run(pool: ClientPool, endpoint: tuple[str, int], clients: int, seconds: float) -> Busy:
    raw = pool.run([endpoint], "get_table", clients, seconds, warmup_calls=20)
    lat = sorted(raw["latencies"][0])
    return Busy(percentile(lat, 0.5) * 1000, len(lat) / raw["window_s"])


def open_idle(endpoint: tuple[str, int], count: int, parallel: int = 4) -> tuple[list, str | None]:
    """Up to `count` connections that each start as a Hive client does (set_ugi, get_database), then
    idle; opened `parallel` at a time (each costs the metastore a new connection's set-up). The first
    that fails stops the opening: (the connections held, that failure), or (all `count`, None). Waggle
    Dance's Thrift server holds a new client past its worker pool ~20 s before closing it, so trying
    every one of the rest would take hours."""
    held: list = []
    failure: list[str] = []

    def one(_) -> None:
        if failure:
            return
        client = make_client(*endpoint, timeout_s=120)
        try:
            client.set_ugi("idle", [])
            if client.get_database(DB).name != DB:
                raise RuntimeError(f"{endpoint}: get_database({DB}) answered another database")
        except Exception as e:
            client.close()
            failure.append(f"connection {len(held) + 1}: {type(e).__name__}: {e}")
            return
        held.append(client)

    try:
        with ThreadPoolExecutor(parallel) as pool:
            list(pool.map(one, range(count)))
    except BaseException:
        close_all(held)
        raise
    return held, (failure[0] if failure else None)


def close_all(clients: list) -> None:
    for client in clients:
        client.close()


def settled(pid: int, threads: int, timeout_s: float = 30) -> Sample:
    """The process's sample once its thread count is back to `threads` (or timeout_s has passed)."""
    deadline = time.monotonic() + timeout_s
    now = sample(pid)
    while now.threads > threads and time.monotonic() < deadline:
        time.sleep(0.2)
        now = sample(pid)
    return now


@dataclass
class PathFigures:
    name: str
    without: list[Busy]
    with_idle: list[Busy]
    before: Sample
    idle: Sample
    after: Sample
    metastore_threads: tuple[int, int, int | None]  # before the idle connections, with them, after --quiet-wait
    metastore_conns: tuple[int, int | None]  # with the idle connections, after --quiet-wait
    open_s: float  # opening (and first calls of) the idle connections
    held: int  # idle connections held: fewer than asked when one failed to open
    open_failure: str | None

    def median(self, runs: list[Busy], key: str) -> float:
        return statistics.median(getattr(r, key) for r in runs)

    @property
    def p50_ratio(self) -> float:
        return self.median(self.with_idle, "p50_ms") / self.median(self.without, "p50_ms")

    @property
    def throughput_ratio(self) -> float:
        with_idle = self.median(self.with_idle, "throughput")
        return self.median(self.without, "throughput") / with_idle if with_idle else math.inf


def guarded(runs, failure: str) -> list[Busy]:
    """runs(), or one failed run (no calls) when a client process failed: seen with Waggle Dance
    beside 1,000 idle connections (its 1,000 worker threads all held, new clients closed)."""
    try:
        return runs()
    except RuntimeError as e:
        log(f"{failure}: {str(e).strip().splitlines()[-1]}")
        return [Busy(math.nan, 0.0)]


def measure(name: str, endpoint, pid: int, metastore: tuple[int, int], pool: ClientPool, args) -> PathFigures:
    """REPEATS busy runs without the idle connections, REPEATS with them, REPEATS without again (the
    idle ones are opened once: a Hive 2.3 metastore sets up each new connection's first call slowly)."""

    def runs() -> list[Busy]:
        return [busy_run(pool, endpoint, args.busy, args.seconds) for _ in range(args.repeats)]

    jvm_pid, metastore_port = metastore
    without = runs()
    before = sample(pid)
    jvm_before = sample(jvm_pid).threads
    t0 = time.monotonic()
    idle, open_failure = open_idle(endpoint, args.idle)
    open_s = time.monotonic() - t0
    if open_failure:
        log(f"{name}: held {len(idle)} of {args.idle} idle connections; the next failed: {open_failure[:300]}")
    try:
        time.sleep(1)  # let the last threads settle before /proc is read
        idle_sample = sample(pid)
        jvm_idle, conns_idle = sample(jvm_pid).threads, established_to(metastore_port)
        with_idle = guarded(runs, f"{name}: the busy clients failed beside {len(idle)} idle connections")
        jvm_quiet = conns_quiet = None
        if args.quiet_wait > 0:
            log(f"{name}: {len(idle)} idle clients held {args.quiet_wait:g} s more ...")
            time.sleep(args.quiet_wait)
            jvm_quiet, conns_quiet = sample(jvm_pid).threads, established_to(metastore_port)
    finally:
        close_all(idle)
    jvm_threads, metastore_conns = (jvm_before, jvm_idle, jvm_quiet), (conns_idle, conns_quiet)
    after = settled(pid, before.threads)
    without += guarded(runs, f"{name}: the busy clients failed after the idle connections closed")
    log(
        f"{name}: p50 {statistics.median(r.p50_ms for r in without):.2f} -> {statistics.median(r.p50_ms for r in with_idle):.2f} ms, "
        f"{statistics.median(r.throughput for r in without):.0f} -> {statistics.median(r.throughput for r in with_idle):.0f} calls/s, "
        f"threads {before.threads} -> {idle_sample.threads} -> {after.threads}; "
        f"RSS {before.rss_kib // 1024} -> {idle_sample.rss_kib // 1024} MiB"
    )
    return PathFigures(name, without, with_idle, before, idle_sample, after, jvm_threads, metastore_conns, open_s, len(idle), open_failure)


def report(figures: list[PathFigures], args) -> list[str]:
    lines = [
        f"{args.idle} idle connections beside {args.busy} busy get_table clients ({args.seconds:g} s runs; median of {2 * args.repeats} without, {args.repeats} with):",
        "",
        "| path | idle held | busy p50 without → with idle | busy calls/s without → with idle | RSS per idle connection "
        "| threads (before / idle / after) | fds (before / idle / after) | metastore threads (before / idle / quiet) "
        "| metastore connections (idle / quiet) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for f in figures:
        per_conn = (f.idle.rss_kib - f.before.rss_kib) / f.held if f.held else math.nan
        lines.append(
            f"| {f.name} | {f.held} | {f.median(f.without, 'p50_ms'):.2f} → {f.median(f.with_idle, 'p50_ms'):.2f} ms ({f.p50_ratio:.2f}×) "
            f"| {f.median(f.without, 'throughput'):.0f} → {f.median(f.with_idle, 'throughput'):.0f} (÷{f.throughput_ratio:.2f}) "
            f"| {per_conn:.0f} KiB | {f.before.threads} / {f.idle.threads} / {f.after.threads} "
            f"| {f.before.fds} / {f.idle.fds} / {f.after.fds} | {' / '.join(str(n) for n in f.metastore_threads if n is not None)} "
            f"| {' / '.join(str(n) for n in f.metastore_conns if n is not None)} |"
        )
    lines.append("")
    for f in figures:
        for what, ratio in (("p50", f.p50_ratio), ("throughput", f.throughput_ratio)):
            verdict = "PASS" if ratio <= TARGET_RATIO else "MISS"  # a failed run's ratio is nan or inf: MISS
            lines.append(f"{verdict}  {f.name}: busy {what} with {f.held} idle within {TARGET_RATIO}× of without: {ratio:.2f}×")
        lines.append(f"      {f.name}: {f.held} idle connections opened (set_ugi, get_database) in {f.open_s:.1f} s")
        if f.open_failure:
            lines.append(f"MISS  {f.name}: held {f.held} of {args.idle} idle connections; the next failed: {f.open_failure[:200]}")
    return lines


def raise_fd_limit(needed: int) -> None:
    """The soft limit up to the hard one: this process holds every idle client; its children inherit it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < needed:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(needed, hard), hard))
    if min(needed, hard) < needed:
        raise SystemExit(f"bench-connections: needs {needed} file descriptors; the hard limit is {hard} (ulimit -Hn)")


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="bench_connections", description=__doc__.splitlines()[0])
    p.add_argument("--idle", type=int, default=2000, help="idle connections held open (default 2000)")
    p.add_argument("--busy", type=int, default=16, help="busy client processes (default 16)")
    p.add_argument("--seconds", type=float, default=10.0, help="length of each busy run (default 10)")
    p.add_argument("--repeats", type=int, default=3, help="busy runs before, with and after the idle connections, per path (default 3)")
    p.add_argument("--no-waggle-dance", action="store_true", help="measure hmsproxy only")
    p.add_argument("--upstream-idle-s", type=float, default=10.0, help="hmsproxy's server.upstream-idle-s (default 10; 0: never)")
    p.add_argument(
        "--quiet-wait",
        type=float,
        default=75.0,
        help="seconds the idle clients are held after the busy runs before the metastore is counted again (default 75; 0: not)",
    )
    return p.parse_args(argv)


def main(argv=None) -> int:
    from hmsproxy.dev.metastore import start_metastores
    from hmsproxy.dev.ports import free_port

    args = parse_args(argv)
    raise_fd_limit(4 * args.idle + 1024)
    tmp = Path(tempfile.mkdtemp(prefix="hmsproxy-bench-connections-"))
    metastore = proxy = wd = pool = None
    try:
        log(f"starting a Hive 2.3 metastore (state in {tmp}) ...")
        (metastore,) = start_metastores(
            1,
            tmp / "hms",
            log=lambda m: None,
            timeout_s=600,  # a cold start (Derby schema) on a loaded 2-core machine took over 180 s
            fast_start=False,
            log_level="WARN",
            notifications=False,
            # One handler thread per client connection; the default 1000 would queue the idle ones' backend connections.
            hive_conf={"hive.metastore.server.max.threads": str(args.idle + 500)},
            # Each connection's handler keeps its own ObjectStore: the default 512 MiB ran out at ~920 connections.
            heap=f"{512 + args.idle * 3 // 2}m",
        )
        seed(metastore, 10)
        pool = ClientPool(args.busy)
        port = free_port()
        write_proxy_config(tmp / "hmsproxy.yml", port, metastore.uri)
        # A metastore busy setting up hundreds of new connections answers a probe slowly: the breaker
        # (probe-after-s 3) is not what is measured here.
        config = tmp / "hmsproxy.yml"
        server_extra = f"  probe-after-s: 120\n  upstream-idle-s: {args.upstream_idle_s:g}\n"
        config.write_text(config.read_text().replace("  transport: buffered\n", "  transport: buffered\n" + server_extra))
        proxy = ProxyProcess(tmp / "hmsproxy.yml", tmp / "hmsproxy.log")
        proxy.wait_ready("127.0.0.1", port)
        log(f"{proxy.banner} (pid {proxy.pid})")
        paths = [("hmsproxy", ("127.0.0.1", port), proxy.pid)]
        if not args.no_waggle_dance:
            from tests.bench import bench_waggle_dance

            wd, wd_port = bench_waggle_dance.start(tmp, metastore.uri, log)
            paths.append((f"Waggle Dance {bench_waggle_dance.waggle_dance.VERSION}", ("127.0.0.1", wd_port), wd.pid))
        metastore_side = (metastore.pid, int(metastore.uri.rsplit(":", 1)[1]))
        figures = [measure(name, endpoint, pid, metastore_side, pool, args) for name, endpoint, pid in paths]
        out = "\n".join(report(figures, args))
        print(out)
        (tmp / "report.md").write_text(out + "\n", encoding="utf-8")
        log(f"report in {tmp / 'report.md'}")
        return 0
    finally:
        if pool is not None:
            pool.close()
        for process in (wd, proxy, metastore):
            if process is not None:
                process.stop()


if __name__ == "__main__":
    sys.exit(main())

"""Hedged reads on an HA pair (`make bench-hedge`): get_table p50/p99 through hmsproxy with hedging
off and on, both instances answering and with one instance stalled at a time.

The pair: two real Hive 2.3 metastores over one self-started PostgreSQL database
(tests/support/ha_pair.py), both URIs in the proxies' `remote-meta-store-uris`. Three
`hmsproxy serve` processes in front of it, each with its own config:

- `relayed`: no `hedge:` (today's default: reads relayed undecoded to the client);
- `full path`: no `hedge:`, `server.relay: false` (what declining the relay alone costs);
- `hedged`: `hedge: {}` with its defaults (p95 of recent reads, 50 ms .. 2000 ms).

Each run is one client (a new connection, so a new proxy session: it connects to the first
URI) calling get_table back to back for `--duration` seconds. Scenarios:

- `quiet`: both instances answer; the cost of hedging where nothing is slow;
- `stalls`: every `--period` seconds one instance is SIGSTOPped for `--stall` seconds, the two
  instances in turn (never both), so whichever one a session's connection uses is stopped
  sooner or later: without hedging a call sent to it waits until its SIGCONT; with hedging it
  also goes to the other instance after the threshold, and the session keeps the instance that
  answered. The stall is shorter than `server.probe-after-s` (3 s), so the breaker never trips.

The paths run in turn, their order rotated per repetition; the report is the median over
repetitions of each run's call count, p50, p99, p99.9, maximum, calls over 500 ms and the proxy
process's CPU time per call (less sensitive to a busy machine than the latencies). A stall
holds up about one call of the client's (it waits), so the share of slow calls is about the
stalls' rate over the call rate: the default period makes it above 1 %, where p99 sees it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import tempfile
import threading
import time
from pathlib import Path

PATHS = ("relayed", "full path", "hedged")


def write_config(path: Path, port: int, uris: str, *, relay: bool, hedge: bool) -> None:
    path.write_text(
        "# written by tests/bench/bench_hedge.py\n"
        "server:\n"
        "  host: 127.0.0.1\n"
        f"  port: {port}\n" + ("" if relay else "  relay: false\n") + "database-resolution: PREFIXED\n"
        "primary-meta-store:\n"
        "  name: primary\n"
        f"  remote-meta-store-uris: {uris}\n"
        "  access-control-type: READ_AND_WRITE_AND_CREATE\n"
        '  hive-version: "2.3"\n' + ("  hedge: {}\n" if hedge else "")
    )


class Stalls:
    """A thread that SIGSTOPs the pair's instances in turn: `stall_s` stopped in every `period_s`."""

    def __init__(self, pids: list[int], period_s: float, stall_s: float):
        self.pids, self.period_s, self.stall_s = pids, period_s, stall_s
        self.count = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="stalls")

    def __enter__(self) -> Stalls:
        self._thread.start()
        return self

    def _run(self) -> None:
        turn = 0
        while not self._stop.wait((self.period_s - self.stall_s) / 2):
            pid = self.pids[turn % len(self.pids)]
            os.killpg(pid, signal.SIGSTOP)
            self.count += 1
            try:
                self._stop.wait(self.stall_s)
            finally:
                os.killpg(pid, signal.SIGCONT)
            turn += 1
            if self._stop.wait((self.period_s - self.stall_s) / 2):
                return

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(30)
        for pid in self.pids:
            os.killpg(pid, signal.SIGCONT)


def run_calls(port: int, duration_s: float) -> list[float]:
    """get_table back to back on a new connection for `duration_s`; each call's seconds."""
    from tests.bench.bench_proxy import make_client

    client = make_client("127.0.0.1", port, timeout_s=120)
    times = []
    try:
        client.get_table("bench", "t")  # connects (and the proxy's session to the pair)
        end = time.monotonic() + duration_s
        while time.monotonic() < end:
            t0 = time.perf_counter()
            client.get_table("bench", "t")
            times.append(time.perf_counter() - t0)
    finally:
        client.close()
    return times


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system) process `pid` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * pct / 100))]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=20.0, help="seconds of calls per run")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--warmup", type=float, default=5.0, help="seconds of calls through each proxy before measuring")
    parser.add_argument("--period", type=float, default=1.5, help="seconds between the starts of two stalls")
    parser.add_argument("--stall", type=float, default=1.0, help="seconds an instance stays SIGSTOPped")
    args = parser.parse_args(argv)
    log = lambda m: print(m, flush=True)  # noqa: E731

    from hmsproxy.dev.ports import free_port
    from hmsproxy.protocol import idl
    from tests.bench.bench_proxy import ProxyProcess
    from tests.support.ha_pair import plain_table, start_ha_pair
    from tests.support.postgres import start_postgres

    tmp = Path(tempfile.mkdtemp(prefix="hmsproxy-bench-hedge-"))
    pg = pair = None
    proxies: dict[str, tuple[ProxyProcess, int]] = {}
    try:
        log("starting PostgreSQL and the HA pair (two Hive 2.3 metastores over one database) ...")
        pg = start_postgres()
        # The JVMs' default compilers, as a production metastore runs (the dev default is C1 only).
        pair = start_ha_pair(pg, tmp / "pair", log=lambda m: None, fast_start=False)
        client = pair.first.client()
        try:
            warehouse = (tmp / "pair" / "warehouse" / "bench.db").as_uri()
            client.create_database(idl.hive.Database(name="bench", locationUri=warehouse, parameters={}))
            client.create_table(plain_table("bench", "t"))
        finally:
            client.close()
        for path in PATHS:
            port = free_port()
            config = tmp / f"{path.replace(' ', '_')}.yml"
            write_config(config, port, pair.uris, relay=path != "full path", hedge=path == "hedged")
            process = ProxyProcess(config, tmp / f"{path.replace(' ', '_')}.log")
            process.wait_ready("127.0.0.1", port)
            proxies[path] = (process, port)
        for _, port in proxies.values():  # warm both JVMs' compilers and each proxy's paths
            run_calls(port, args.warmup)
        pids = [pair.first.pid, pair.second.pid]
        results: dict[tuple[str, str], list[dict]] = {}
        for scenario in ("quiet", "stalls"):
            for rep in range(args.repeats):
                order = PATHS[rep % 3 :] + PATHS[: rep % 3]
                for path in order:
                    cpu_before = cpu_s(proxies[path][0].pid)
                    if scenario == "stalls":
                        with Stalls(pids, args.period, args.stall) as stalls:
                            times = run_calls(proxies[path][1], args.duration)
                        stalled = stalls.count
                    else:
                        times = run_calls(proxies[path][1], args.duration)
                        stalled = 0
                    run = {
                        "calls": len(times),
                        "cpu": (cpu_s(proxies[path][0].pid) - cpu_before) * 1000 / len(times),
                        "p50": percentile(times, 50) * 1000,
                        "p99": percentile(times, 99) * 1000,
                        "p99.9": percentile(times, 99.9) * 1000,
                        "max": max(times) * 1000,
                        "slow": sum(t > 0.5 for t in times),
                        "stalls": stalled,
                    }
                    results.setdefault((scenario, path), []).append(run)
                    log(
                        f"{scenario} rep {rep + 1}/{args.repeats} {path:>9}: {run['calls']} calls, p50 {run['p50']:.2f} ms, "
                        f"p99 {run['p99']:.1f} ms, max {run['max']:.0f} ms, proxy CPU {run['cpu']:.2f} ms/call, {run['slow']} over 500 ms, {stalled} stalls"
                    )
        lines = [
            f"get_table through hmsproxy on an HA pair (2 x Hive 2.3 over one PostgreSQL), 1 client, {args.duration:g} s a run, "
            f"median of {args.repeats} runs; stalls: one instance SIGSTOPped {args.stall:g} s in every {args.period:g} s, in turn",
            f"{'scenario':>8} | {'path':>9} | {'calls':>6} | {'p50 ms':>7} | {'p99 ms':>7} | {'p99.9 ms':>8} | {'max ms':>7} | {'> 500 ms':>8} | {'proxy CPU ms/call':>17}",
        ]
        for (scenario, path), runs in results.items():

            def med(key: str, runs=runs) -> float:
                return statistics.median(r[key] for r in runs)

            lines.append(
                f"{scenario:>8} | {path:>9} | {med('calls'):>6.0f} | {med('p50'):>7.2f} | {med('p99'):>7.1f} | {med('p99.9'):>8.1f} | "
                f"{med('max'):>7.0f} | {med('slow'):>8.0f} | {med('cpu'):>17.2f}"
            )
        print("\n".join(lines))
        return 0
    finally:
        for process, _ in proxies.values():
            process.stop()
        if pair is not None:
            pair.stop()
        if pg is not None:
            pg.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())

"""The proxy's CPU per relayed call, next to the byte forwarder's: the hot path's cost, measured alone.

`make bench ARGS=--floor` shows the same figure among many; this one measures only it, at one
client, and can put two hmsproxy source trees side by side in the same run (`--other NAME=DIR`:
another checkout, e.g. main's, served with its sources first on PYTHONPATH), so a change to the
hot path is compared with what it changes under the same load, call by call:

    .venv/bin/python -m tests.bench.bench_hotpath --other main=/path/to/main-checkout

One Hive 2.3 metastore (bench_proxy's `bench.events`), hmsproxy as `hmsproxy serve` with the
benchmark's config (the relay and its shortcut take both calls), the raw forwarder, and one
client that calls every path in turn, call by call, the order rotating each round. A proxy's CPU
per call is its process's user + system time (/proc) over the calls it served; p50 ratios are to
direct, within each repeat. The machine's other load is printed: compare runs taken alike.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from tests.bench.bench_proxy import (
    DB,
    FILTER,
    TABLE,
    ProxyProcess,
    _busy_cpu_s,
    _proc_cpu_s,
    log,
    make_client,
    print_profile,
    seed,
    write_proxy_config,
)

CALLS = {
    "get_table": lambda c: c.get_table(DB, TABLE),
    "get_partitions_by_filter": lambda c: c.get_partitions_by_filter(DB, TABLE, FILTER, -1),
}


def _threads_cpu_s(pid: int) -> dict[int, float]:
    """utime + stime of each thread of a process, from /proc."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:  # ended meanwhile
            continue
        out[int(tid)] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return out


def _measure(clients: dict, pids: dict, call, calls: int) -> dict:
    """`calls` calls on every path, interleaved; per path: p50 (ms) and CPU ms per call of its process,
    and of the thread that served the calls ("thread": the busiest one; the rest is the process's
    background: watchdogs, the full path's store reads)."""
    names = list(clients)
    latencies: dict[str, list[float]] = {n: [] for n in names}
    cpu0 = {n: _proc_cpu_s(pid) for n, pid in pids.items()}
    threads0 = {n: _threads_cpu_s(pid) for n, pid in pids.items() if n in clients}
    busy0, wall0 = _busy_cpu_s(), time.monotonic()
    for i in range(calls):
        shift = i % len(names)
        for name in names[shift:] + names[:shift]:
            t = time.perf_counter()
            call(clients[name])
            latencies[name].append(time.perf_counter() - t)
    wall = time.monotonic() - wall0
    own = sum(_proc_cpu_s(pid) - cpu0[n] for n, pid in pids.items())
    out = {n: {"p50": statistics.median(v) * 1000} for n, v in latencies.items()}
    for n, pid in pids.items():
        if n in out:
            out[n]["cpu"] = (_proc_cpu_s(pid) - cpu0[n]) * 1000 / calls
            threads = _threads_cpu_s(pid)
            out[n]["thread"] = max(t - threads0[n].get(tid, 0.0) for tid, t in threads.items()) * 1000 / calls
    # Everything but the measured processes (this client, the JVM, the proxies), in cores.
    out["other"] = max(0.0, (_busy_cpu_s() - busy0 - own) / wall)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--calls", type=int, default=1000, help="calls per path and repeat (default 1000)")
    p.add_argument("--repeats", type=int, default=5, help="repeats per call (default 5)")
    p.add_argument("--other", action="append", default=[], metavar="NAME=DIR", help="also serve hmsproxy from source tree DIR")
    p.add_argument("--profile", metavar="FILE", help="run hmsproxy (this tree's) under cProfile and print where its CPU goes")
    args = p.parse_args(argv)
    others = dict(o.split("=", 1) for o in args.other)

    from hmsproxy.dev.metastore import start_metastores
    from hmsproxy.dev.ports import free_port

    tmp = Path(tempfile.mkdtemp(prefix="hmsproxy-hotpath-"))
    metastore, processes = None, []
    try:
        (metastore,) = start_metastores(1, tmp / "hms", log=lambda m: None, timeout_s=90, notifications=False)
        seed(metastore, 200)
        ports = {"direct": metastore.port}
        pids = {"jvm": metastore.pid, "self": os.getpid()}
        paths = {"hmsproxy": None, **{n: str(Path(d).resolve()) for n, d in others.items()}, "floor": None}
        for name, tree in paths.items():
            port = free_port()
            config = tmp / f"{name}.yml"
            write_proxy_config(config, port, metastore.uri)
            env = {**os.environ, "PYTHONPATH": tree} if tree else None
            profile = Path(args.profile).resolve() if args.profile and name == "hmsproxy" else None
            proc = ProxyProcess(config, tmp / f"{name}.log", profile, floor=name == "floor", env=env)
            processes.append(proc)
            proc.wait_ready("127.0.0.1", port)
            ports[name], pids[name] = port, proc.pid
        clients = {n: make_client("127.0.0.1", port) for n, port in ports.items()}
        measured = {n: pid for n, pid in pids.items() if n in paths}
        for call_name, call in CALLS.items():
            _measure(clients, pids, call, 200)  # warm-up: JIT, connections, shortcuts
            runs = [_measure(clients, pids, call, args.calls) for _ in range(args.repeats)]
            log(f"{call_name}: {args.repeats} x {args.calls} calls per path")
            print(f"\n{call_name}, 1 client, {args.calls} calls x {args.repeats}: median (min-max) over the repeats")
            print(f"{'path':>10} | {'p50 ms':>7} | {'p50 x direct':>18} | {'CPU ms/call':>18} | {'its thread':>18}")
            for name in ports:
                p50 = statistics.median(r[name]["p50"] for r in runs)
                ratios = [r[name]["p50"] / r["direct"]["p50"] for r in runs]
                row = f"{name:>10} | {p50:7.3f} | {statistics.median(ratios):.3f} ({min(ratios):.2f}-{max(ratios):.2f})"
                if name in measured:
                    cpus = [r[name]["cpu"] for r in runs]
                    row += f" | {statistics.median(cpus):.3f} ({min(cpus):.3f}-{max(cpus):.3f})"
                    threads = [r[name]["thread"] for r in runs]
                    row += f" | {statistics.median(threads):.3f} ({min(threads):.3f}-{max(threads):.3f})"
                print(row)
            others_load = [r["other"] for r in runs]
            print(f"other load (cores): median {statistics.median(others_load):.2f}, max {max(others_load):.2f}; loadavg {os.getloadavg()}")
        for c in clients.values():
            c.close()
    finally:
        for proc in processes:
            proc.stop()
        if args.profile:
            print_profile(Path(args.profile).resolve())
        if metastore is not None:
            metastore.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

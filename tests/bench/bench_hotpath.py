"""The proxy's CPU per relayed call, next to the byte forwarder's: the hot path's cost, measured alone.

`make bench ARGS=--floor` shows the same figure among many; this one measures only it, at one
client, and can put two hmsproxy source trees side by side in the same run (`--other NAME=DIR`:
another checkout, e.g. main's, served from that directory: `python -m` imports it from there), so a change to the
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
import subprocess
import sys
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


def count_here(metastore_uri: str, tmp: str) -> None:
    """Print the Python work of one shortcut hit of each call, in this process, from the hmsproxy it
    imported: opcodes (sys.settrace) and Python and C calls (sys.setprofile) on the thread that
    handles the call (`ProxyServer._process_one`, the client's bytes from memory, answered by the real
    metastore). Deterministic: the machine's load changes none of it."""
    import statistics as stats

    from thriftpy2.protocol import TBinaryProtocol
    from thriftpy2.thrift import TMessageType
    from thriftpy2.transport import TMemoryBuffer

    from hmsproxy.app import build_handler, load_config
    from hmsproxy.downstream.server import ProxyServer
    from hmsproxy.protocol import idl
    from hmsproxy.protocol.framing import MessageReader
    from hmsproxy.upstream.session import Session

    config = Path(tmp) / "count.yml"
    write_proxy_config(config, 1, metastore_uri)  # never listened on: calls are handed in
    handler = build_handler(load_config(config))
    server = ProxyServer(handler, "127.0.0.1", 0)
    session = Session(handler.backends, "127.0.0.1:1")
    handler.session_opened(session)
    requests = {
        "get_table": idl.HmsProxy.get_table_args(dbname=DB, tbl_name=TABLE),
        "get_partitions_by_filter": idl.HmsProxy.get_partitions_by_filter_args(db_name=DB, tbl_name=TABLE, filter=FILTER, max_parts=-1),
    }
    for method, args in requests.items():
        buf = TMemoryBuffer()
        proto = TBinaryProtocol(buf)
        proto.write_message_begin(method, TMessageType.CALL, 1)
        args.write(proto)
        data = buf.getvalue()
        reader = MessageReader(lambda n, d=data: d)
        counts: dict[str, list[int]] = {"opcodes": [], "python": [], "c": []}

        def one(tracer=None, profiler=None, reader=reader) -> dict | None:
            seen = {"opcode": 0, "call": 0, "c_call": 0}
            used = handler.shortcuts.used
            sys.settrace(tracer and tracer(seen))
            sys.setprofile(profiler and profiler(seen))
            try:
                server._process_one(session, TBinaryProtocol(TMemoryBuffer()), reader, lambda b: None)  # the full path writes to proto
            finally:
                sys.settrace(None)
                sys.setprofile(None)
            return seen if handler.shortcuts.used == used + 1 else None  # a shortcut hit, not a full path

        def tracer(seen):
            def trace(frame, event, arg):
                frame.f_trace_opcodes = True
                if event == "opcode":
                    seen["opcode"] += 1
                return trace

            return trace

        def profiler(seen):
            def profile(frame, event, arg):
                if event in seen:
                    seen[event] += 1

            return profile

        for _ in range(20):  # the first takes the full path; the rest are hits
            one()
        for _ in range(30):
            if (seen := one(tracer=tracer)) is not None:
                counts["opcodes"].append(seen["opcode"])
            if (seen := one(profiler=profiler)) is not None:
                counts["python"].append(seen["call"])
                counts["c"].append(seen["c_call"] - 1)  # setprofile(None) itself
        print(
            f"{method}: {stats.median(counts['opcodes']):.0f} opcodes, {stats.median(counts['python']):.0f} Python calls, "
            f"{stats.median(counts['c']):.0f} C calls per shortcut hit"
        )
        print(
            f"  {method}, thread CPU per hit, median (min-max) of {SPLIT_ROUNDS} rounds x {SPLIT_CALLS}: "
            + split_hit(handler, server, session, reader, data)
        )
    handler.close()


SPLIT_ROUNDS, SPLIT_CALLS = 6, 300


def split_hit(handler, server, session, reader, request: bytes) -> str:
    """Where a shortcut hit's CPU goes, call after call against the real metastore (so each call
    wakes up after the metastore's wait, as when served): the thread's CPU per hit as served, with
    the on_complete hooks left out, with the relay's Python path instead of the C exchange, and the
    C exchange alone on the same connection (the socket calls and wake-ups: what no Python adds).
    Variants interleave round by round; the load moves these figures, the differences less."""
    import statistics as stats

    from thriftpy2.protocol import TBinaryProtocol
    from thriftpy2.transport import TMemoryBuffer

    from hmsproxy.upstream import wire

    exchange, hooks = getattr(wire, "exchange", None), handler.features.hooks
    out, send = TBinaryProtocol(TMemoryBuffer()), lambda b: None

    def served() -> None:
        server._process_one(session, out, reader, send)

    def no_complete(hook, spec):
        return () if hook == "on_complete" else hooks(hook, spec)

    served()
    conn = next(iter(session._conns.values()))
    variants = {"as served": {}, "no on_complete hooks": {"hooks": no_complete}}
    if exchange is not None:
        variants["Python relay"] = {"exchange": None}
        fd = conn._socket.fileno()
        variants["C exchange alone"] = {"alone": lambda: exchange(fd, request, 262_144, 0, b"", 0)}
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(SPLIT_ROUNDS):
        for name, how in variants.items():
            if "hooks" in how:
                handler.features.hooks = how["hooks"]
            if "exchange" in how:
                wire.exchange = how["exchange"]
            one = how.get("alone", served)
            try:
                for _ in range(50):
                    one()
                started = time.thread_time()
                for _ in range(SPLIT_CALLS):
                    one()
                times[name].append((time.thread_time() - started) / SPLIT_CALLS * 1e6)
            finally:
                handler.features.hooks, wire.exchange = hooks, exchange
    return ", ".join(f"{name} {stats.median(v):.0f} ({min(v):.0f}-{max(v):.0f}) us" for name, v in times.items())


def _count(tree: str, metastore_uri: str, tmp: Path) -> str:
    """count_here in a process that imports hmsproxy from `tree` (this checkout's tests package beside it)."""
    here = str(Path(__file__).resolve().parents[2])
    code = f"import sys, hmsproxy; sys.path.insert(0, {here!r}); from tests.bench.bench_hotpath import count_here; count_here({metastore_uri!r}, {str(tmp)!r})"
    done = subprocess.run([sys.executable, "-c", code], cwd=tree, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"counting in {tree} failed:\n{done.stderr}")
    return done.stdout


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--calls", type=int, default=1000, help="calls per path and repeat (default 1000)")
    p.add_argument("--repeats", type=int, default=5, help="repeats per call (default 5)")
    p.add_argument("--other", action="append", default=[], metavar="NAME=DIR", help="also serve hmsproxy from source tree DIR")
    p.add_argument("--count", action="store_true", help="also count each tree's opcodes and calls per shortcut hit (deterministic)")
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
            profile = Path(args.profile).resolve() if args.profile and name == "hmsproxy" else None
            proc = ProxyProcess(config, tmp / f"{name}.log", profile, floor=name == "floor", cwd=tree)
            processes.append(proc)
            proc.wait_ready("127.0.0.1", port)
            ports[name], pids[name] = port, proc.pid
        if args.count:
            for name, tree in paths.items():
                if name != "floor":
                    print(f"{name}:\n" + _count(tree or str(Path(__file__).resolve().parents[2]), metastore.uri, tmp), end="")
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

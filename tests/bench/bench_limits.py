"""Limits (issue #28): does a noisy client, once limited, still slow everyone else?
`python -m tests.bench.bench_limits [--noisy-threads 8] [--seconds 10] [--repeats 3]` (`make bench-limits`).

One real Hive 2.3 metastore (production JVM flags), two `hmsproxy serve` processes in front of it:
one without limits, one with `limits.users: {alice: RATE}` (and a queue time, so alice's calls wait
in the proxy instead of coming back refused at once). A noisy client (user alice, a process of its
own with several threads looping get_partitions of a 100-partition table) and a quiet one (user bob,
one thread in this process, looping get_table) run together, after a warm-up. Bob's p50 is measured three ways, in
interleaved repeats: quiet (no noisy client), noisy through the proxy without limits, noisy through
the proxy with limits. Target: with limits, bob's p50 within 1.2x of quiet.
A last run sets queue-s to 0 (alice refused at once and looping on refusals) for comparison.
"""

from __future__ import annotations

import argparse
import multiprocessing
import shutil
import statistics
import tempfile
import threading
import time
from pathlib import Path

TABLE = "bench_limits"
PARTITIONS = 100
TARGET = 1.2


def limits_section(rate: float, queue_s: float) -> str:
    return f"limits:\n  queue-s: {queue_s}\n  users:\n    alice: {{rate: {rate}, burst: {max(1, int(rate))}}}\n"


def start_proxy(tmp: Path, name: str, metastore_uri: str, limits: str = ""):
    from hmsproxy.app import load_config
    from hmsproxy.dev.ports import free_port
    from tests.bench.bench_proxy import ProxyProcess, write_proxy_config

    port = free_port()
    config = tmp / f"{name}.yml"
    write_proxy_config(config, port, metastore_uri, store_url=f"sqlite:///{tmp}/{name}.db")
    config.write_text(config.read_text() + limits)
    load_config(config)
    process = ProxyProcess(config, tmp / f"{name}.log")
    process.wait_ready("127.0.0.1", port)
    return process, port


def client_as(port: int, user: str):
    from tests.bench.bench_proxy import make_client

    client = make_client("127.0.0.1", port)
    try:
        client.set_ugi(user, [])
    except BaseException:
        client.close()
        raise
    return client


def noisy(port: int, threads: int, seconds: float, out) -> None:
    """alice: `threads` threads looping get_partitions for `seconds` (one deadline for all, connecting
    included); puts (answers/s, refusals/s)."""
    from hmsproxy.protocol import idl

    counts = [0, 0]
    lock = threading.Lock()
    start = time.monotonic()
    deadline = start + seconds

    def connect():
        refused = 0
        while time.monotonic() < deadline:  # set_ugi counts against alice's limit too: a refused one goes again
            try:
                return client_as(port, "alice"), refused
            except idl.hive.MetaException:
                refused += 1
                time.sleep(0.05)
        return None, refused

    def run():
        client, refused = connect()
        answered = 0
        try:
            while client is not None and time.monotonic() < deadline:
                try:
                    client.get_partitions("default", TABLE, -1)
                    answered += 1
                except idl.hive.MetaException:
                    refused += 1
        finally:
            if client is not None:
                client.close()
        with lock:
            counts[0] += answered
            counts[1] += refused

    workers = [threading.Thread(target=run) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(seconds + 120)
    took = time.monotonic() - start
    out.put((counts[0] / took, counts[1] / took))


def quiet(port: int, seconds: float) -> list[float]:
    """bob: one thread looping get_table for `seconds`; each call's milliseconds."""
    client = client_as(port, "bob")
    took = []
    try:
        client.get_table("default", TABLE)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            start = time.perf_counter()
            client.get_table("default", TABLE)
            took.append((time.perf_counter() - start) * 1000)
    finally:
        client.close()
    return took


def scenario(port: int, noisy_threads: int, seconds: float) -> tuple[list[float], tuple[float, float] | None]:
    """bob's latencies through `port`, with alice's noisy process running alongside when noisy_threads."""
    if not noisy_threads:
        return quiet(port, seconds), None
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    process = ctx.Process(target=noisy, args=(port, noisy_threads, seconds + 2.0, out))
    process.start()
    try:
        time.sleep(1.5)  # alice's process is up and loud before bob measures
        took = quiet(port, seconds)
        counts = out.get(timeout=seconds + 180)
    finally:
        process.join(60)
        if process.is_alive():
            process.kill()
    return took, counts


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--noisy-threads", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=10.0, help="how long bob measures per run")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rate", type=float, default=10.0, help="alice's limit, calls/s")
    parser.add_argument("--queue-s", type=float, default=2.0)
    args = parser.parse_args(argv)

    from hmsproxy.dev.metastore import start_metastores
    from hmsproxy.testing import partition, table

    def log(message: str) -> None:
        print(message, flush=True)

    tmp = Path(tempfile.mkdtemp(prefix="hmsproxy-bench-limits-"))
    metastore, proxies = None, []
    try:
        log(f"starting a Hive 2.3 metastore (state in {tmp}) ...")
        (metastore,) = start_metastores(1, tmp / "hms", log=lambda m: None, timeout_s=180, fast_start=False, log_level="WARN")
        direct = metastore.client()
        try:
            direct.create_table(table("default", TABLE, partition_keys=(("ds", "string"),)))
            direct.add_partitions([partition("default", TABLE, [f"d{i:04d}"]) for i in range(PARTITIONS)])
        finally:
            direct.close()
        plain, plain_port = start_proxy(tmp, "unlimited", metastore.uri)
        proxies.append(plain)
        capped, capped_port = start_proxy(tmp, "limited", metastore.uri, limits_section(args.rate, args.queue_s))
        proxies.append(capped)
        runs = {
            "quiet": (plain_port, 0),
            "quiet, limits on": (capped_port, 0),
            "noisy, no limits": (plain_port, args.noisy_threads),
            "noisy, limits on": (capped_port, args.noisy_threads),
        }
        log("warming up (the metastore's JIT, both proxies) ...")
        for port in (plain_port, capped_port):
            scenario(port, 2, 3.0)
        results: dict[str, list[tuple[list[float], tuple[float, float] | None]]] = {name: [] for name in runs}
        names = list(runs)
        for rep in range(args.repeats):
            order = names[rep % len(names) :] + names[: rep % len(names)]  # which run goes first rotates
            for name in order:
                port, threads = runs[name]
                took, counts = scenario(port, threads, args.seconds)
                results[name].append((took, counts))
                extra = f", alice {counts[0]:.1f} answers/s {counts[1]:.0f} refusals/s" if counts else ""
                log(f"rep {rep + 1}/{args.repeats} {name:<18} bob p50 {statistics.median(took):.2f} ms ({len(took)} calls){extra}")
        refusing, refusing_port = start_proxy(tmp, "refusing", metastore.uri, limits_section(args.rate, 0))
        proxies.append(refusing)
        results["noisy, limits on, queue-s 0"] = [scenario(refusing_port, args.noisy_threads, args.seconds) for _ in range(args.repeats)]

        quiet_p50 = statistics.median(statistics.median(t) for t, _ in results["quiet"])
        log("")
        log(
            f"bob's get_table (1 thread) while alice loops get_partitions of {PARTITIONS} partitions "
            f"({args.noisy_threads} threads; limit {args.rate:g} calls/s, queue-s {args.queue_s:g}); medians of {args.repeats} runs of {args.seconds:g} s"
        )
        log(f"{'run':<28} | {'bob p50':>9} | {'bob p99':>9} | {'x quiet':>7} | {'alice answers/s':>15} | {'refusals/s':>10}")
        for name, runs_of in results.items():
            p50 = statistics.median(statistics.median(t) for t, _ in runs_of)
            p99 = statistics.median(p(t, 0.99) for t, _ in runs_of)
            counts = [c for _, c in runs_of if c]
            answers = statistics.median(c[0] for c in counts) if counts else 0
            refusals = statistics.median(c[1] for c in counts) if counts else 0
            alice = f"{answers:>15.1f} | {refusals:>10.0f}" if counts else f"{'-':>15} | {'-':>10}"
            log(f"{name:<28} | {p50:>7.2f}ms | {p99:>7.2f}ms | {p50 / quiet_p50:>6.2f}x | {alice}")
        limited = statistics.median(statistics.median(t) for t, _ in results["noisy, limits on"]) / quiet_p50
        log(f"{'PASS' if limited <= TARGET else 'MISS'}  bob's p50 with alice limited within {TARGET}x of quiet: {limited:.2f}x")
        return 0
    finally:
        for proxy in proxies:
            proxy.stop()
        if metastore is not None:
            metastore.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())

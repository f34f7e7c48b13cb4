"""The metadata cache's part of ``make bench``: get_table direct vs through hmsproxy with the cache
off vs on, at 1 and N clients, in the same interleaved runs as the rest of the benchmark
(tests/bench/bench_proxy.py runs it last, against the same metastore and client processes).

With the cache on, every measured get_table after the first is a hit (nothing writes the table
during the runs), so the figures are the cache's best case: the proxy's own cost per call.
"""

from __future__ import annotations

import statistics
from pathlib import Path

#: Target: cached get_table throughput / direct throughput at N clients.
TARGET_CACHED_THROUGHPUT_RATIO = 5.0
PATHS = ("direct", "proxy", "cached")


def start_cached_proxy(tmp: Path, metastore_uri: str, hive_version: str):
    """A second ``hmsproxy serve`` whose primary has ``cache: true``; (process, port)."""
    from hmsproxy.dev.ports import free_port
    from tests.bench.bench_proxy import ProxyProcess, write_proxy_config

    port = free_port()
    config = tmp / "hmsproxy-cached.yml"
    write_proxy_config(config, port, metastore_uri, hive_version, cache=True)
    process = ProxyProcess(config, tmp / "hmsproxy-cached.log")
    process.wait_ready("127.0.0.1", port)
    return process, port


def measure(pool, endpoints: dict, method: str, args, snapshot, log) -> list[str]:
    """Interleaved runs of the three paths; the report's lines."""
    from tests.bench.bench_proxy import summarize

    targets = [endpoints[p] for p in PATHS]
    stats: dict[tuple[int, str], list] = {}
    for n in (1, args.clients):
        for rep in range(args.repeats):
            order = PATHS[rep % 3 :] + PATHS[: rep % 3]  # which path goes first rotates
            raw = pool.run(
                [endpoints[p] for p in order],
                "get_table",
                n,
                (3 if n == 1 else 3 * max(1, round(args.duration / args.slice)) * args.slice),
                args.warmup_calls,
                snapshot,
                slice_s=0.0 if n == 1 else args.slice,
                methods=[method] * len(targets),
            )
            for i, path in enumerate(order):
                s = summarize(path, "get_table", n, i, raw)
                stats.setdefault((n, path), []).append(s)
            log(
                f"cache rep {rep + 1}/{args.repeats} {n:>2} clients: "
                + ", ".join(f"{p} {statistics.median([s.throughput for s in stats[(n, p)]]):.0f}/s" for p in PATHS)
            )
    lines = [
        "get_table with the metadata cache (hmsproxy/upstream/cache/): direct vs proxy (cache off) vs proxy (cache on, every call a hit)",
        f"{'clients':>7} | {'direct p50':>10}{'/s':>8} | {'proxy p50':>10}{'/s':>8} | {'cached p50':>10}{'/s':>8} | {'cached/direct':>13}",
    ]
    targets_met = []
    for n in (1, args.clients):
        med = {
            p: (statistics.median(s.p50_ms for s in stats[(n, p)]), statistics.median(s.throughput for s in stats[(n, p)])) for p in PATHS
        }
        ratio = med["cached"][1] / med["direct"][1]
        lines.append(
            f"{n:>7} | {med['direct'][0]:>8.2f}ms{med['direct'][1]:>8.0f} | {med['proxy'][0]:>8.2f}ms{med['proxy'][1]:>8.0f} | "
            f"{med['cached'][0]:>8.2f}ms{med['cached'][1]:>8.0f} | {ratio:>12.2f}x"
        )
        if n > 1:
            targets_met.append(ratio >= TARGET_CACHED_THROUGHPUT_RATIO)
            lines.append(
                f"{'PASS' if ratio >= TARGET_CACHED_THROUGHPUT_RATIO else 'MISS'}  cached get_table throughput >= "
                f"{TARGET_CACHED_THROUGHPUT_RATIO}x direct, {n} clients: {ratio:.2f}x"
            )
    return lines

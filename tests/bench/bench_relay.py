"""The relay's part of ``make bench``: get_partitions of many partitions (``--big-partitions``,
10,000 by default) direct vs through hmsproxy's fast path (answers relayed undecoded) vs its full
path (``relay: false``), with each proxy process's memory growth. tests/bench/bench_proxy.py runs
it after the other rows, against the same metastore.

On a Hive 2.3 metastore, which leaves the Hive 3 catalog unset in each Partition, the fast path
appends it as it copies (hmsproxy/protocol/relay.py); on 3.1 and 4.0 the answer goes on as it is. The
warm-up round checks that both proxies' answers are equal and hold the metastore's partitions.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

BIG_TABLE = "big"
#: Target: fast path get_partitions latency / direct.
TARGET_RATIO = 1.1


def seed_big(metastore, partitions: int) -> int:
    """bench.big with `partitions` partitions (bench.events' columns); returns the answer's size in bytes."""
    import copy

    from thriftpy2.utils import serialize

    from hmsproxy.protocol import idl
    from tests.bench.bench_proxy import DB, TABLE

    client = metastore.client(timeout_s=600)  # 1,000 partitions a call: minutes on a loaded 2-core machine
    try:
        table = copy.deepcopy(client.get_table(DB, TABLE))
        table.tableName = BIG_TABLE
        table.sd.location = None
        client.create_table(table)
        sd = client.get_table(DB, BIG_TABLE).sd
        for start in range(0, partitions, 1000):
            parts = []
            for i in range(start, min(partitions, start + 1000)):
                psd = copy.deepcopy(sd)
                psd.location = f"{sd.location}/ds=p{i:06d}"
                parts.append(idl.hive.Partition(values=[f"p{i:06d}"], dbName=DB, tableName=BIG_TABLE, sd=psd, parameters={"numFiles": "1"}))
            client.add_partitions(parts)
        answer = client.get_partitions(DB, BIG_TABLE, -1)
        assert len(answer) == partitions
        return len(serialize(idl.HmsProxy.get_partitions_result(success=answer)))
    finally:
        client.close()


def rss_kib(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of a process, KiB."""
    values = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            values[key] = int(rest.split()[0])
    return values["VmRSS"], values["VmHWM"]


def measure(endpoints: dict, pids: dict, repeats: int, answer_bytes: int, partitions: int, log) -> tuple[list[str], dict]:
    """get_partitions of bench.big on each path, alternated; the report's lines and {path: (median s, RSS growth KiB or None)}.
    Paths beyond direct, fast and full (the byte forwarder, Waggle Dance) are timed the same way and checked against direct."""
    from tests.bench.bench_proxy import DB, _proc_cpu_s, make_client

    clients = {path: make_client(*endpoints[path], timeout_s=600) for path in endpoints}
    try:
        before = {path: rss_kib(pid) for path, pid in pids.items()}
        cpu = {path: 0.0 for path in pids}
        times: dict[str, list[float]] = {path: [] for path in endpoints}
        first: dict[str, list] = {}
        for rep in range(repeats + 1):
            order = list(endpoints) if rep % 2 == 0 else list(reversed(endpoints))
            for path in order:
                cpu0 = _proc_cpu_s(pids.get(path))
                t0 = time.perf_counter()
                got = clients[path].get_partitions(DB, BIG_TABLE, -1)
                elapsed = time.perf_counter() - t0
                if rep and path in pids:
                    cpu[path] += (_proc_cpu_s(pids[path]) or 0.0) - (cpu0 or 0.0)
                assert len(got) == partitions
                if rep:  # the first round warms up, and its answers are compared below
                    times[path].append(elapsed)
                else:
                    first[path] = got
                del got
            if not rep:
                assert first["fast"] == first["full"], "the fast path's answer differs from the full path's"
                for path in first:
                    assert [p.values for p in first[path]] == [p.values for p in first["direct"]], path
                assert all(p.catName is not None for p in first["fast"])
                first.clear()
            log(f"relay rep {rep}/{repeats}: " + ", ".join(f"{p} {times[p][-1] if times[p] else 0:.2f}s" for p in endpoints))
        after = {path: rss_kib(pid) for path, pid in pids.items()}
    finally:
        for c in clients.values():
            c.close()
    med = {p: statistics.median(v) for p, v in times.items()}
    others = [p for p in endpoints if p not in ("direct", "fast", "full")]
    lines = [
        f"get_partitions of {partitions:,} partitions ({answer_bytes / 1e6:.1f} MB answer): direct vs proxy fast path vs full path"
        + "".join(f" vs {p}" for p in others),
        f"{'path':<10}{'median (s)':>12}{'x direct':>10}{'proxy CPU s/call':>18}{'proxy RSS growth (peak - start)':>34}",
    ]
    for path in endpoints:
        growth = proxy_cpu = ""
        if path in pids:
            growth = f"{(after[path][1] - before[path][0]) / 1024:.1f} MiB"
            proxy_cpu = f"{cpu[path] / repeats:.3f}"
        lines.append(f"{path:<10}{med[path]:>12.3f}{med[path] / med['direct']:>9.2f}x{proxy_cpu:>18}{growth:>34}")
    ratio = med["fast"] / med["direct"]
    lines.append(f"{'PASS' if ratio <= TARGET_RATIO else 'MISS'}  fast path get_partitions <= {TARGET_RATIO}x direct: {ratio:.2f}x")
    growth_kib = {path: (after[path][1] - before[path][0]) if path in pids else None for path in endpoints}
    return lines, {path: (med[path], growth_kib[path]) for path in endpoints}


def start_proxies(tmp: Path, metastore_uri: str, hive_version: str) -> dict:
    """Fresh proxy processes (their memory starts here): {"fast": (process, port), "full": (process, port)}."""
    from hmsproxy.dev.ports import free_port
    from tests.bench.bench_proxy import ProxyProcess, write_proxy_config

    started = {}
    try:
        for path, relay in (("fast", True), ("full", False)):
            port = free_port()
            config = tmp / f"hmsproxy-{path}.yml"
            write_proxy_config(config, port, metastore_uri, hive_version, relay=relay)
            started[path] = (ProxyProcess(config, tmp / f"hmsproxy-{path}.log"), port)
            started[path][0].wait_ready("127.0.0.1", port)
    except BaseException:
        for process, _ in started.values():
            process.stop()
        raise
    return started

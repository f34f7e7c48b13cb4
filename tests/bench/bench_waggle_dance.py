"""Waggle Dance's part of ``make bench``: Waggle Dance 3.13.3 (hmsproxy/dev/waggle_dance.py) as a
fourth path beside direct, the byte-forwarder floor and hmsproxy, interleaved in the same runs
against the same metastore, then in the get_partitions runs; at the end one Markdown table of
every figure from that one run, and the targets: hmsproxy ahead of Waggle Dance on each figure,
and within 0.03 of the floor's ratios.

Equivalent configs: Waggle Dance reads a waggle-dance-server.yml / waggle-dance-federation.yml
pair with what hmsproxy's config has (PREFIXED resolution, the metastore as its primary,
READ_AND_WRITE_AND_CREATE). Both run as deployed by default: Waggle Dance with its JVM's default
heap and collector and its default logging (INFO, a ``WD Audit`` line per call, to a file here),
hmsproxy with its defaults (audit off) at log level WARNING; ``--wd-no-audit`` turns Waggle Dance's
audit line off.
"""

from __future__ import annotations

from pathlib import Path

from hmsproxy.dev import waggle_dance
from hmsproxy.dev.ports import free_port

#: The figures' columns: path key in the benchmark, heading.
COLUMNS = (("direct", "direct"), ("floor", "byte forwarder (floor)"), ("proxy", "hmsproxy"), ("wd", f"Waggle Dance {waggle_dance.VERSION}"))
#: hmsproxy's ratios may trail the floor's by this much.
FLOOR_MARGIN = 0.03


def start(tmp: Path, metastore_uri: str, log, *, audit: bool = True) -> tuple[waggle_dance.WaggleDance, int]:
    """Fetch (once) and start Waggle Dance in front of the metastore; (process, port)."""
    jar = waggle_dance.fetch(say=log)
    port = free_port()
    server, federation = waggle_dance.write_config(tmp / "waggle-dance", port, metastore_uri)
    process = waggle_dance.WaggleDance(jar, server, federation, tmp / "waggle-dance.log", port=port, audit=audit)
    log(f"starting Waggle Dance {waggle_dance.VERSION} ({'audit line per call, its default' if audit else 'audit off'}) ...")
    process.start()
    return process, port


def resident_mib(pids: dict) -> dict:
    """{path: (VmRSS, VmHWM) in MiB} of each process."""
    from tests.bench.bench_relay import rss_kib

    return {path: tuple(v / 1024 for v in rss_kib(pid)) for path, pid in pids.items()}


def _ms(v) -> str:
    return "–" if v is None else f"{v:.2f} ms"


def _x(v) -> str:
    return f" ({v:.2f}×)"


def comparison(rows, relay: dict, memory: dict, startup: dict, relay_title: str) -> tuple[list[str], list[tuple[str, bool]]]:
    """The Markdown table of every figure, and the targets [(text, passed)].

    ``rows``: the main rows (bench_proxy.Row, with floor and wd); ``relay``: {path: (median s,
    growth KiB)} of the get_partitions runs (hmsproxy's path there is "fast", a fresh process with
    the same config); ``memory``: {path: (RSS, peak) MiB} after the call runs; ``startup``: {path: s}.
    """
    heads = [h for _, h in COLUMNS]
    lines = ["| figure | " + " | ".join(heads) + " |", "|---" * (len(heads) + 1) + "|"]
    targets: list[tuple[str, bool]] = []

    def add(figure: str, cells: list[str]) -> None:
        lines.append(f"| {figure} | " + " | ".join(cells) + " |")

    for r in rows:
        ratio = {"floor": (r.floor_p50_ratio, r.floor_throughput_ratio), "proxy": (r.p50_ratio, r.throughput_ratio)}
        ratio["wd"] = (r.wd_p50_ratio, r.wd_throughput_ratio)
        medians = {"direct": r.direct, "floor": r.floor, "proxy": r.proxy, "wd": r.wd}
        if r.clients == 1:
            add(
                f"{r.call} p50, 1 client",
                [_ms(medians[p]["p50_ms"]) + ("" if p == "direct" else _x(ratio[p][0])) for p, _ in COLUMNS],
            )
            p, f, w = ratio["proxy"][0], ratio["floor"][0], ratio["wd"][0]
            targets.append((f"hmsproxy p50 below Waggle Dance's, 1 client, {r.call}: {p:.2f}× vs {w:.2f}×", p < w))
            targets.append(
                (f"hmsproxy p50 within {FLOOR_MARGIN} of the floor's, 1 client, {r.call}: {p:.2f}× vs {f:.2f}×", p - f <= FLOOR_MARGIN)
            )
        else:
            add(
                f"{r.call} throughput, {r.clients} clients",
                [f"{medians[p]['throughput']:.0f}/s" + ("" if p == "direct" else _x(ratio[p][1])) for p, _ in COLUMNS],
            )
            p, f, w = ratio["proxy"][1], ratio["floor"][1], ratio["wd"][1]
            targets.append((f"hmsproxy throughput above Waggle Dance's, {r.clients} clients, {r.call}: {p:.2f}× vs {w:.2f}×", p > w))
            targets.append(
                (
                    f"hmsproxy throughput within {FLOOR_MARGIN} of the floor's, {r.clients} clients, {r.call}: {p:.2f}× vs {f:.2f}×",
                    f - p <= FLOOR_MARGIN,
                )
            )
    for r in rows:
        if r.call == "get_table":
            add(
                f"proxy CPU per get_table, {r.clients} client{'s' if r.clients > 1 else ''}",
                ["–"] + [_ms(m["proxy_cpu_ms_per_call"]) for m in (r.floor, r.proxy, r.wd)],
            )
    if relay:
        direct_s = relay["direct"][0]
        cols = {"direct": "direct", "floor": "floor", "proxy": "fast", "wd": "wd"}
        add(relay_title, [f"{relay[cols[p]][0]:.3f} s" + ("" if p == "direct" else _x(relay[cols[p]][0] / direct_s)) for p, _ in COLUMNS])
        add(
            "memory growth in those calls (peak − start)",
            ["–"] + [f"{relay[cols[p]][1] / 1024:.1f} MiB" for p, _ in COLUMNS[1:]],
        )
        p, f, w = (relay[c][0] / direct_s for c in ("fast", "floor", "wd"))
        targets.append((f"hmsproxy get_partitions faster than Waggle Dance: {p:.2f}× vs {w:.2f}×", p < w))
        targets.append((f"hmsproxy get_partitions within {FLOOR_MARGIN} of the floor's: {p:.2f}× vs {f:.2f}×", p - f <= FLOOR_MARGIN))
    add(
        "resident memory after the call runs (peak)",
        ["–"] + [f"{memory[p][0]:.0f} MiB ({memory[p][1]:.0f})" for p, _ in COLUMNS[1:]],
    )
    targets.append(
        (
            f"hmsproxy resident below Waggle Dance's: {memory['proxy'][0]:.0f} vs {memory['wd'][0]:.0f} MiB",
            memory["proxy"][0] < memory["wd"][0],
        )
    )
    add("start-up to first answer", ["–"] + [f"{startup[p]:.1f} s" for p, _ in COLUMNS[1:]])
    targets.append(
        (f"hmsproxy starts faster than Waggle Dance: {startup['proxy']:.1f} vs {startup['wd']:.1f} s", startup["proxy"] < startup["wd"])
    )
    return lines, targets

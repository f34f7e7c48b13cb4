"""Latency and throughput of hmsproxy against the metastore behind it.

Run with ``make bench`` or ``.venv/bin/python -m tests.bench.bench_proxy`` (see
docs/benchmark.md). Not a pytest test: the file name does not match ``test_*.py``
and it has no ``test_`` functions.

What it does, in one run (~1.5-2 minutes on 2 cores):

1. starts one real Hive 2.3 metastore (``hmsproxy.devstack``, state in a temp
   dir) and ``hmsproxy serve`` as a separate process with that metastore as its
   primary;
2. seeds ``bench.events`` (partitioned by ``ds string``, 200 partitions by
   default) directly on the metastore;
3. measures ``get_table`` and ``get_partitions_by_filter`` DIRECT (client ->
   metastore) and PROXY (client -> hmsproxy -> metastore) at 1 and at 16
   concurrent clients. Clients are separate processes (one thriftpy2
   connection each, Cython binary protocol over a buffered transport), forked
   before anything else starts, prepared (connected and warmed up) before the
   clock starts and released together at one start time; each calls in a loop
   for a fixed duration and returns every call's latency. Direct and proxy
   runs alternate (direct, proxy, direct, proxy, ...) and the median over the
   repeats is reported;
4. prints a table and the targets (proxy p50 <= 1.2x direct at 1 client,
   proxy throughput >= 0.8x direct at 16 clients), optionally writes JSON.

Every process it starts is stopped in ``finally`` blocks (SIGTERM to the
benchmark is turned into a normal exit so they run).
"""

from __future__ import annotations

import argparse
import array
import copy
import datetime as dt
import json
import math
import multiprocessing as mp
import os
import platform
import queue
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path

DB = "bench"
TABLE = "events"
FILTER_DS = "2026-01-05"
FILTER = f"ds = '{FILTER_DS}'"

#: Targets: proxy p50 / direct p50 at 1 client, proxy / direct throughput at 16 clients.
TARGET_P50_RATIO = 1.2
TARGET_THROUGHPUT_RATIO = 0.8

CALLS = {
    "get_table": lambda c: c.get_table(DB, TABLE),
    "get_partitions_by_filter": lambda c: c.get_partitions_by_filter(DB, TABLE, FILTER, -1),
}

CLIENT_TIMEOUT_S = 30.0


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def make_client(host: str, port: int, timeout_s: float = CLIENT_TIMEOUT_S):
    """A thriftpy2 ThriftHiveMetastore client: Cython binary protocol, buffered transport."""
    import thriftpy2.rpc
    from thriftpy2.protocol import TCyBinaryProtocolFactory
    from thriftpy2.transport import TCyBufferedTransportFactory

    from hmsproxy import idl

    return thriftpy2.rpc.make_client(
        idl.ThriftHiveMetastore,
        host,
        port,
        timeout=int(timeout_s * 1000),
        proto_factory=TCyBinaryProtocolFactory(),
        trans_factory=TCyBufferedTransportFactory(),
    )


# --------------------------------------------------------------------------------------
# client processes


def _busy_cpu_s() -> float | None:
    """CPU seconds spent busy (all CPUs, all processes) since boot, from /proc/stat; None if unknown."""
    try:
        with open("/proc/stat") as fh:
            v = [int(x) for x in fh.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = v
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def _f(value, fmt: str = ".2f") -> str:
    return "?" if value is None else format(value, fmt)


def _proc_cpu_s(pid: int | None) -> float | None:
    """utime + stime of a process (whole process, all threads), from /proc; None if unknown."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def _worker_main(conn) -> None:
    """One client process: serves ("prep", ...) / ("go", ...) requests until ("stop",)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when we stop
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            return
        if msg[0] == "stop":
            return
        client = None
        try:
            _, host, port, call, warmup_calls = msg
            fn = CALLS[call]
            client = make_client(host, port)
            for _ in range(warmup_calls):
                fn(client)
            conn.send(("ready",))
            go = conn.recv()
            if go[0] != "go":
                continue
            _, start_at, duration_s = go
            lat = array.array("d")
            perf = time.perf_counter
            # time.monotonic and perf_counter are both CLOCK_MONOTONIC on Linux, so
            # start_at (from the parent) means the same instant in every process.
            while perf() < start_at:
                time.sleep(min(0.002, max(0.0, start_at - perf())))
            cpu0 = time.process_time()
            end_at = start_at + duration_s
            t1 = perf()
            while t1 < end_at:
                t0 = t1
                fn(client)
                t1 = perf()
                lat.append(t1 - t0)
            cpu = time.process_time() - cpu0
            conn.send(("done", lat.tobytes(), t1, cpu))
        except BaseException:  # noqa: BLE001 - reported to the parent
            try:
                conn.send(("error", traceback.format_exc()))
            except (OSError, ValueError):
                return
        finally:
            if client is not None:
                try:
                    client.close()
                except Exception:  # noqa: BLE001
                    pass


class ClientPool:
    """``size`` client processes, forked once, driven through pipes."""

    def __init__(self, size: int):
        ctx = mp.get_context("fork")
        self.workers = []
        for i in range(size):
            parent, child = ctx.Pipe(duplex=True)
            p = ctx.Process(target=_worker_main, args=(child,), name=f"bench-client-{i}", daemon=True)
            p.start()
            child.close()
            self.workers.append((p, parent))

    def _recv(self, conn, deadline: float, what: str):
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not conn.poll(remaining):
            raise RuntimeError(f"client process did not answer in time ({what})")
        msg = conn.recv()
        if msg[0] == "error":
            raise RuntimeError(f"client process failed ({what}):\n{msg[1]}")
        return msg

    def run(self, host: str, port: int, call: str, clients: int, duration_s: float, warmup_calls: int,
            snapshot=lambda: {}) -> dict:
        """Prepare ``clients`` processes, release them together, collect latencies.

        ``snapshot()`` is called once all clients are connected and warmed up, just
        before they are released, and again when the last one has finished.
        """
        active = self.workers[:clients]
        for _, conn in active:
            conn.send(("prep", host, port, call, warmup_calls))
        deadline = time.monotonic() + 60
        for _, conn in active:
            self._recv(conn, deadline, f"prepare {call}")
        before = snapshot()
        start_at = time.monotonic() + 0.05
        for _, conn in active:
            conn.send(("go", start_at, duration_s))
        deadline = start_at + duration_s + 60
        lat = array.array("d")
        last_end = start_at
        client_cpu = 0.0
        for _, conn in active:
            _, raw, end, cpu = self._recv(conn, deadline, f"run {call}")
            part = array.array("d")
            part.frombytes(raw)
            lat.extend(part)
            last_end = max(last_end, end)
            client_cpu += cpu
        after = snapshot()
        return {"latencies": lat, "window_s": last_end - start_at, "client_cpu_s": client_cpu,
                "before": before, "after": after}

    def close(self) -> None:
        for p, conn in self.workers:
            try:
                conn.send(("stop",))
            except (OSError, ValueError):
                pass
        for p, conn in self.workers:
            p.join(timeout=3)
            if p.is_alive():
                p.terminate()
                p.join(timeout=3)
            if p.is_alive():
                p.kill()
                p.join(timeout=3)
            conn.close()


# --------------------------------------------------------------------------------------
# the system under test


def seed(metastore, partitions: int) -> None:
    """bench.events: 4 columns, partitioned by ds string, ``partitions`` partitions."""
    from hmsproxy import idl

    hive = idl.hive
    client = metastore.client()
    try:
        client.create_database(
            hive.Database(name=DB, description="hmsproxy benchmark", locationUri=None, parameters={})
        )
        sd = hive.StorageDescriptor(
            cols=[
                hive.FieldSchema(name="event_id", type="bigint", comment="unique id"),
                hive.FieldSchema(name="user_id", type="string", comment=None),
                hive.FieldSchema(name="action", type="string", comment=None),
                hive.FieldSchema(name="amount", type="decimal(18,2)", comment=None),
                hive.FieldSchema(name="payload", type="map<string,string>", comment=None),
            ],
            location=None,
            inputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
            outputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
            compressed=False,
            numBuckets=-1,
            serdeInfo=hive.SerDeInfo(
                name=None,
                serializationLib="org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
                parameters={"serialization.format": "1"},
            ),
            bucketCols=[],
            sortCols=[],
            parameters={},
        )
        table = hive.Table(
            tableName=TABLE, dbName=DB, owner="bench", sd=sd,
            partitionKeys=[hive.FieldSchema(name="ds", type="string", comment="event date")],
            parameters={"comment": "hmsproxy benchmark table"}, tableType="MANAGED_TABLE",
        )  # fmt: skip
        client.create_table(table)
        # ~`partitions` consecutive days around FILTER_DS (which is one of them).
        first = dt.date.fromisoformat(FILTER_DS) - dt.timedelta(days=partitions // 2)
        days = [(first + dt.timedelta(days=i)).isoformat() for i in range(partitions)]
        assert FILTER_DS in days
        for i in range(0, len(days), 50):
            parts = []
            for ds in days[i : i + 50]:
                psd = copy.deepcopy(sd)
                parts.append(hive.Partition(values=[ds], dbName=DB, tableName=TABLE, sd=psd,
                                            parameters={"numFiles": "1", "totalSize": "1024"}))  # fmt: skip
            client.add_partitions(parts)
        got = client.get_partitions_by_filter(DB, TABLE, FILTER, -1)
        assert len(got) == 1 and got[0].values == [FILTER_DS], got
    finally:
        client.close()


def write_proxy_config(path: Path, port: int, metastore_uri: str) -> None:
    path.write_text(
        "# written by tests/bench/bench_proxy.py\n"
        "server:\n"
        "  host: 127.0.0.1\n"
        f"  port: {port}\n"
        "  transport: buffered\n"
        "database-resolution: PREFIXED\n"
        "primary-meta-store:\n"
        "  name: primary\n"
        f"  remote-meta-store-uris: {metastore_uri}\n"
        "  access-control-type: READ_AND_WRITE_AND_CREATE\n"
        '  hive-version: "2.3"\n',
        encoding="utf-8",
    )
    from hmsproxy.config import load_config

    load_config(path)  # fail here, with the loader's message, if the file is wrong


class ProxyProcess:
    """``hmsproxy serve --config FILE`` as a child process."""

    def __init__(self, config: Path, log_path: Path):
        self.log_path = log_path
        cmd = [sys.executable, "-m", "hmsproxy.cli", "--log-level", "WARNING", "serve", "--config", str(config)]
        self.cmd = cmd
        self._log = open(log_path, "wb")
        self.proc = subprocess.Popen(
            self.cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self._log, close_fds=True
        )
        self._lines: queue.Queue = queue.Queue()
        self._pump_thread = threading.Thread(target=self._pump, daemon=True, name="proxy-stdout")
        self._pump_thread.start()
        self.banner: str | None = None

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            line = raw.decode("utf-8", "replace").rstrip()
            self._lines.put(line)
            self._log.write(raw)
            self._log.flush()
        self._lines.put(None)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def wait_ready(self, host: str, port: int, timeout_s: float = 30) -> None:
        deadline = time.monotonic() + timeout_s
        while self.banner is None:
            remaining = deadline - time.monotonic()
            try:
                line = self._lines.get(timeout=max(0.01, remaining))
            except queue.Empty:
                line = ""
            if line is None or remaining <= 0:
                raise RuntimeError(f"hmsproxy did not start; log {self.log_path}:\n{self.tail()}")
            if " serving thrift://" in line:
                self.banner = line
        while True:  # the banner comes just before the accept thread starts
            try:
                client = make_client(host, port, timeout_s=10)
                try:
                    client.get_all_databases()
                    return
                finally:
                    client.close()
            except Exception:  # noqa: BLE001
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise RuntimeError(f"hmsproxy does not answer; log {self.log_path}:\n{self.tail()}")
                time.sleep(0.1)

    def tail(self) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-40:])
        except OSError as e:
            return f"<{e}>"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self._pump_thread.join(timeout=5)
        self._log.close()


# --------------------------------------------------------------------------------------
# statistics


def percentile(sorted_values, q: float) -> float:
    """Nearest-rank percentile of an already sorted sequence."""
    if not sorted_values:
        return math.nan
    k = max(0, min(len(sorted_values) - 1, math.ceil(q * len(sorted_values)) - 1))
    return sorted_values[k]


@dataclass
class RunStats:
    path: str
    call: str
    clients: int
    calls: int
    window_s: float
    p50_ms: float
    p99_ms: float
    mean_ms: float
    throughput: float
    #: CPU milliseconds per call: the metastore JVM, the proxy process, the clients.
    jvm_cpu_ms_per_call: float | None
    proxy_cpu_ms_per_call: float | None
    client_cpu_ms_per_call: float
    #: CPU (in cores, averaged over the run) used by processes that are not part of the
    #: benchmark: other load on the machine, which skews a run.
    foreign_cores: float | None


def summarize(path, call, clients, raw) -> RunStats:
    lat = sorted(raw["latencies"])
    n = len(lat)
    before, after = raw["before"], raw["after"]

    def delta(key):
        a, b = before.get(key), after.get(key)
        return None if a is None or b is None else b - a

    def per_call(key):
        d = delta(key)
        return None if d is None or n == 0 else d * 1000 / n

    foreign = None
    if delta("busy") is not None and delta("wall"):
        ours = sum(delta(k) or 0.0 for k in ("jvm", "proxy", "self")) + raw["client_cpu_s"]
        foreign = max(0.0, delta("busy") - ours) / delta("wall")

    return RunStats(
        path=path, call=call, clients=clients, calls=n, window_s=raw["window_s"],
        p50_ms=percentile(lat, 0.50) * 1000, p99_ms=percentile(lat, 0.99) * 1000,
        mean_ms=(sum(lat) / n * 1000) if n else math.nan,
        throughput=n / raw["window_s"] if raw["window_s"] > 0 else math.nan,
        jvm_cpu_ms_per_call=per_call("jvm"), proxy_cpu_ms_per_call=per_call("proxy"),
        client_cpu_ms_per_call=raw["client_cpu_s"] * 1000 / n if n else math.nan,
        foreign_cores=foreign,
    )  # fmt: skip


@dataclass
class Row:
    call: str
    clients: int
    direct: dict = field(default_factory=dict)  # median over repeats of each metric
    proxy: dict = field(default_factory=dict)
    p50_ratio: float = math.nan
    throughput_ratio: float = math.nan


def median_of(runs: list[RunStats]) -> dict:
    out = {}
    for key in ("p50_ms", "p99_ms", "mean_ms", "throughput", "jvm_cpu_ms_per_call",
                "proxy_cpu_ms_per_call", "client_cpu_ms_per_call", "foreign_cores"):  # fmt: skip
        values = [getattr(r, key) for r in runs if getattr(r, key) is not None]
        out[key] = statistics.median(values) if values else None
    out["calls"] = sum(r.calls for r in runs)
    out["repeats"] = len(runs)
    return out


def render_table(rows: list[Row]) -> str:
    head = (
        f"{'call':<26}{'clients':>8} | {'direct p50':>10}{'p99':>8} | {'proxy p50':>10}{'p99':>8} | "
        f"{'p50 x':>6} | {'direct/s':>9}{'proxy/s':>9} | {'tput x':>6}"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        d, p = r.direct, r.proxy
        lines.append(
            f"{r.call:<26}{r.clients:>8} | {d['p50_ms']:>8.2f}ms{d['p99_ms']:>6.2f}ms | "
            f"{p['p50_ms']:>8.2f}ms{p['p99_ms']:>6.2f}ms | {r.p50_ratio:>5.2f}x | "
            f"{d['throughput']:>9.0f}{p['throughput']:>9.0f} | {r.throughput_ratio:>5.2f}x"
        )
    return "\n".join(lines)


def render_cpu(rows: list[Row]) -> str:
    def fmt(v, width=6):
        return " " * (width - 1) + "-" if v is None else f"{v:>{width}.2f}"

    head = (f"{'CPU ms per call (median)':<26}{'clients':>8} | {'path':<6} | {'JVM':>6} {'proxy':>6} {'client':>6}"
            f" | {'other load (cores)':>18}")  # fmt: skip
    lines = [head, "-" * len(head)]
    for r in rows:
        for name, m in (("direct", r.direct), ("proxy", r.proxy)):
            lines.append(
                f"{r.call:<26}{r.clients:>8} | {name:<6} | {fmt(m['jvm_cpu_ms_per_call'])} "
                f"{fmt(m['proxy_cpu_ms_per_call'] if name == 'proxy' else None)} {fmt(m['client_cpu_ms_per_call'])}"
                f" | {fmt(m['foreign_cores'], 18)}"
            )
    return "\n".join(lines)


def evaluate_targets(rows: list[Row]) -> list[dict]:
    targets = []
    for r in rows:
        if r.clients == 1:
            ok = r.p50_ratio <= TARGET_P50_RATIO
            targets.append({
                "target": f"proxy p50 <= {TARGET_P50_RATIO}x direct, 1 client, {r.call}",
                "value": round(r.p50_ratio, 3), "pass": ok,
            })  # fmt: skip
    for r in rows:
        if r.clients > 1:
            ok = r.throughput_ratio >= TARGET_THROUGHPUT_RATIO
            targets.append({
                "target": f"proxy throughput >= {TARGET_THROUGHPUT_RATIO}x direct, {r.clients} clients, {r.call}",
                "value": round(r.throughput_ratio, 3), "pass": ok,
            })  # fmt: skip
    return targets


# --------------------------------------------------------------------------------------


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="python -m tests.bench.bench_proxy", description=__doc__.split("\n\n")[0])
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    p.add_argument("--clients", type=int, default=16, help="concurrent clients of the concurrent runs (default 16)")
    p.add_argument("--duration", type=float, default=1.5, help="seconds per measured run (default 1.5)")
    p.add_argument("--repeats", type=int, default=5, help="measured runs per path and case (default 5)")
    p.add_argument("--partitions", type=int, default=200, help="partitions of bench.events (default 200)")
    p.add_argument("--warmup-calls", type=int, default=5, help="calls each client makes before the clock starts (default 5)")
    p.add_argument("--budget", type=float, default=170, help="seconds after which no new run starts (default 170)")
    p.add_argument("--strict", action="store_true", help="exit with status 1 if a target is missed")
    p.add_argument("--keep-state", action="store_true", help="keep the temp dir (logs, Derby) after the run")
    return p.parse_args(argv)


def _sigterm(*_):
    raise SystemExit(143)


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.clients < 2:
        raise SystemExit("--clients must be at least 2")
    started = time.monotonic()
    budget_end = started + args.budget
    signal.signal(signal.SIGTERM, _sigterm)
    # No shared class-data-sharing archive (~/.cache/hmsproxy/cds): other runs on the
    # machine may rewrite it while this JVM has it mapped. It only shortens start-up.
    os.environ.setdefault("HMSPROXY_DEVSTACK_CDS", "0")

    import thriftpy2

    from hmsproxy import __version__
    from hmsproxy import idl as _idl  # noqa: F401 - loaded once, before the clients fork
    from hmsproxy.devstack import free_port, start_metastores

    # Fork the clients first: no threads, JVMs or sockets exist yet to leak into them.
    pool = ClientPool(args.clients)
    tmp = Path(tempfile.mkdtemp(prefix="hmsproxy-bench-"))
    metastore = None
    proxy = None
    try:
        log(f"starting a Hive metastore (state in {tmp}) ...")
        (metastore,) = start_metastores(1, tmp / "hms", log=lambda m: None, timeout_s=90)
        log(f"metastore {metastore.uri} ready after {metastore.last_start_seconds:.1f}s; seeding "
            f"{DB}.{TABLE} with {args.partitions} partitions ...")  # fmt: skip
        t0 = time.monotonic()
        seed(metastore, args.partitions)
        log(f"seeded in {time.monotonic() - t0:.1f}s; starting hmsproxy ...")

        proxy_port = free_port()
        config_path = tmp / "hmsproxy.yml"
        write_proxy_config(config_path, proxy_port, metastore.uri)
        proxy = ProxyProcess(config_path, tmp / "hmsproxy.log")
        proxy.wait_ready("127.0.0.1", proxy_port)
        log(f"{proxy.banner} (pid {proxy.pid})")

        endpoints = {"direct": ("127.0.0.1", metastore.port), "proxy": ("127.0.0.1", proxy_port)}
        pids = {"jvm": metastore.pid, "proxy": proxy.pid, "self": os.getpid()}

        def snapshot():
            snap = {k: _proc_cpu_s(v) for k, v in pids.items()}
            snap["busy"] = _busy_cpu_s()
            snap["wall"] = time.monotonic()
            return snap

        # Warm-up of both paths and both calls (JIT, connection set-up, caches): not measured.
        log("warming up both paths ...")
        for call in CALLS:
            for path in ("direct", "proxy"):
                pool.run(*endpoints[path], call, args.clients, 0.75, args.warmup_calls)

        cases = [(call, n) for n in (1, args.clients) for call in CALLS]
        runs: dict[tuple[str, int, str], list[RunStats]] = {}
        truncated = False
        for rep in range(args.repeats):
            for call, n in cases:
                # Alternate which path goes first, so neither always follows the other.
                order = ("direct", "proxy") if rep % 2 == 0 else ("proxy", "direct")
                if rep > 0 and time.monotonic() + 2 * (args.duration + 1) > budget_end:
                    truncated = True
                    continue
                for path in order:
                    raw = pool.run(*endpoints[path], call, n, args.duration, args.warmup_calls, snapshot)
                    stats = summarize(path, call, n, raw)
                    runs.setdefault((call, n, path), []).append(stats)
                    log(f"rep {rep + 1}/{args.repeats} {call:<24} {n:>2} clients {path:<6} "
                        f"p50 {stats.p50_ms:6.2f}ms p99 {stats.p99_ms:6.2f}ms {stats.throughput:6.0f}/s "
                        f"CPU ms/call JVM {_f(stats.jvm_cpu_ms_per_call)} proxy {_f(stats.proxy_cpu_ms_per_call)}; "
                        f"other load {_f(stats.foreign_cores)} cores")  # fmt: skip

        rows = []
        for call, n in cases:
            direct, proxied = runs[(call, n, "direct")], runs[(call, n, "proxy")]
            row = Row(call, n, median_of(direct), median_of(proxied))
            # Ratios: median over the back-to-back (direct, proxy) pairs of one repeat,
            # so slow drifts of the metastore or of other load cancel out.
            pairs = list(zip(direct, proxied))
            row.p50_ratio = statistics.median(p.p50_ms / d.p50_ms for d, p in pairs)
            row.throughput_ratio = statistics.median(p.throughput / d.throughput for d, p in pairs)
            rows.append(row)
        targets = evaluate_targets(rows)
        elapsed = time.monotonic() - started

        machine = f"{os.cpu_count()} CPUs, {platform.system()} {platform.release()}, {platform.machine()}"
        print()
        print(f"hmsproxy {__version__} benchmark: Hive 2.3 metastore (Derby) vs hmsproxy in front of it")
        print(f"machine: {machine}; Python {platform.python_version()}; thriftpy2 {thriftpy2.__version__}")
        print(f"{DB}.{TABLE}: {args.partitions} partitions; filter {FILTER!r}; {args.duration:g}s per run; "
              f"median of {args.repeats} interleaved runs per path{' (budget hit: fewer runs)' if truncated else ''}; "
              f"ratios: median of per-repeat proxy/direct pairs")  # fmt: skip
        print()
        print(render_table(rows))
        print()
        print(render_cpu(rows))
        print()
        for t in targets:
            print(f"{'PASS' if t['pass'] else 'MISS'}  {t['target']}: {t['value']:.2f}x")
        foreign = [s.foreign_cores for v in runs.values() for s in v if s.foreign_cores is not None]
        if foreign and max(foreign) > 0.25:
            print(f"note: other processes used up to {max(foreign):.2f} of {os.cpu_count()} cores during some runs "
                  f"(median {statistics.median(foreign):.2f}); figures from a busy machine are noisy")  # fmt: skip
        print(f"\n(total {elapsed:.0f}s)")

        if args.json:
            doc = {
                "hmsproxy_version": __version__,
                "machine": machine,
                "python": platform.python_version(),
                "thriftpy2": thriftpy2.__version__,
                "settings": {k: v for k, v in vars(args).items() if k != "json"},
                "rows": [asdict(r) for r in rows],
                "runs": [asdict(s) for v in runs.values() for s in v],
                "targets": targets,
                "elapsed_s": round(elapsed, 1),
            }
            Path(args.json).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
            log(f"wrote {args.json}")
        return 1 if args.strict and not all(t["pass"] for t in targets) else 0
    finally:
        if proxy is not None:
            proxy.stop()
        pool.close()
        if metastore is not None:
            metastore.stop()
        if args.keep_state:
            log(f"state kept in {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

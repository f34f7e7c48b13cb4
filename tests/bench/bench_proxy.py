"""Latency and throughput of hmsproxy against the metastore behind it.

Run with ``make bench`` or ``.venv/bin/python -m tests.bench.bench_proxy`` (see
docs/benchmark.md). Not a pytest test: the file name does not match ``test_*.py``
and it has no ``test_`` functions.

What it does, in one run (~1.5-2 minutes on 2 cores):

1. starts one real Hive metastore (``hmsproxy.dev.metastore``, state in a temp
   dir; 2.3 by default, ``--hive 3.1`` or ``--hive 4.0`` for the fetched 3.1.3 or
   4.0.1) and ``hmsproxy serve`` as a separate process with that metastore as its
   primary;
2. seeds ``bench.events`` (partitioned by ``ds string``, 200 partitions by
   default) directly on the metastore;
3. measures ``get_table`` and ``get_partitions_by_filter`` DIRECT (client ->
   metastore) and PROXY (client -> hmsproxy -> metastore) at 1 and at 16
   concurrent clients (on Hive 4.0.1, which has no ``get_table``, the DIRECT path
   calls ``get_table_req`` as a Hive 4 client does, while the PROXY path still
   calls ``get_table`` and hmsproxy translates it). Clients are separate
   processes (thriftpy2, Cython binary protocol over a buffered transport),
   forked before anything else starts, connected and warmed up before the
   clock starts and released together at one start time; each calls in a loop for a fixed duration and
   returns every call's latency. Both paths are measured in the same run,
   interleaved, so both see the same metastore state (GC, JIT, caches) and
   the same other load: at 1 client one client holds a direct and a proxied
   connection and alternates call by call; at 16 clients every client holds
   both and all switch path together every 250 ms (time slices on a shared
   clock). Which path goes first alternates between repeats. Medians over
   the repeats are reported, ratios are medians of the per-run ratios;
4. prints a table and the targets (proxy p50 <= 1.2x direct at 1 client,
   proxy throughput >= 0.8x direct at 16 clients), optionally writes JSON.

On Hive 2.3 (unless ``--no-waggle-dance``) the byte forwarder (``--floor``) and Waggle Dance
3.13.3 are measured as two more paths in the same runs, and the output ends with one
Markdown table of every figure of the four paths (tests/bench/bench_waggle_dance.py).

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

from tests.bench import bench_txn

DB = "bench"
TABLE = "events"
FILTER_DS = "2026-01-05"
FILTER = f"ds = '{FILTER_DS}'"

#: Targets: proxy p50 / direct p50 at 1 client, proxy / direct throughput at 16 clients. Both calls
#: take the relay (hmsproxy/protocol/relay.py) here, whose targets these are; ``--floor`` shows, in the same runs, what a proxy
#: that does nothing but copy bytes reaches on the same machine.
TARGET_P50_RATIO = 1.05
TARGET_THROUGHPUT_RATIO = 0.95


def _get_table_req(c):
    # What a Hive 4 client's getTable(db, table) sends (HiveMetaStoreClient: catalog set, "hive" by default).
    from hmsproxy.protocol import idl

    return c.get_table_req(idl.hive.GetTableRequest(dbName=DB, tblName=TABLE, catName="hive"))


#: The measured calls (the table's rows) ...
CALLS = {
    "get_table": lambda c: c.get_table(DB, TABLE),
    "get_partitions_by_filter": lambda c: c.get_partitions_by_filter(DB, TABLE, FILTER, -1),
}
#: ... and every method a path may send for one of them (the transactions' on both metastores).
METHODS = {**CALLS, "get_table_req": _get_table_req, **bench_txn.methods(DB, TABLE)}

#: --hive: the Hive version of the metastore, as hmsproxy.dev.metastore names it, and
#: its full version (the proxy config's hive-version, the header line).
HIVE_VERSIONS = {"2.3": "2.3", "3.1": "3.1.3", "4.0": "4.0.1"}

#: hive-site settings of the benchmark's metastore per version, on top of hmsproxy.dev's.
#: 4.0.1 with the DBCP pool hmsproxy.dev.metastore configures (commons-pool2 2.10.0)
#: hangs once ~10 clients call at once: handler threads wait in
#: GenericObjectPool.create() for good (with a larger maxPoolSize, sooner). HikariCP,
#: Hive 4's own default pool, serves 32 concurrent clients.
HIVE_CONF = {"4.0": {"datanucleus.connectionPoolingType": "HikariCP"}}


def path_methods(hive_version: str) -> dict[str, dict[str, str]]:
    """{call: {"direct": method, "proxy": method}}: what each path sends for a measured call.

    Hive 4.0.1 removed ``get_table``: there the direct path calls ``get_table_req``, as a
    Hive 4 client would; the proxy path calls ``get_table`` on every version (hmsproxy
    turns it into ``get_table_req`` for a 4.0.1 backend).
    """
    out = {call: {"direct": call, "proxy": call} for call in CALLS}
    if hive_version == "4.0":
        out["get_table"]["direct"] = "get_table_req"
    for methods in out.values():  # the byte forwarder (--floor) passes on what the client sends: direct's call
        methods["floor"] = methods["direct"]
        methods["wd"] = methods["direct"]  # Waggle Dance (2.3 only) forwards a 2.3 client's call
    return out


CLIENT_TIMEOUT_S = 30.0


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def make_client(host: str, port: int, timeout_s: float = CLIENT_TIMEOUT_S):
    """A thriftpy2 ThriftHiveMetastore client: Cython binary protocol, buffered transport."""
    import thriftpy2.rpc
    from thriftpy2.protocol import TCyBinaryProtocolFactory
    from thriftpy2.transport import TCyBufferedTransportFactory

    from hmsproxy.protocol import idl

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
    return "-" if value is None else format(value, fmt)


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


def snapshotter(pids: dict):
    """The ``snapshot`` of ClientPool.run: CPU seconds of each process in ``pids`` ({name: pid, or a
    tuple of pids whose CPU is summed}), the machine's busy CPU seconds and the time."""

    def cpu(pid):
        values = [_proc_cpu_s(p) for p in (pid if isinstance(pid, tuple) else (pid,))]
        return None if None in values else sum(values)

    def snapshot():
        snap = {k: cpu(v) for k, v in pids.items()}
        snap["busy"] = _busy_cpu_s()
        snap["wall"] = time.monotonic()
        return snap

    return snapshot


def _worker_main(conn) -> None:
    """One client process: serves ("prep", ...) / ("go", ...) requests until ("stop",).

    "prep" names one or more targets (host, port) and the method to send to each
    (a name in METHODS); the client opens a connection to each. Once released, it
    sends its calls to them in turn: call by call
    (slice_s == 0: call 1 to the first target, call 2 to the second, ...) or by
    time slice (slice_s > 0: all calls started in slice j go to target j mod k;
    all clients share the slice clock). Each call's latency is recorded per target.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when we stop
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            return
        if msg[0] == "stop":
            return
        clients = []
        try:
            _, targets, methods, warmup_calls = msg
            fns = [METHODS[m] for m in methods]
            for host, port in targets:
                clients.append(make_client(host, port))
            for _ in range(warmup_calls):
                for fn, client in zip(fns, clients):
                    fn(client)
            conn.send(("ready",))
            go = conn.recv()
            if go[0] != "go":
                continue
            _, start_at, duration_s, slice_s = go
            lats = [array.array("d") for _ in clients]
            k = len(clients)
            perf = time.perf_counter
            # time.monotonic and perf_counter are both CLOCK_MONOTONIC on Linux, so
            # start_at (from the parent) means the same instant in every process.
            while perf() < start_at:
                time.sleep(min(0.002, max(0.0, start_at - perf())))
            cpu0 = time.process_time()
            end_at = start_at + duration_s
            i = 0
            t1 = perf()
            while t1 < end_at:
                t0 = t1
                if slice_s:
                    i = int((t0 - start_at) / slice_s) % k
                fns[i](clients[i])
                t1 = perf()
                lats[i].append(t1 - t0)
                if not slice_s:
                    i = (i + 1) % k
            cpu = time.process_time() - cpu0
            conn.send(("done", [a.tobytes() for a in lats], t1, cpu))
        except BaseException:  # noqa: BLE001 - reported to the parent
            try:
                conn.send(("error", traceback.format_exc()))
            except (OSError, ValueError):
                return
        finally:
            for client in clients:
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

    def run(
        self, targets, call: str, clients: int, duration_s: float, warmup_calls: int, snapshot=dict, slice_s: float = 0.0, methods=None
    ) -> dict:
        """Prepare ``clients`` processes, release them together, collect latencies.

        ``targets``: list of (host, port); each client alternates over all of them,
        call by call (``slice_s`` 0) or in time slices of ``slice_s`` seconds.
        ``methods``: the method (a name in METHODS) sent to each target; default
        ``call`` to all.
        ``snapshot()`` is called once all clients are connected and warmed up, just
        before they are released, and again when the last one has finished.
        Returns latencies (one array per target, all clients together), the
        window (release until the last call ended), the clients' CPU time and
        both snapshots.
        """
        active = self.workers[:clients]
        methods = list(methods) if methods is not None else [call] * len(targets)
        for _, conn in active:
            conn.send(("prep", list(targets), methods, warmup_calls))
        deadline = time.monotonic() + 60
        for _, conn in active:
            self._recv(conn, deadline, f"prepare {call}")
        before = snapshot()
        start_at = time.monotonic() + 0.05
        for _, conn in active:
            conn.send(("go", start_at, duration_s, slice_s))
        deadline = start_at + duration_s + 60
        lats = [array.array("d") for _ in targets]
        last_end = start_at
        client_cpu = 0.0
        for _, conn in active:
            _, raws, end, cpu = self._recv(conn, deadline, f"run {call}")
            for lat, raw in zip(lats, raws):
                part = array.array("d")
                part.frombytes(raw)
                lat.extend(part)
            last_end = max(last_end, end)
            client_cpu += cpu
        after = snapshot()
        return {
            "latencies": lats,
            "window_s": last_end - start_at,
            "client_cpu_s": client_cpu,
            "before": before,
            "after": after,
            "slice_s": slice_s,
        }

    def close(self) -> None:
        for _proc, conn in self.workers:
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


def seed(metastore, partitions: int, hive_version: str = "2.3") -> None:
    """bench.events: 5 columns, partitioned by ds string, ``partitions`` partitions.

    The same calls on every Hive version (create_database, create_table,
    add_partitions in batches of 50); checked afterwards with the calls measured.
    """
    from hmsproxy.protocol import idl

    hive = idl.hive
    client = metastore.client()
    try:
        client.create_database(hive.Database(name=DB, description="hmsproxy benchmark", locationUri=None, parameters={}))
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
            tableName=TABLE,
            dbName=DB,
            owner="bench",
            sd=sd,
            partitionKeys=[hive.FieldSchema(name="ds", type="string", comment="event date")],
            parameters={"comment": "hmsproxy benchmark table"},
            tableType="MANAGED_TABLE",
        )
        client.create_table(table)
        # ~`partitions` consecutive days around FILTER_DS (which is one of them).
        first = dt.date.fromisoformat(FILTER_DS) - dt.timedelta(days=partitions // 2)
        days = [(first + dt.timedelta(days=i)).isoformat() for i in range(partitions)]
        assert FILTER_DS in days
        for i in range(0, len(days), 50):
            parts = []
            for ds in days[i : i + 50]:
                psd = copy.deepcopy(sd)
                parts.append(
                    hive.Partition(values=[ds], dbName=DB, tableName=TABLE, sd=psd, parameters={"numFiles": "1", "totalSize": "1024"})
                )
            client.add_partitions(parts)
        got = client.get_partitions_by_filter(DB, TABLE, FILTER, -1)
        assert len(got) == 1 and got[0].values == [FILTER_DS], got
        direct_get_table = METHODS[path_methods(hive_version)["get_table"]["direct"]](client)
        got_table = getattr(direct_get_table, "table", direct_get_table)  # GetTableResult or Table
        assert got_table.tableName == TABLE and [k.name for k in got_table.partitionKeys] == ["ds"], got_table
        assert len(client.get_partition_names(DB, TABLE, -1)) == partitions
    finally:
        client.close()


def write_proxy_config(
    path: Path,
    port: int,
    metastore_uri: str,
    hive_version: str = "2.3",
    *,
    cache: bool = False,
    relay: bool = True,
    store_url: str | None = None,
    federated: str | None = None,
) -> None:
    """``federated``: the URI of a second metastore, federated as ``fed`` (its databases are the
    proxy's fed_<name>), whose database ``bench`` is writable."""
    path.write_text(
        "# written by tests/bench/bench_proxy.py\n"
        "server:\n"
        "  host: 127.0.0.1\n"
        f"  port: {port}\n"
        "  transport: buffered\n" + ("" if relay else "  relay: false\n") + "database-resolution: PREFIXED\n"
        "primary-meta-store:\n"
        "  name: primary\n"
        f"  remote-meta-store-uris: {metastore_uri}\n"
        "  access-control-type: READ_AND_WRITE_AND_CREATE\n"
        f'  hive-version: "{hive_version}"\n'
        + ("  cache: {ttl-s: 600}\n" if cache else "")
        + (f"store:\n  url: {store_url}\n" if store_url else "")
        + (
            "federated-meta-stores:\n"
            f"  - name: {bench_txn.FED}\n"
            f"    remote-meta-store-uris: {federated}\n"
            "    access-control-type: READ_AND_WRITE_ON_DATABASE_WHITELIST\n"
            f"    writable-database-white-list: [{DB}]\n"
            f'    hive-version: "{hive_version}"\n'
            if federated
            else ""
        ),
        encoding="utf-8",
    )
    from hmsproxy.app import load_config

    load_config(path)  # fail here, with the loader's message, if the file is wrong


class ProxyProcess:
    """``hmsproxy serve --config FILE`` as a child process (or the profiled server below)."""

    def __init__(self, config: Path, log_path: Path, profile_out: Path | None = None, *, floor: bool = False, cwd: str | None = None):
        """`cwd`: where it runs (default: here); `python -m` imports hmsproxy from there first (another checkout)."""
        self.log_path = log_path
        # Its own pid file beside its log: a bench runs several proxies from one directory, and `serve`
        # refuses to start while the default .state/hmsproxy.pid names a live server.
        pid_file = log_path.with_suffix(".pid")
        self.cmd = [
            sys.executable,
            "-m",
            "hmsproxy.cli",
            "--log-level",
            "WARNING",
            "serve",
            "--config",
            str(config),
            "--pid-file",
            str(pid_file),
        ]
        if floor:
            self.cmd = [sys.executable, "-m", "tests.bench.raw_forwarder", str(config)]
        if profile_out is not None:
            self.cmd = [sys.executable, "-m", "tests.bench.bench_proxy", "--serve-profiled", str(config), str(profile_out)]
        self._log = open(log_path, "wb")
        self._launched = time.monotonic()
        #: Seconds from launch until get_all_databases answered (wait_ready).
        self.ready_s: float | None = None
        self.proc = subprocess.Popen(self.cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self._log, close_fds=True, cwd=cwd)
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
                    self.ready_s = time.monotonic() - self._launched
                    return
                finally:
                    client.close()
            except Exception:  # noqa: BLE001
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise RuntimeError(f"hmsproxy does not answer; log {self.log_path}:\n{self.tail()}") from None
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


def serve_profiled(config_path: str, out: str) -> int:
    """What ``hmsproxy serve --config`` does, with every client thread under cProfile.

    The profilers use each thread's CPU clock (time.thread_time), so time blocked
    in recv() is not counted. SIGUSR1 drops what was collected so far (the
    benchmark sends it after the warm-up); SIGTERM stops the server and writes the
    merged statistics (pstats format) to ``out``. cProfile's own overhead is large
    next to the small functions on the call path: read shares, not absolute times.
    """
    import cProfile
    import logging
    import pstats

    from hmsproxy import __version__
    from hmsproxy.app import build_handler, load_config
    from hmsproxy.downstream import server as server_mod

    logging.basicConfig(level=logging.WARNING)
    config = load_config(config_path)
    handler = build_handler(config)  # every feature, as `hmsproxy serve` runs them
    profiles: list = []
    lock = threading.Lock()
    serve_client = server_mod.ProxyServer._serve_client

    def profiled(self, conn, addr):
        prof = cProfile.Profile(timer=time.thread_time)
        with lock:
            profiles.append(prof)
        prof.enable()
        try:
            serve_client(self, conn, addr)
        finally:
            prof.disable()

    def forget(*_):
        # The benchmark's connections (and so these threads) end with each run:
        # dropping the profiles of the threads so far forgets the warm-up.
        with lock:
            profiles.clear()

    server_mod.ProxyServer._serve_client = profiled  # this process only
    server = server_mod.ProxyServer(handler, config.server.host, config.server.port, transport=config.server.transport)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGUSR1, forget)
    print(f"hmsproxy {__version__} (profiled) serving {server.uri}", flush=True)
    server.start()
    while not stop.wait(0.2):
        pass
    server.stop()
    handler.close()
    time.sleep(0.2)  # let client threads leave their profiled frames
    merged = None
    with lock:
        for prof in profiles:
            prof.disable()  # from another thread: a no-op for a thread still running
            prof.create_stats()
            if not prof.stats:
                continue
            if merged is None:
                merged = pstats.Stats(prof)
            else:
                merged.add(prof)
    if merged is not None:
        merged.dump_stats(out)
    return 0


def print_profile(path: Path, top: int = 25) -> None:
    import io
    import pstats

    if not path.exists():
        log(f"no profile written to {path}")
        return
    buf = io.StringIO()
    stats = pstats.Stats(str(path), stream=buf).strip_dirs()
    total = stats.total_tt
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    print(f"\nproxy profile (client threads, thread CPU time, {total:.2f}s in total; written to {path}):")
    print(buf.getvalue())


# --------------------------------------------------------------------------------------
# interleaved runs


def warm_up(pool: ClientPool, calls, paths, target, args) -> None:
    """Each call on each path alone with ``args.clients`` clients (JIT, connection set-up, caches): not measured.
    ``target(call, path)``: the (host, port) and the method (a name in METHODS) of a path's calls."""
    for call in calls:
        for path in paths:
            endpoint, method = target(call, path)
            pool.run([endpoint], call, args.clients, 0.75, args.warmup_calls, methods=[method])


def interleaved_runs(pool: ClientPool, cases, paths, target, args, snapshot, budget_end: float = math.inf):
    """Each case (call, clients) ``args.repeats`` times; ``target`` as for :func:`warm_up`.

    Every path is measured in the same run, interleaved: at 1 client call by call (one client, a
    connection per path), at N clients in time slices that all clients share. All paths so see the
    same metastore (GC, JIT, caches) and the same other load; which path goes first rotates between
    repeats. No run but the first repeat's starts after ``budget_end`` (time.monotonic()).
    Returns ({(call, clients, path): [RunStats, one a repeat]}, whether the budget left runs out).
    """
    runs: dict[tuple[str, int, str], list[RunStats]] = {}
    truncated = False
    sliced_s = len(paths) * max(1, round(args.duration / args.slice)) * args.slice
    for rep in range(args.repeats):
        order = paths[rep % len(paths) :] + paths[: rep % len(paths)]  # who goes first rotates
        for call, n in cases:
            run_s = len(paths) * args.duration if n == 1 else sliced_s
            if rep > 0 and time.monotonic() + run_s + 1 > budget_end:
                truncated = True
                continue
            picked = [target(call, p) for p in order]
            raw = pool.run(
                [endpoint for endpoint, _ in picked],
                call,
                n,
                run_s,
                args.warmup_calls,
                snapshot,
                slice_s=0.0 if n == 1 else args.slice,
                methods=[method for _, method in picked],
            )
            for i, path in enumerate(order):
                stats = summarize(path, call, n, i, raw)
                runs.setdefault((call, n, path), []).append(stats)
                log(
                    f"rep {rep + 1}/{args.repeats} {stats.call:<24} {stats.clients:>2} clients {stats.path:<6} "
                    f"p50 {stats.p50_ms:6.2f}ms p99 {stats.p99_ms:6.2f}ms {stats.throughput:6.0f}/s; "
                    f"CPU ms/call JVM {_f(stats.jvm_cpu_ms_per_call)} proxy {_f(stats.proxy_cpu_ms_per_call)}; "
                    f"other load {_f(stats.foreign_cores)} cores"
                )
    return runs, truncated


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
    #: The time the throughput is over: this path's share of the run (time slices) or
    #: the time spent in this path's calls (one client alternating call by call).
    path_time_s: float
    p50_ms: float
    p99_ms: float
    mean_ms: float
    throughput: float
    #: CPU milliseconds per call: the metastore JVM, the proxy process (or the forwarder's, path "floor"), the clients.
    jvm_cpu_ms_per_call: float | None
    proxy_cpu_ms_per_call: float | None
    client_cpu_ms_per_call: float
    #: CPU (in cores, averaged over the run) used by processes that are not part of the
    #: benchmark: other load on the machine, which skews a run.
    foreign_cores: float | None


def summarize(path: str, call: str, clients: int, index: int, raw: dict) -> RunStats:
    """Stats of target ``index`` (path ``path``) of a run that interleaved the paths.

    Throughput: one client alternating call by call: this path's calls / the time
    spent in them; time slices: this path's calls / its share of the run. JVM and
    client CPU per call are over all calls of the run (both paths); proxy CPU per
    call is over the proxied calls.
    """
    lat = sorted(raw["latencies"][index])
    n = len(lat)
    all_calls = sum(len(a) for a in raw["latencies"])
    before, after = raw["before"], raw["after"]

    def delta(key):
        a, b = before.get(key), after.get(key)
        return None if a is None or b is None else b - a

    def per_call(d, calls):
        return None if d is None or calls == 0 else d * 1000 / calls

    foreign = None
    if delta("busy") is not None and delta("wall"):
        ours = sum(delta(k) or 0.0 for k in ("jvm", "proxy", "floor", "wd", "self")) + raw["client_cpu_s"]
        foreign = max(0.0, delta("busy") - ours) / delta("wall")
    k = len(raw["latencies"])
    busy_s = raw["window_s"] / k if raw["slice_s"] else sum(lat)
    return RunStats(
        path=path,
        call=call,
        clients=clients,
        calls=n,
        path_time_s=busy_s,
        p50_ms=percentile(lat, 0.50) * 1000,
        p99_ms=percentile(lat, 0.99) * 1000,
        mean_ms=(sum(lat) / n * 1000) if n else math.nan,
        throughput=n / busy_s if busy_s > 0 else math.nan,
        jvm_cpu_ms_per_call=per_call(delta("jvm"), all_calls),
        proxy_cpu_ms_per_call=per_call(delta(path), n) if path != "direct" else None,  # hmsproxy's, the forwarder's or Waggle Dance's
        client_cpu_ms_per_call=per_call(raw["client_cpu_s"], all_calls),
        foreign_cores=foreign,
    )


@dataclass
class Row:
    call: str
    clients: int
    direct: dict = field(default_factory=dict)  # median over repeats of each metric
    proxy: dict = field(default_factory=dict)
    p50_ratio: float = math.nan
    throughput_ratio: float = math.nan
    #: What each path sent: differs from ``call`` for get_table on Hive 4.0.1 (direct: get_table_req).
    direct_method: str = ""
    proxy_method: str = ""
    #: The raw byte forwarder measured in the same runs (--floor): its medians and its ratios to direct.
    floor: dict | None = None
    floor_p50_ratio: float = math.nan
    floor_throughput_ratio: float = math.nan
    #: Waggle Dance measured in the same runs (tests/bench/bench_waggle_dance.py): its medians and ratios to direct.
    wd: dict | None = None
    wd_p50_ratio: float = math.nan
    wd_throughput_ratio: float = math.nan

    @property
    def label(self) -> str:
        """The table's call column: the call, or "direct's / proxy's" where the paths differ."""
        if self.direct_method in ("", self.call) and self.proxy_method in ("", self.call):
            return self.call
        return f"{self.direct_method or self.call} / {self.proxy_method or self.call}"


def ratios(direct: list[RunStats], other: list[RunStats]) -> tuple[float, float]:
    """(p50, throughput) of `other` to direct: the median over the repeats of the ratio within one run
    (NaN for a run in which direct made no call: one can outlast its time slices on a loaded machine)."""
    pairs = list(zip(direct, other, strict=True))

    def over(a: float, b: float) -> float:
        return a / b if b else math.nan

    return statistics.median(over(o.p50_ms, d.p50_ms) for d, o in pairs), statistics.median(
        over(o.throughput, d.throughput) for d, o in pairs
    )


def make_row(call: str, clients: int, runs: dict, direct_method: str = "", proxy_method: str = "") -> Row:
    """The table row of a case from :func:`interleaved_runs`' runs: medians and ratios to direct (and the floor's, if measured)."""
    direct, proxied = runs[(call, clients, "direct")], runs[(call, clients, "proxy")]
    row = Row(call, clients, median_of(direct), median_of(proxied), direct_method=direct_method, proxy_method=proxy_method)
    row.p50_ratio, row.throughput_ratio = ratios(direct, proxied)
    forwarded = runs.get((call, clients, "floor"))
    if forwarded:
        row.floor = median_of(forwarded)
        row.floor_p50_ratio, row.floor_throughput_ratio = ratios(direct, forwarded)
    waggled = runs.get((call, clients, "wd"))
    if waggled:
        row.wd = median_of(waggled)
        row.wd_p50_ratio, row.wd_throughput_ratio = ratios(direct, waggled)
    return row


def median_of(runs: list[RunStats]) -> dict:
    out = {}
    for key in (
        "p50_ms",
        "p99_ms",
        "mean_ms",
        "throughput",
        "jvm_cpu_ms_per_call",
        "proxy_cpu_ms_per_call",
        "client_cpu_ms_per_call",
        "foreign_cores",
    ):
        values = [getattr(r, key) for r in runs if getattr(r, key) is not None]
        out[key] = statistics.median(values) if values else None
    out["calls"] = sum(r.calls for r in runs)
    out["repeats"] = len(runs)
    return out


def load_note(runs: dict, cores: int | None) -> str | None:
    """A line for runs in which other processes used more than a quarter of a core, else None."""
    foreign = [s.foreign_cores for v in runs.values() for s in v if s.foreign_cores is not None]
    if not foreign or max(foreign) <= 0.25:
        return None
    return (
        f"note: other processes used up to {max(foreign):.2f} of {cores} cores during some runs "
        f"(median {statistics.median(foreign):.2f}); figures from a busy machine are noisy"
    )


def render_table(rows: list[Row]) -> str:
    differ = any(r.label != r.call for r in rows)
    # Where a path sends another method than the call, the column names both.
    title = "call (direct / proxy)" if differ else "call"
    width = max([26] + [len(r.label) + 2 for r in rows])
    head = (
        f"{title:<{width}}{'clients':>8} | {'direct p50':>10}{'p99':>10} | {'proxy p50':>10}{'p99':>10} | "
        f"{'p50 x':>6} | {'direct/s':>9}{'proxy/s':>9} | {'tput x':>6}"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        d, p = r.direct, r.proxy
        lines.append(
            f"{r.label:<{width}}{r.clients:>8} | {d['p50_ms']:>8.2f}ms{d['p99_ms']:>8.2f}ms | "
            f"{p['p50_ms']:>8.2f}ms{p['p99_ms']:>8.2f}ms | {r.p50_ratio:>5.2f}x | "
            f"{d['throughput']:>9.0f}{p['throughput']:>9.0f} | {r.throughput_ratio:>5.2f}x"
        )
    return "\n".join(lines)


def render_cpu(rows: list[Row]) -> str:
    def fmt(v, width=6):
        return " " * (width - 1) + "-" if v is None else f"{v:>{width}.2f}"

    head = f"{'CPU ms per call (median)':<26}{'clients':>8} | {'JVM':>6} {'client':>7} {'proxy':>7} | {'other load (cores)':>18}"
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(
            f"{r.call:<26}{r.clients:>8} | {fmt(r.proxy['jvm_cpu_ms_per_call'])} "
            f"{fmt(r.proxy['client_cpu_ms_per_call'], 7)} {fmt(r.proxy['proxy_cpu_ms_per_call'], 7)}"
            f" | {fmt(r.proxy['foreign_cores'], 18)}"
        )
    return "\n".join(lines)


def render_floor(rows: list[Row]) -> str:
    """The byte forwarder's ratios beside hmsproxy's, from the same runs (--floor)."""
    head = (
        f"{'same runs: proxy vs floor':<26}{'clients':>8} | {'proxy p50 x':>11}{'floor p50 x':>12} | "
        f"{'proxy tput x':>12}{'floor tput x':>13} | {'CPU ms/call: proxy':>18}{'floor':>7}"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(
            f"{r.call:<26}{r.clients:>8} | {r.p50_ratio:>10.2f}x{r.floor_p50_ratio:>11.2f}x | {r.throughput_ratio:>11.2f}x"
            f"{r.floor_throughput_ratio:>12.2f}x | {_f(r.proxy['proxy_cpu_ms_per_call']):>18}{_f(r.floor['proxy_cpu_ms_per_call']):>7}"
        )
    return "\n".join(lines)


def evaluate_targets(rows: list[Row]) -> list[dict]:
    targets = []
    for r in rows:
        if r.clients == 1:
            ok = r.p50_ratio <= TARGET_P50_RATIO
            targets.append(
                {
                    "target": f"proxy p50 <= {TARGET_P50_RATIO}x direct, 1 client, {r.call}",
                    "value": round(r.p50_ratio, 3),
                    "pass": ok,
                    **({"floor": round(r.floor_p50_ratio, 3)} if r.floor else {}),
                }
            )
    for r in rows:
        if r.clients > 1:
            ok = r.throughput_ratio >= TARGET_THROUGHPUT_RATIO
            targets.append(
                {
                    "target": f"proxy throughput >= {TARGET_THROUGHPUT_RATIO}x direct, {r.clients} clients, {r.call}",
                    "value": round(r.throughput_ratio, 3),
                    "pass": ok,
                    **({"floor": round(r.floor_throughput_ratio, 3)} if r.floor else {}),
                }
            )
    return targets


# --------------------------------------------------------------------------------------


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="python -m tests.bench.bench_proxy", description=__doc__.split("\n\n")[0])
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    p.add_argument(
        "--hive",
        choices=sorted(HIVE_VERSIONS),
        default="2.3",
        help="Hive version of the metastore (default 2.3; 3.1 and 4.0 are fetched with Maven on first use)",
    )
    p.add_argument("--clients", type=int, default=16, help="concurrent clients of the concurrent runs (default 16)")
    p.add_argument("--duration", type=float, default=1.5, help="seconds per path and repeat (default 1.5)")
    p.add_argument("--slice", type=float, default=0.25, help="seconds per time slice of the concurrent runs (default 0.25)")
    p.add_argument("--repeats", type=int, default=5, help="measured runs per case, each measuring both paths (default 5)")
    p.add_argument("--partitions", type=int, default=200, help="partitions of bench.events (default 200)")
    p.add_argument("--warmup-calls", type=int, default=5, help="calls each client makes before the clock starts (default 5)")
    p.add_argument("--budget", type=float, help="seconds after which no new run starts (default 170, 340 with the floor and Waggle Dance)")
    p.add_argument("--strict", action="store_true", help="exit with status 1 if a target is missed")
    p.add_argument("--no-cache", action="store_true", help="leave out the metadata cache's runs (tests/bench/bench_cache.py)")
    p.add_argument(
        "--txn-slice",
        type=float,
        default=1.0,
        help="seconds per time slice of the transactions' concurrent runs, whose calls take 0.2-0.5 s at 16 clients; "
        "each path gets 3 slices a run, and a 1-client run lasts as long (default 1.0)",
    )
    p.add_argument("--txn-repeats", type=int, default=3, help="measured runs per transactions' case (default 3)")
    p.add_argument(
        "--no-txn",
        action="store_true",
        help="leave out the transactions' and locks' runs and their second metastore (tests/bench/bench_txn.py)",
    )
    p.add_argument(
        "--floor",
        action="store_true",
        help="also measure a raw byte forwarder (tests/bench/raw_forwarder.py) in front of the same metastore, "
        "as a third path interleaved in the same runs: the floor of any Python proxy on this machine, beside hmsproxy",
    )
    p.add_argument(
        "--no-waggle-dance",
        action="store_true",
        help="leave out Waggle Dance 3.13.3 (tests/bench/bench_waggle_dance.py; fetched with Maven once), measured by default "
        "on --hive 2.3 as a fourth path beside direct, the floor (then on too) and hmsproxy, in the same runs",
    )
    p.add_argument(
        "--wd-no-audit", action="store_true", help="run Waggle Dance with its audit line per call off (default: on, as it ships)"
    )
    p.add_argument(
        "--big-partitions", type=int, default=10_000, help="partitions of the get_partitions runs (tests/bench/bench_relay.py); 0: none"
    )
    p.add_argument("--big-repeats", type=int, default=5, help="timed get_partitions calls per path (default 5)")
    p.add_argument(
        "--profile-proxy",
        metavar="FILE",
        help="run the proxy under cProfile (per thread, CPU time) and write pstats to FILE; "
        "slows the proxy down, so the figures of such a run are not comparable",
    )
    p.add_argument("--keep-state", action="store_true", help="keep the temp dir (logs, Derby) after the run")
    return p.parse_args(argv)


def _java_version() -> str:
    """The version of the java Waggle Dance runs on (`java -version`'s first line, quoted part)."""
    from hmsproxy.dev.jvm import java_executable

    out = subprocess.run([java_executable(), "-version"], capture_output=True, text=True, timeout=30).stderr
    first = out.splitlines()[0] if out else "?"
    return first.split('"')[1] if '"' in first else first


def _sigterm(*_):
    raise SystemExit(143)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--serve-profiled"]:  # internal: the proxy process of --profile-proxy
        return serve_profiled(argv[1], argv[2])
    args = parse_args(argv)
    if args.clients < 2:
        raise SystemExit("--clients must be at least 2")
    # Waggle Dance 3.13.3 is built for Hive 2.3 metastores; the floor is its comparison's baseline.
    with_wd = args.hive == "2.3" and not args.no_waggle_dance
    args.floor = args.floor or with_wd
    if args.budget is None:
        args.budget = 340 if with_wd else 170
    started = time.monotonic()
    budget_end = started + args.budget
    signal.signal(signal.SIGTERM, _sigterm)

    import thriftpy2

    from hmsproxy import __version__
    from hmsproxy.dev.metastore import start_metastores
    from hmsproxy.dev.ports import free_port
    from hmsproxy.protocol import idl as _idl  # noqa: F401 - loaded once, before the clients fork
    from hmsproxy.upstream.translations import TRANSLATIONS

    tmp = Path(tempfile.mkdtemp(prefix="hmsproxy-bench-"))
    # Fork the clients first: no threads, JVMs or sockets exist yet to leak into them.
    # (They are daemon processes: should ClientPool() itself fail, they die with us.)
    pool = ClientPool(args.clients)
    metastore = None
    proxy = None
    floor = None
    wd = None
    try:
        log(f"starting a Hive {HIVE_VERSIONS[args.hive]} metastore (state in {tmp}) ...")
        (metastore,) = start_metastores(
            # No notification listener: nothing measured reads events, and Hive 3.1's NOTIFICATION_LOG
            # column is too short for the add_partitions events of the seeding.
            1,
            tmp / "hms",
            log=lambda m: None,
            timeout_s=90,
            hive_versions=[args.hive],
            hive_conf=HIVE_CONF.get(args.hive),
            notifications=False,
        )
        log(
            f"metastore {metastore.uri} ready after {metastore.last_start_seconds:.1f}s; seeding "
            f"{DB}.{TABLE} with {args.partitions} partitions ..."
        )
        t0 = time.monotonic()
        seed(metastore, args.partitions, args.hive)
        log(f"seeded in {time.monotonic() - t0:.1f}s; starting hmsproxy ...")

        proxy_port = free_port()
        config_path = tmp / "hmsproxy.yml"
        write_proxy_config(config_path, proxy_port, metastore.uri, HIVE_VERSIONS[args.hive])
        profile_out = Path(args.profile_proxy).resolve() if args.profile_proxy else None
        proxy = ProxyProcess(config_path, tmp / "hmsproxy.log", profile_out)
        proxy.wait_ready("127.0.0.1", proxy_port)
        log(f"{proxy.banner} (pid {proxy.pid})")

        endpoints = {"direct": ("127.0.0.1", metastore.port), "proxy": ("127.0.0.1", proxy_port)}
        methods = path_methods(args.hive)
        pids = {"jvm": metastore.pid, "proxy": proxy.pid, "self": os.getpid()}
        if args.floor:
            floor_port = free_port()
            write_proxy_config(tmp / "floor.yml", floor_port, metastore.uri, HIVE_VERSIONS[args.hive])
            floor = ProxyProcess(tmp / "floor.yml", tmp / "floor.log", floor=True)
            floor.wait_ready("127.0.0.1", floor_port)
            log(f"{floor.banner} (pid {floor.pid})")
            endpoints["floor"] = ("127.0.0.1", floor_port)
            pids["floor"] = floor.pid
        if with_wd:
            from tests.bench import bench_waggle_dance

            wd, wd_port = bench_waggle_dance.start(tmp, metastore.uri, log, audit=not args.wd_no_audit)
            log(f"Waggle Dance answered after {wd.ready_s:.1f}s (pid {wd.pid})")
            endpoints["wd"] = ("127.0.0.1", wd_port)
            pids["wd"] = wd.pid
        paths = tuple(endpoints)

        snapshot = snapshotter(pids)
        # Warm-up of both paths and both calls (JIT, connection set-up, caches): not measured.
        log("warming up both paths ...")

        def target(call: str, path: str) -> tuple[tuple[str, int], str]:
            return endpoints[path], methods[call][path]

        warm_up(pool, CALLS, paths, target, args)
        if with_wd:  # Waggle Dance's JIT needs more than the others' warm-up (seen: its p50 still falling in the first repeats)
            warm_up(pool, CALLS, ("wd",), target, args)
        if profile_out is not None:
            os.kill(proxy.pid, signal.SIGUSR1)  # profile the measured runs only

        cases = [(call, n) for n in (1, args.clients) for call in CALLS]
        sliced_s = len(paths) * max(1, round(args.duration / args.slice)) * args.slice
        runs, truncated = interleaved_runs(pool, cases, paths, target, args, snapshot, budget_end)
        resident = bench_waggle_dance.resident_mib({p: pids[p] for p in ("proxy", "floor", "wd")}) if with_wd else {}
        rows = [make_row(call, n, runs, methods[call]["direct"], methods[call]["proxy"]) for call, n in cases]
        targets = evaluate_targets(rows)
        elapsed = time.monotonic() - started

        machine = f"{os.cpu_count()} CPUs, {platform.system()} {platform.release()}, {platform.machine()}"
        print()
        in_front = "hmsproxy and a raw byte forwarder (--floor)" if args.floor else "hmsproxy"
        if with_wd:
            in_front = f"hmsproxy, a raw byte forwarder and Waggle Dance {bench_waggle_dance.waggle_dance.VERSION}"
        print(f"hmsproxy {__version__} benchmark: Hive {HIVE_VERSIONS[args.hive]} metastore (Derby) vs {in_front} in front of it")
        print(f"machine: {machine}; Python {platform.python_version()}; thriftpy2 {thriftpy2.__version__}")
        print(
            f"{DB}.{TABLE}: {args.partitions} partitions; filter {FILTER!r}; {args.repeats} repeats"
            f"{' (budget hit: fewer runs)' if truncated else ''}, medians shown"
        )
        print(
            f"each repeat is one run in which {' and '.join(paths)} calls are interleaved: at 1 client call by call "
            f"({len(paths) * args.duration:g}s), at {args.clients} clients in {args.slice * 1000:g} ms time slices ({sliced_s:g}s)"
        )
        print("ratios (x): median over the repeats of proxy/direct within one run; throughput at 1 client = 1 / mean latency")
        if HIVE_CONF.get(args.hive):
            print("metastore settings: " + ", ".join(f"{k}={v}" for k, v in HIVE_CONF[args.hive].items()))
        if args.hive != "2.3":  # (2.3's output stays as it was)
            for call, m in methods.items():
                if m["direct"] == m["proxy"]:
                    print(f"{call}: both paths call {call}")
                else:
                    tr = TRANSLATIONS.get(m["proxy"])
                    sent = tr.target(getattr(_idl.HmsProxy, m["proxy"] + "_args")()) if tr else m["proxy"]
                    print(
                        f"{call}: DIRECT calls {m['direct']} (as a Hive {args.hive} client does), PROXY calls {m['proxy']} "
                        f"(hmsproxy sends it to the {HIVE_VERSIONS[args.hive]} metastore as {sent})"
                    )
        print()
        print(render_table(rows))
        print()
        print(render_cpu(rows))
        print()
        if "floor" in paths:
            print(render_floor(rows))
            print()
        for t in targets:
            floor_note = f" (floor in the same runs: {t['floor']:.2f}x)" if "floor" in t else ""
            print(f"{'PASS' if t['pass'] else 'MISS'}  {t['target']}: {t['value']:.2f}x{floor_note}")
        note = load_note(runs, os.cpu_count())
        if note:
            print(note)
        print(f"\n(total {elapsed:.0f}s)")

        cache_lines: list[str] = []
        if not args.no_cache:
            from tests.bench import bench_cache

            log("starting a second hmsproxy with the metadata cache on ...")
            cached, cached_port = bench_cache.start_cached_proxy(tmp, metastore.uri, HIVE_VERSIONS[args.hive])
            try:
                cache_lines = bench_cache.measure(
                    pool, {**endpoints, "cached": ("127.0.0.1", cached_port)}, methods["get_table"]["proxy"], args, snapshot, log
                )
            finally:
                cached.stop()
            print()
            print("\n".join(cache_lines))

        relay_lines: list[str] = []
        relay: dict = {}
        if args.big_partitions:
            from tests.bench import bench_relay

            log(f"seeding {DB}.{bench_relay.BIG_TABLE} with {args.big_partitions:,} partitions ...")
            answer_bytes = bench_relay.seed_big(metastore, args.big_partitions)
            started = bench_relay.start_proxies(tmp, metastore.uri, HIVE_VERSIONS[args.hive])
            # The floor and Waggle Dance are the processes of the runs above (hmsproxy's fast path a fresh one).
            beside = {p: endpoints[p] for p in ("floor", "wd") if with_wd}
            try:
                relay_lines, relay = bench_relay.measure(
                    {"direct": endpoints["direct"], **{p: ("127.0.0.1", port) for p, (_, port) in started.items()}, **beside},
                    {**{p: process.pid for p, (process, _) in started.items()}, **{p: pids[p] for p in beside}},
                    args.big_repeats,
                    answer_bytes,
                    args.big_partitions,
                    log,
                )
            finally:
                for process, _ in started.values():
                    process.stop()
            print()
            print("\n".join(relay_lines))

        wd_lines: list[str] = []
        wd_targets: list = []
        if with_wd:
            startup = {"floor": floor.ready_s, "proxy": proxy.ready_s, "wd": wd.ready_s}
            relay_title = f"get_partitions of {args.big_partitions:,} partitions" if relay else ""
            table, wd_targets = bench_waggle_dance.comparison(rows, relay, resident, startup, relay_title)
            wd_lines = [
                f"Waggle Dance {bench_waggle_dance.waggle_dance.VERSION} beside hmsproxy, the floor and direct, all from this one run "
                f"(Hive {HIVE_VERSIONS[args.hive]} metastore; command: python -m tests.bench.bench_proxy {' '.join(argv)}".rstrip()
                + ")",
                f"Waggle Dance: JVM defaults (java {_java_version()}), its default logging: "
                + ("INFO with its audit line per call" if not args.wd_no_audit else "audit line off (--wd-no-audit)")
                + ", to a file; hmsproxy: its defaults (audit off), log level WARNING.",
                "In brackets: the median over the repeats of the path's / direct's ratio within one run (p50, throughput, "
                "time); memory: VmRSS after the call runs (VmHWM, the peak, in brackets); hmsproxy's get_partitions row "
                "is a fresh hmsproxy process with the same config (its relay), the floor's and Waggle Dance's the processes above.",
                "",
                *table,
                "",
                *(f"{'PASS' if ok else 'MISS'}  {text}" for text, ok in wd_targets),
            ]
            if note:
                wd_lines.append(note)
            print()
            print("\n".join(wd_lines))

        txn_rows: list[Row] = []
        txn_runs: dict = {}
        txn_lines: list[str] = []
        if not args.no_txn:
            with bench_txn.stack(tmp, args.hive, args.clients, log) as (txn_endpoints, txn_pids):
                txn_rows, txn_runs, txn_lines = bench_txn.measure(pool, txn_endpoints, txn_pids, args, log)
            print()
            print("\n".join(txn_lines))

        if args.json:
            doc = {
                "hmsproxy_version": __version__,
                "hive_version": HIVE_VERSIONS[args.hive],
                "hive_conf": HIVE_CONF.get(args.hive, {}),
                "methods": methods,
                "machine": machine,
                "python": platform.python_version(),
                "thriftpy2": thriftpy2.__version__,
                "settings": {k: v for k, v in vars(args).items() if k != "json"},
                "rows": [asdict(r) for r in rows + txn_rows],
                "runs": [asdict(s) for v in (*runs.values(), *txn_runs.values()) for s in v],
                "targets": targets,
                "cache": cache_lines,
                "relay": relay_lines,
                "waggle_dance": wd_lines,
                "txn": txn_lines,
                "elapsed_s": round(elapsed, 1),
            }
            Path(args.json).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
            log(f"wrote {args.json}")
        if profile_out is not None:
            proxy.stop()
            print_profile(profile_out)
        return 1 if args.strict and not all(t["pass"] for t in targets) else 0
    finally:
        for process in (proxy, floor, wd):
            if process is not None:
                process.stop()
        pool.close()
        if metastore is not None:
            metastore.stop()
        if args.keep_state:
            log(f"state kept in {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

"""The relay's part of ``make bench``: get_partitions of many partitions (``--big-partitions``,
10,000 by default) direct vs through hmsproxy's fast path (answers relayed undecoded) vs its full
path (``relay: false``), with each proxy process's memory growth. tests/bench/bench_proxy.py runs
it after the other rows, against the same metastore.

Paths: ``direct``; ``fast`` (a Hive 2.3 client's call, ``get_partitions('bench', ...)``);
``fast-h3`` (a separate relaying proxy, called as a Hive 3.1 HiveMetaStoreClient does:
``get_partitions('@hive#bench', ...)``); ``full`` (a proxy with ``relay: false``).

On a Hive 2.3 metastore, which leaves the Hive 3 catalog unset in each Partition, the fast path
inserts it as it copies (hmsproxy/protocol/relay.py); on 3.1 and 4.0 the answer goes on as it is. The
warm-up round checks that the proxies' answers are equal and hold the metastore's partitions.

Alone (``python -m tests.bench.bench_relay --sizes 10000,100000``) it starts its own Hive 2.3
metastore and grows bench.big to each size in turn, with fresh proxies for each. The metastore's
database is a self-started PostgreSQL cluster by default, the partitions written into it with SQL
(tests/support/bulk_partitions.py: 100,000 in seconds, checked through the metastore afterwards);
``--store derby`` keeps the Derby database and ``add_partitions`` (2,000-4,000 partitions a minute).
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

BIG_TABLE = "big"
#: The database as each path's client names it: a Hive 3.1 client prepends the catalog.
NAMED_AS = {"fast-h3": "@hive#bench"}
#: Target: fast path get_partitions latency / direct.
TARGET_RATIO = 1.1
#: Target: the relaying proxy's memory growth (peak - start) / the answer's size.
TARGET_MEMORY_SHARE = 0.1


#: Each seeded partition's parameters (besides transient_lastDdlTime, which the metastore sets).
PARAMETERS = {"numFiles": "1"}


def seed_big(metastore, partitions: int, have: int = 0, batch: int = 1000) -> int:
    """bench.big with `partitions` partitions (bench.events' columns) through `add_partitions`,
    from `have` made before (0: the table too); returns the answer's size in bytes."""
    import copy

    from hmsproxy.protocol import idl
    from tests.bench.bench_proxy import DB

    client = metastore.client(timeout_s=600)  # 1,000 partitions a call: minutes on a loaded 2-core machine
    try:
        if not have:
            _create_big(client)
        sd = client.get_table(DB, BIG_TABLE).sd
        for start in range(have, partitions, batch):
            parts = []
            for values in _values(start, min(partitions, start + batch)):
                psd = copy.deepcopy(sd)
                psd.location = f"{sd.location}/ds={values[0]}"
                parts.append(idl.hive.Partition(values=values, dbName=DB, tableName=BIG_TABLE, sd=psd, parameters=dict(PARAMETERS)))
            client.add_partitions(parts)
        return _answer_bytes(client, partitions)
    finally:
        client.close()


def seed_big_sql(metastore, conn, partitions: int, have: int = 0) -> int:
    """The same partitions written into the metastore's PostgreSQL database (`conn`, psycopg2) in
    one transaction (tests/support/bulk_partitions.py), then checked through the metastore."""
    from tests.bench.bench_proxy import DB
    from tests.support.bulk_partitions import insert_partitions, verify_partitions

    client = metastore.client(timeout_s=600)
    try:
        if not have:
            _create_big(client)
        values = _values(have, partitions)
        insert_partitions(conn, DB, BIG_TABLE, values, PARAMETERS)
        assert verify_partitions(client, DB, BIG_TABLE, values, PARAMETERS) == partitions
        return _answer_bytes(client, partitions)
    finally:
        client.close()


def _values(start: int, end: int) -> list[list[str]]:
    return [[f"p{i:06d}"] for i in range(start, end)]


def _create_big(client) -> None:
    """bench.big: bench.events' columns and partition key, its own location."""
    import copy

    from tests.bench.bench_proxy import DB, TABLE

    table = copy.deepcopy(client.get_table(DB, TABLE))
    table.tableName = BIG_TABLE
    table.sd.location = None
    client.create_table(table)


def _answer_bytes(client, partitions: int) -> int:
    """get_partitions(bench.big)'s answer size, once it holds `partitions` partitions."""
    from thriftpy2.utils import serialize

    from hmsproxy.protocol import idl
    from tests.bench.bench_proxy import DB

    answer = client.get_partitions(DB, BIG_TABLE, -1)
    assert len(answer) == partitions
    return len(serialize(idl.HmsProxy.get_partitions_result(success=answer)))


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
    Paths beyond direct, the fast ones and full (the byte forwarder, Waggle Dance) are timed the same way and checked against direct."""
    from tests.bench.bench_proxy import DB, _proc_cpu_s, make_client

    clients = {path: make_client(*endpoints[path], timeout_s=600) for path in endpoints}
    try:
        for path in endpoints:  # a small call first: memory from here on is what the big answers take
            clients[path].get_table(NAMED_AS.get(path, DB), BIG_TABLE)
        before = {path: rss_kib(pid) for path, pid in pids.items()}
        cpu = {path: 0.0 for path in pids}
        times: dict[str, list[float]] = {path: [] for path in endpoints}
        first: dict[str, list] = {}
        for rep in range(repeats + 1):
            order = list(endpoints) if rep % 2 == 0 else list(reversed(endpoints))
            for path in order:
                cpu0 = _proc_cpu_s(pids.get(path))
                t0 = time.perf_counter()
                got = clients[path].get_partitions(NAMED_AS.get(path, DB), BIG_TABLE, -1)
                elapsed = time.perf_counter() - t0
                if rep and path in pids:
                    cpu[path] += (_proc_cpu_s(pids[path]) or 0.0) - (cpu0 or 0.0)
                assert len(got) == partitions
                if rep:  # the first round warms up, and its answers are compared below
                    times[path].append(elapsed)
                else:
                    first[path] = got
                del got
                settle(pids)
            if not rep:
                for path in first:
                    if path.startswith("fast"):
                        assert first[path] == first["full"], f"the {path} path's answer differs from the full path's"
                    assert [p.values for p in first[path]] == [p.values for p in first["direct"]], path
                assert all(p.catName is not None for p in first["fast"])
                first.clear()
            log(f"relay rep {rep}/{repeats}: " + ", ".join(f"{p} {times[p][-1] if times[p] else 0:.2f}s" for p in endpoints))
        after = {path: rss_kib(pid) for path, pid in pids.items()}
    finally:
        for c in clients.values():
            c.close()
    med = {p: statistics.median(v) for p, v in times.items()}
    others = [p for p in endpoints if p not in ("direct", "full") and not p.startswith("fast")]
    lines = [
        f"get_partitions of {partitions:,} partitions ({answer_bytes / 1e6:.1f} MB answer): direct vs proxy fast path vs full path"
        + "".join(f" vs {p}" for p in others),
        f"{'path':<10}{'median (s)':>12}{'x direct':>10}{'proxy CPU s/call':>18}{'proxy RSS growth (peak - warm)':>34}{'x answer':>10}",
    ]
    for path in endpoints:
        growth = proxy_cpu = share = ""
        if path in pids:
            grown = (after[path][1] - before[path][0]) * 1024
            growth, share = f"{grown / 2**20:.1f} MiB", f"{grown / answer_bytes:.3f}"
            proxy_cpu = f"{cpu[path] / repeats:.3f}"
        lines.append(f"{path:<10}{med[path]:>12.3f}{med[path] / med['direct']:>9.2f}x{proxy_cpu:>18}{growth:>34}{share:>10}")
    for path in (p for p in endpoints if p.startswith("fast")):
        ratio = med[path] / med["direct"]
        lines.append(f"{'PASS' if ratio <= TARGET_RATIO else 'MISS'}  {path} get_partitions <= {TARGET_RATIO}x direct: {ratio:.2f}x")
        grown = (after[path][1] - before[path][0]) * 1024
        passed = grown < answer_bytes * TARGET_MEMORY_SHARE
        lines.append(
            f"{'PASS' if passed else 'MISS'}  {path} proxy memory growth < {TARGET_MEMORY_SHARE} of the answer: {grown / answer_bytes:.3f}"
        )
    growth_kib = {path: (after[path][1] - before[path][0]) if path in pids else None for path in endpoints}
    return lines, {path: (med[path], growth_kib[path]) for path in endpoints}


def settle(pids: dict, quiet_cpu_s: float = 0.01, interval_s: float = 0.2, limit_s: float = 15.0) -> None:
    """Wait (at most `limit_s`) until the proxy processes are idle: after a big answer the full path's
    proxy frees hundreds of MiB of decoded objects, and on 2 cores that work would slow whichever
    path is called next (at 100,000 partitions the path after `full` measured 1.2-7.5 s slower)."""
    from tests.bench.bench_proxy import _proc_cpu_s

    def busy() -> float:
        return sum(_proc_cpu_s(pid) or 0.0 for pid in pids.values())

    deadline = time.monotonic() + limit_s
    before = busy()
    while time.monotonic() < deadline:
        time.sleep(interval_s)
        now = busy()
        if now - before < quiet_cpu_s:
            return
        before = now


def start_proxies(tmp: Path, metastore_uri: str, hive_version: str, *, floor: bool = False) -> dict:
    """Fresh proxy processes (their memory starts here): {"fast": (process, port), "fast-h3": ..., "full": ...},
    and with `floor` the raw byte forwarder (tests/bench/raw_forwarder.py) as "floor"."""
    from hmsproxy.dev.ports import free_port
    from tests.bench.bench_proxy import ProxyProcess, write_proxy_config

    started = {}
    try:
        for path, relay in (("fast", True), ("fast-h3", True), ("full", False), ("floor", None))[: None if floor else 3]:
            port = free_port()
            config = tmp / f"hmsproxy-{path}.yml"
            write_proxy_config(config, port, metastore_uri, hive_version, relay=bool(relay))
            started[path] = (ProxyProcess(config, tmp / f"hmsproxy-{path}.log", floor=relay is None), port)
            started[path][0].wait_ready("127.0.0.1", port)
    except BaseException:
        for process, _ in started.values():
            process.stop()
        raise
    return started


def main(argv=None) -> int:
    """bench.big grown to each size in turn on one Hive 2.3 metastore, fresh proxies for each size."""
    import argparse
    import shutil
    import tempfile

    from tests.bench.bench_proxy import log, seed

    p = argparse.ArgumentParser(prog="python -m tests.bench.bench_relay", description=main.__doc__)
    p.add_argument("--sizes", default="10000,100000", help="partition counts, ascending (default 10000,100000)")
    p.add_argument("--repeats", type=int, default=3, help="timed get_partitions calls per path and size (default 3)")
    p.add_argument("--heap", default="2g", help="the metastore JVM's -Xmx (100,000 partitions need more than 512m)")
    p.add_argument("--floor", action="store_true", help="also measure the raw byte forwarder (what any extra hop costs here)")
    p.add_argument(
        "--store",
        choices=("postgres", "derby"),
        default="postgres",
        help="the metastore's database: a self-started PostgreSQL, partitions written with SQL (default), "
        "or Derby, partitions added with add_partitions (about 100 times slower to seed)",
    )
    p.add_argument(
        "--metastore",
        metavar="PORT",
        type=int,
        help="a Hive 2.3 metastore on 127.0.0.1 an earlier run seeded (grown further, with add_partitions)",
    )
    args = p.parse_args(argv)
    sizes = [int(n) for n in args.sizes.split(",")]
    tmp = Path(tempfile.mkdtemp(prefix="hmsproxy-bench-relay-"))
    backing = None
    if args.metastore:
        metastore = _Running(args.metastore)
    elif args.store == "postgres":
        backing = _PostgresBacked(tmp, args.heap)
        metastore = backing.metastore
    else:
        from hmsproxy.dev.metastore import start_metastores

        (metastore,) = start_metastores(1, tmp / "hms", log=lambda m: None, timeout_s=120, notifications=False, heap=args.heap)
    try:
        have = _partitions(metastore)
        if have is None:
            seed(metastore, 1)
            have = 0
        for size in sizes:
            t0 = time.monotonic()
            if backing is not None:
                answer_bytes = seed_big_sql(metastore, backing.conn, size, have)
            else:
                answer_bytes = seed_big(metastore, size, have, batch=2000)
            took = time.monotonic() - t0
            how = "SQL into PostgreSQL, checked through the metastore" if backing is not None else "add_partitions"
            log(f"bench.{BIG_TABLE}: {have:,} -> {size:,} partitions in {took:.0f}s ({how}; with the answer's size measured)")
            have = size
            (tmp / f"p{size}").mkdir()
            started = start_proxies(tmp / f"p{size}", metastore.uri, "2.3", floor=args.floor)
            try:
                endpoints = {"direct": ("127.0.0.1", metastore.port), **{p: ("127.0.0.1", port) for p, (_, port) in started.items()}}
                lines, _ = measure(endpoints, {p: proc.pid for p, (proc, _) in started.items()}, args.repeats, answer_bytes, size, log)
            finally:
                for process, _ in started.values():
                    process.stop()
            print("\n".join(lines), flush=True)
    finally:
        if backing is not None:
            backing.stop()
        else:
            metastore.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


class _PostgresBacked:
    """A Hive 2.3 metastore whose database is in a PostgreSQL cluster of its own (tests/support/postgres.py),
    with a psycopg2 connection to that database for seeding. DataNucleus makes the schema, as in
    tests/support/ha_pair.py."""

    def __init__(self, tmp: Path, heap: str):
        import psycopg2

        from hmsproxy.dev.metastore import LocalMetastore
        from hmsproxy.dev.ports import free_port
        from tests.support.ha_pair import create_database
        from tests.support.postgres import start_postgres

        self.server = start_postgres()
        self.metastore = self.conn = None
        try:
            jdbc_url = create_database(self.server, prefix="bench_relay")
            self.metastore = LocalMetastore(free_port(), tmp / "hms", name="hms", jdbc_url=jdbc_url, notifications=False, heap=heap)
            self.metastore.start(120)
            database = jdbc_url.rsplit("/", 1)[1].split("?")[0]
            self.conn = psycopg2.connect(host="127.0.0.1", port=self.server.port, user="postgres", dbname=database)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        if self.conn is not None:
            self.conn.close()
        if self.metastore is not None:
            self.metastore.stop()
        self.server.stop()


class _Running:
    """A metastore an earlier run started and seeded (--metastore): used, never stopped."""

    def __init__(self, port: int):
        self.host, self.port = "127.0.0.1", port
        self.uri = f"thrift://127.0.0.1:{port}"

    def client(self, timeout_s: float = 60):
        from hmsproxy.dev.metastore import metastore_client

        return metastore_client(self.host, self.port, timeout_s)

    def stop(self) -> None:
        pass


def _partitions(metastore) -> int | None:
    """How many partitions bench.big has; None before the run's tables exist."""
    from tests.bench.bench_proxy import DB

    client = metastore.client(timeout_s=600)
    try:
        return len(client.get_partition_names(DB, BIG_TABLE, -1))
    except Exception:  # noqa: BLE001 - no such table (or database) yet
        return None
    finally:
        client.close()


if __name__ == "__main__":
    raise SystemExit(main())

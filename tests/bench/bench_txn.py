"""The transactions' part of ``make bench``: lock + check_lock + unlock, open_txns + commit_txn and
open_txns + lock (with the transaction's id) + commit_txn, direct vs through hmsproxy, at 1 and N
clients, interleaved in the same runs as the rest of the benchmark (tests/bench/bench_proxy.py runs
it last, with the same client processes, against the same primary).

Each call that names a table runs on ``bench.events`` of the primary and on ``bench.events`` of a
second metastore of the same version, federated as ``fed`` (the proxy's ``fed_bench``, writable):
DIRECT goes to the metastore that owns the table, with its real names; PROXY to an ``hmsproxy serve``
that federates both. open_txns + commit_txn names no table: one case, on the primary. The locks are
SHARED_READ with operation type SELECT: concurrent clients never wait for each other, and a metastore
with hive.in.test=true (the dev default) rejects only locks whose operation type is unset.

A case that fails through the proxy (before transactions were routed, a lock taken on the federated
metastore was checked and released on the primary) is left out of the runs; the report says why.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

#: The federated metastore's name in the proxy's config; its databases are the proxy's ``fed_<name>``.
FED = "fed"
USER = "hmsproxy-bench"
HOSTNAME = "localhost"

LOCK = "lock+check_lock+unlock"
TXN = "open_txns+commit_txn"
TXN_LOCK = "open_txns+lock+commit_txn"
#: Time slices a path gets in each concurrent run (of --txn-slice seconds; a 1-client run lasts as long).
SLICES = 3


def _lock_request(db: str, table: str, txnid: int | None = None):
    from hmsproxy.protocol import idl

    hive = idl.hive
    component = hive.LockComponent(
        type=hive.LockType.SHARED_READ,
        level=hive.LockLevel.TABLE,
        dbname=db,
        tablename=table,
        operationType=hive.DataOperationType.SELECT,
    )
    return hive.LockRequest(component=[component], txnid=txnid, user=USER, hostname=HOSTNAME)


def _acquired(state, what: str) -> None:
    from hmsproxy.protocol import idl

    if state != idl.hive.LockState.ACQUIRED:  # shared read locks never wait for each other
        raise RuntimeError(f"{what}: lock state {state}, expected ACQUIRED")


def _open_txn(c) -> int:
    from hmsproxy.protocol import idl

    return c.open_txns(idl.hive.OpenTxnRequest(num_txns=1, user=USER, hostname=HOSTNAME)).txn_ids[0]


def lock_check_unlock(c, db: str, table: str) -> None:
    from hmsproxy.protocol import idl

    hive = idl.hive
    got = c.lock(_lock_request(db, table))
    _acquired(got.state, "lock")
    _acquired(c.check_lock(hive.CheckLockRequest(lockid=got.lockid)).state, "check_lock")
    c.unlock(hive.UnlockRequest(lockid=got.lockid))


def open_commit(c) -> None:
    from hmsproxy.protocol import idl

    c.commit_txn(idl.hive.CommitTxnRequest(txnid=_open_txn(c)))


def open_lock_commit(c, db: str, table: str) -> None:
    from hmsproxy.protocol import idl

    txnid = _open_txn(c)
    _acquired(c.lock(_lock_request(db, table, txnid)).state, "lock")
    c.commit_txn(idl.hive.CommitTxnRequest(txnid=txnid))


def method_name(kind: str, db: str | None = None, table: str | None = None) -> str:
    """A name in bench_proxy.METHODS: the kind, and the table it names (as the path sends it)."""
    return kind if db is None else f"{kind} {db}.{table}"


def methods(db: str, table: str) -> dict:
    """{method name: fn(client)}: each kind on ``db.table`` (the primary's, and the federated
    metastore's under its real name) and on ``fed_<db>.table`` (the federated one through the proxy).
    The client processes fork before anything else starts: their methods are known in advance."""
    out = {TXN: open_commit}
    for name in (db, f"{FED}_{db}"):
        for kind, fn in ((LOCK, lock_check_unlock), (TXN_LOCK, open_lock_commit)):
            out[method_name(kind, name, table)] = functools.partial(fn, db=name, table=table)
    return out


@dataclass(frozen=True)
class Case:
    kind: str
    #: The metastore that owns the table (DIRECT's): "primary" or FED.
    metastore: str
    direct_table: str | None = None  # db.table as each path names it; None: the calls name none
    proxy_table: str | None = None

    @property
    def name(self) -> str:
        return f"{self.kind} on {self.metastore}"

    @property
    def direct_method(self) -> str:
        return self.kind if self.direct_table is None else f"{self.kind} {self.direct_table}"

    @property
    def proxy_method(self) -> str:
        return self.kind if self.proxy_table is None else f"{self.kind} {self.proxy_table}"


def cases(db: str, table: str, federated: bool = True) -> list[Case]:
    out = []
    for kind in (LOCK, TXN, TXN_LOCK):
        if kind == TXN:
            out.append(Case(kind, "primary"))
            continue
        out.append(Case(kind, "primary", f"{db}.{table}", f"{db}.{table}"))
        if federated:
            out.append(Case(kind, FED, f"{db}.{table}", f"{FED}_{db}.{table}"))
    return out


def probe(case: Case, endpoints: dict) -> str | None:
    """One call of the case on each path, outside the clock; why it fails through the proxy, or None.
    A failure DIRECT is the benchmark's own: raised."""
    from tests.bench.bench_proxy import METHODS, make_client

    for path, endpoint, method in (
        ("direct", endpoints[case.metastore], case.direct_method),
        ("proxy", endpoints["proxy"], case.proxy_method),
    ):
        client = make_client(*endpoint)
        try:
            METHODS[method](client)
        except Exception as e:
            if path == "direct":
                raise
            return f"{type(e).__name__}: {getattr(e, 'message', None) or e}"
        finally:
            client.close()
    return None


#: The metastores' JDBC pool: on Derby, a metastore whose pool is smaller than the calls it serves at
#: once deadlocks in lock (a call holding the TxnHandler's Derby lock waits for a connection that
#: calls waiting for that lock hold) until the pool's 30 s timeout fails them.
POOL_SIZE = "datanucleus.connectionPool.maxPoolSize"


def _site_only_pool(cls):
    """LocalMetastore, with the connection pool's size in hive-site.xml only: given as -D too (as
    LocalMetastore passes every setting), it makes DataNucleus fail at start (NumberFormatException)."""

    class Metastore(cls):
        def system_properties(self):
            return {k: v for k, v in super().system_properties().items() if k != POOL_SIZE}

    return Metastore


@contextlib.contextmanager
def stack(tmp: Path, hive: str, clients: int, log) -> Iterator[tuple[dict, dict]]:
    """Two metastores of version ``hive`` ("primary" and FED), each with bench.events (one partition)
    and a JDBC pool of 2 x ``clients`` connections, and an ``hmsproxy serve`` that federates them.
    Yields the endpoints and the pids that :func:`measure` takes; all stopped after."""
    from hmsproxy.dev.metastore import LocalMetastore
    from hmsproxy.dev.ports import free_port
    from tests.bench.bench_proxy import HIVE_CONF, HIVE_VERSIONS, ProxyProcess, seed, write_proxy_config

    log(f"starting two Hive {HIVE_VERSIONS[hive]} metastores for the transactions, the second federated as {FED!r} ...")
    conf = {**HIVE_CONF.get(hive, {}), POOL_SIZE: str(2 * clients)}
    started: list = []
    process = None
    try:
        for name in ("primary", FED):
            metastore = _site_only_pool(LocalMetastore)(
                free_port(), tmp / f"hms-txn-{name}", log=lambda m: None, hive_version=hive, hive_conf=conf, notifications=False
            )
            started.append(metastore)  # stopped below, also when its start fails half-way
            metastore.start(90)
            seed(metastore, 1, hive)
        primary, fed = started
        port = free_port()
        config = tmp / "hmsproxy-txn.yml"
        write_proxy_config(config, port, primary.uri, HIVE_VERSIONS[hive], store_url=f"sqlite:///{tmp}/txn-store.db", federated=fed.uri)
        process = ProxyProcess(config, tmp / "hmsproxy-txn.log")
        process.wait_ready("127.0.0.1", port)
        log(f"{process.banner} (pid {process.pid})")
        endpoints = {"primary": ("127.0.0.1", primary.port), FED: ("127.0.0.1", fed.port), "proxy": ("127.0.0.1", port)}
        yield endpoints, {"jvm": (primary.pid, fed.pid), "proxy": process.pid}
    finally:
        if process is not None:
            process.stop()
        for metastore in started:
            metastore.stop()


def measure(pool, endpoints: dict, pids: dict, args, log) -> tuple[list, dict, list[str]]:
    """``endpoints`` and ``pids`` as :func:`stack` yields them.
    Returns the rows (bench_proxy.Row, both client counts), the runs and the report's lines."""
    from tests.bench.bench_proxy import DB, TABLE, interleaved_runs, load_note, make_row, snapshotter, warm_up

    skipped = {}
    measured = []
    for case in cases(DB, TABLE, federated=FED in endpoints):
        reason = probe(case, endpoints)
        if reason is None:
            measured.append(case)
        else:
            skipped[case.name] = reason
            log(f"not measured: {case.name}: fails through the proxy: {reason}")
    by_name = {case.name: case for case in measured}

    def target(call: str, path: str) -> tuple[tuple[str, int], str]:
        case = by_name[call]
        return (endpoints[case.metastore], case.direct_method) if path == "direct" else (endpoints["proxy"], case.proxy_method)

    paths = ("direct", "proxy")
    # At N clients these calls take 0.2-0.5 s (Derby serializes the metastore's transaction tables): a
    # slice must hold several of them, or which path a call counts for depends on the slices' phase.
    # One warm-up call a connection opens it and the proxy's session; more would cost seconds a run.
    timing = copy.copy(args)
    timing.slice, timing.duration, timing.repeats = args.txn_slice, SLICES * args.txn_slice, args.txn_repeats
    timing.warmup_calls = 1
    log("warming up the transactions' calls ...")
    warm_up(pool, by_name, paths, target, timing)
    pids = {**pids, "self": os.getpid()}
    runs, _ = interleaved_runs(pool, [(c, n) for n in (1, args.clients) for c in by_name], paths, target, timing, snapshotter(pids))
    rows = [make_row(c.name, n, runs, c.direct_method, c.proxy_method) for n in (1, args.clients) for c in measured]
    run_s = len(paths) * timing.duration
    how = (
        f"{timing.repeats} repeats, each a run in which direct and proxy calls are interleaved: at 1 client call by call ({run_s:g}s), "
        f"at {args.clients} clients in {timing.slice:g} s time slices ({run_s:g}s); ratios: median over the repeats of proxy/direct within one run"
    )
    lines = [*render(cases(DB, TABLE, federated=FED in endpoints), rows, args.clients, skipped, timing.slice), how]
    return rows, runs, [*lines, *filter(None, [load_note(runs, os.cpu_count())])]


def render(all_cases: list[Case], rows: list, clients: int, skipped: dict[str, str], slice_s: float) -> list[str]:
    """The report's lines: p50 at 1 client and throughput at ``clients`` clients, each path and
    proxy / direct (the median of the per-run ratios); ``skipped``: {case name: why it was not measured}.
    A case whose p50 at ``clients`` clients exceeds a third of the time slice (``slice_s``) is marked:
    few of its calls fit in a slice, so its throughputs are coarse."""
    by_key = {(r.call, r.clients): r for r in rows}
    tables = [c.direct_table if c.direct_table == c.proxy_table else f"{c.direct_table} / {c.proxy_table}" for c in all_cases]
    width = max([len("table (direct / proxy)")] + [len(t or "") for t in tables]) + 2
    lines = [
        "transactions and locks (tests/bench/bench_txn.py): SHARED_READ table locks (operation type SELECT), direct vs proxy in the same runs",
        f"{'call':<27}{'metastore':<11}{'table (direct / proxy)':<{width}}| {'1 client: direct p50':>20}{'proxy p50':>11}{'p50 x':>7} | "
        f"{f'{clients} clients: direct/s':>21}{'proxy/s':>9}{'tput x':>8}",
    ]
    coarse = False
    for case, table in zip(all_cases, tables):
        head = f"{case.kind:<27}{case.metastore:<11}{table or '-':<{width}}| "
        if case.name in skipped:
            lines.append(f"{head}not measured: fails through the proxy: {skipped[case.name]}")
            continue
        one, many = by_key[(case.name, 1)], by_key[(case.name, clients)]
        slow = max(many.direct["p50_ms"], many.proxy["p50_ms"]) > slice_s * 1000 / 3
        coarse = coarse or slow
        lines.append(
            f"{head}{one.direct['p50_ms']:>18.2f}ms{one.proxy['p50_ms']:>9.2f}ms{one.p50_ratio:>6.2f}x | "
            f"{many.direct['throughput']:>21.0f}{many.proxy['throughput']:>9.0f}{many.throughput_ratio:>7.2f}x{' *' if slow else ''}"
        )
    if coarse:
        lines.append(
            f"* p50 at {clients} clients above a third of the {slice_s:g} s time slice: few calls fit in a slice, "
            "so the split between the paths is coarse (a longer --txn-slice, or a quieter machine)"
        )
    return lines

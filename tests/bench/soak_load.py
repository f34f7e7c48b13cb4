"""The mixed load of a soak run: readers, a DDL writer, a transaction client and a streaming writer,
each a thread with its own connection to the proxy, paced so two cores keep up for an hour.

Every call is counted; a failed call closes the connection, is recorded with its time (the run
decides whether a metastore restart explains it) and the worker reconnects after a pause.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import thriftpy2.rpc

from hmsproxy.protocol import idl
from hmsproxy.testing.builders import parquet_table, partition

hive = idl.hive
DB, TABLE = "soak", "events"


@dataclass
class Tally:
    """What the workers did since the sampler last took it (under one lock: many writers, one reader)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    read_ms: list[float] = field(default_factory=list)
    calls: int = 0
    errors: list[tuple[float, str]] = field(default_factory=list)  # (monotonic time, what failed)
    streamed_rows: int = 0  # rows of acknowledged (committed) streaming transactions

    def called(self, ms: float | None) -> None:
        with self.lock:
            self.calls += 1
            if ms is not None:
                self.read_ms.append(ms)

    def failed(self, what: str) -> None:
        with self.lock:
            self.errors.append((time.monotonic(), what))

    def take(self) -> tuple[list[float], int, list[tuple[float, str]]]:
        with self.lock:
            taken = self.read_ms, self.calls, self.errors
            self.read_ms, self.calls, self.errors = [], 0, []
            return taken


class Worker(threading.Thread):
    """One connection, one kind of work: `step(client)` in a loop until stopped."""

    pause_s = 0.05
    reads = False  # whether its calls' latencies are the readers' latencies

    def __init__(self, name: str, port: int, tally: Tally, stop: threading.Event):
        super().__init__(name=name, daemon=True)
        self.port, self.tally, self.stopping = port, tally, stop
        self.client = None

    def connect(self):
        client = thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", self.port, timeout=30_000)
        client.set_ugi(f"soak-{self.name}", [])
        return client

    def run(self) -> None:
        while not self.stopping.is_set():
            try:
                if self.client is None:
                    self.client = self.connect()
                started = time.perf_counter()
                self.step(self.client)
                self.tally.called((time.perf_counter() - started) * 1000 if self.reads else None)
            except Exception as e:  # noqa: BLE001 - every failure is counted; the run judges it
                self.tally.failed(f"{self.name}: {type(e).__name__}: {e}"[:300])
                self.drop()
                self.stopping.wait(0.5)
                continue
            self.stopping.wait(self.pause_s)
        self.drop()

    def drop(self) -> None:
        if self.client is not None:
            try:
                self.client.close()
            except Exception:  # noqa: BLE001 - the connection is already gone
                pass
            self.client = None

    def step(self, client) -> None:
        raise NotImplementedError


class Reader(Worker):
    reads = True
    pause_s = 0.01

    def __init__(self, *args):
        super().__init__(*args)
        self.turn = 0

    def step(self, client) -> None:
        self.turn += 1
        if self.turn % 3 == 0:
            client.get_partition_names(DB, TABLE, 100)
        elif self.turn % 3 == 1:
            client.get_table(DB, TABLE)
        else:
            client.get_all_databases()


class DdlWriter(Worker):
    """Creates, alters and drops a few tables in turn (the set of objects stays bounded)."""

    pause_s = 0.2

    def __init__(self, *args, warehouse: str):
        super().__init__(*args)
        self.warehouse, self.turn = warehouse, 0

    def step(self, client) -> None:
        self.turn += 1
        name = f"w{self.turn % 4}"
        if client.get_tables(DB, name):
            client.drop_table(DB, name, True)
        table = parquet_table(DB, name, f"{self.warehouse}/{name}", partition_keys=(("ds", "string"),))
        client.create_table(table)
        client.add_partition(partition(DB, name, ["d1"], sd=table.sd))
        table.parameters = {"soak.turn": str(self.turn)}
        client.alter_table(DB, name, table)


class TxnClient(Worker):
    """Opens and commits (every fifth: aborts) one transaction at a time."""

    pause_s = 0.1

    def step(self, client) -> None:
        (txnid,) = client.open_txns(hive.OpenTxnRequest(num_txns=1, user="soak", hostname="soak")).txn_ids
        if txnid % 5:
            client.commit_txn(hive.CommitTxnRequest(txnid=txnid))
        else:
            client.abort_txn(hive.AbortTxnRequest(txnid=txnid))


class Streamer(threading.Thread):
    """Streams rows into soak.events through the proxy: a batch of transactions at a time, a new
    partition every minute; the rows of every acknowledged commit are counted."""

    rows_per_commit = 50

    def __init__(self, uri: str, tally: Tally, stop: threading.Event, clock: Callable[[], float]):
        super().__init__(name="streamer", daemon=True)
        self.uri, self.tally, self.stopping, self.clock = uri, tally, stop, clock
        self.sequence = 0

    def run(self) -> None:
        from hmsproxy.streaming import DelimitedInputWriter, HiveEndPoint

        while not self.stopping.is_set():
            ds = f"m{int(self.clock() // 60):03d}"
            try:
                ep = HiveEndPoint(self.uri, DB, TABLE, [ds])
                with ep.new_connection(auto_create_partition=True, user="soak-streamer") as conn:
                    batch = conn.fetch_transaction_batch(5, DelimitedInputWriter(["id", "msg"], ",", ep))
                    try:
                        while batch.remaining_transactions() > 0 and not self.stopping.is_set():
                            batch.begin_next_transaction()
                            for _ in range(self.rows_per_commit):
                                self.sequence += 1
                                batch.write(f"{self.sequence},row {self.sequence}".encode())
                            batch.commit()
                            with self.tally.lock:
                                self.tally.streamed_rows += self.rows_per_commit
                                self.tally.calls += 1
                            self.stopping.wait(1.0)
                    finally:
                        batch.close()
            except Exception as e:  # noqa: BLE001 - counted like the other workers' failures
                self.tally.failed(f"streamer: {type(e).__name__}: {e}"[:300])
                self.stopping.wait(1.0)

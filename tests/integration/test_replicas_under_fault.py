"""Three `hmsproxy serve` replicas on one PostgreSQL store behind HAProxy (deploy/haproxy/haproxy.cfg as
it is), under steady load, while one is SIGKILLed, one SIGTERMed (drained) and all three restarted one
by one. Real parts: the suite's two Hive 2.3 metastores, the throwaway PostgreSQL cluster, Debian's
haproxy, `hmsproxy serve` processes.

Load: client threads, each on its own connection, looping over reads (get_all_databases, get_table)
and writes (a remote link, an index definition, a transaction opened and committed):

- `retrying` (through HAProxy) and `uris` (the three replicas' URIs in a list, hive.metastore.uris
  style, hmsproxy's ThriftConnection trying them in order) reconnect and send a call again once after
  a connection error, as Hive's RetryingMetaStoreClient does with hive.metastore.failure.retries=1;
- `plain` (through HAProxy) never retries: it reconnects for its next call and counts the failure;
- `pymetastore` (through HAProxy): pymetastore's client (Apache Thrift's Python library) reading
  databases, a table and a table list, again once on a new connection after a connection error;
- `stream`: a streaming writer (hmsproxy.streaming's RetryingWriter, the seed's retries: a new batch
  and the held rows written again after a failure) through HAProxy, committing 20 numbered rows at a
  time into a Parquet table, on one batch of transactions (and connection) until a failure; its
  connection is closed by a drain at least once in the rolling restart and the writer goes on; afterwards
  the table's files hold every acknowledged row exactly once and no other row (a batch it gave up on is
  reported: none expected with its retries);
- the Hive 2.3 CLI (../shared/tools/hive-cli, its own JVM) through HAProxy with Hive's retry settings,
  started as the SIGTERM phase begins, running a HiveQL file (CREATE TABLE, SHOW TABLES, DESCRIBE, a
  table at a time) through the SIGTERM phase into the rolling restart: it exits 0, and every table it
  made is there afterwards;
- with REPLICAS_SPARK=1, also a real SparkSession through HAProxy (its own process,
  tests/support/spark_catalog_loop.py) running `SHOW TABLES` over and over with Hive's retry settings
  (hive.metastore.failure.retries=1, hive.metastore.client.connect.retry.delay=1s): none may fail in
  the SIGTERM and rolling phases. Off by default: a Spark driver's start takes minutes on a loaded
  2-core machine and triples the test's length.

Every call's outcome is counted per phase. With retries, no call fails while a replica is drained or in
the rolling restart; every acknowledged write is there afterwards, once (a remote link and an index
by name in the store, a committed transaction no longer open), and no transaction was opened twice
(each phase opens its transactions as a user of its own: none of that user's is left open). What the
non-retrying client and the SIGKILL phase cost is printed (docs/operations.md#replicas-and-restarts
has the figures).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq

from hmsproxy.dev.ports import free_ports
from hmsproxy.ops.drain import CLOSE_GRACE_S
from hmsproxy.protocol import idl
from hmsproxy.streaming import DelimitedInputWriter, GaveUp, HiveEndPoint, RetryingWriter
from hmsproxy.testing import args, table, unwrap
from hmsproxy.testing.builders import parquet_table
from hmsproxy.upstream.wire import BackendUnavailable, ThriftConnection
from tests.integration.test_cli import HMSPROXY
from tests.support.federation import federation_yaml
from tests.support.hive_cli import TOOL, cache_dir, missing_java, run_file
from tests.support.required import unavailable

hive = idl.hive
REPO = Path(__file__).resolve().parents[2]
HAPROXY_CFG = REPO / "deploy" / "haproxy" / "haproxy.cfg"
NOTICE_S, DRAIN_TIMEOUT_S = 1.5, 5.0  # > HAProxy's check interval (1 s, fall 1); far above a call's length
EXIT_BOUND_S = NOTICE_S + DRAIN_TIMEOUT_S + CLOSE_GRACE_S + 0.5  # what docs/operations.md states
START_TIMEOUT_S = 60.0
RISE_S = 2.5  # HAProxy takes a replica back after two passed checks a second apart
RETRY_DELAY_S = 0.2  # hive.metastore.client.connect.retry.delay (Hive's default is 1 s; shorter keeps the test short)
WITH_SPARK = os.environ.get("REPLICAS_SPARK") == "1"
POLL_SLACK_S = 3.0  # terminate() sees the exit at its next poll: a /readyz (2 s timeout) and a connect (1 s)
PAUSE_S = 0.05  # between a client's calls: a steady load two cores carry with three proxies and a metastore
PYMETASTORE_PAUSE_S = 0.2  # between pymetastore's rounds of three reads: more load than this slows the replicas' exits


def http_status(url: str) -> int | None:
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:
        return None


@dataclass
class Replica:
    index: int
    port: int
    ops_port: int
    config: Path
    workdir: Path
    proc: subprocess.Popen | None = None
    starts: int = 0

    @property
    def uri(self) -> str:
        return f"thrift://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.starts += 1
        log = open(self.workdir / f"replica-{self.index}.{self.starts}.log", "w")  # noqa: SIM115 (the process writes it)
        self.proc = subprocess.Popen(
            [*HMSPROXY, "serve", "--config", str(self.config), "--port", str(self.port), "--http-port", str(self.ops_port)]
            + ["--pid-file", str(self.workdir / f"replica-{self.index}.pid")],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=self.workdir,
        )
        log.close()

    def readyz(self) -> int | None:
        return http_status(f"http://127.0.0.1:{self.ops_port}/readyz")

    def wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"replica {self.index} exited {self.proc.returncode}:\n{self.log_tail()}")
            if self.readyz() == 200:
                return
            time.sleep(0.2)
        raise AssertionError(f"replica {self.index} not ready within {START_TIMEOUT_S} s:\n{self.log_tail()}")

    def accepts(self) -> bool:
        import socket

        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
            return True
        except OSError:
            return False

    def log_tail(self) -> str:
        logs = sorted(self.workdir.glob(f"replica-{self.index}.*.log"))
        return logs[-1].read_text(errors="replace")[-3000:] if logs else ""

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def terminate(self) -> tuple[float, int, list[tuple[float, int | None, bool]]]:
        """SIGTERM; returns (seconds to exit, exit code, [(t, /readyz status, Thrift port accepts)] seen meanwhile)."""
        started = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        seen = []
        while self.proc.poll() is None and time.monotonic() - started < EXIT_BOUND_S + 10:
            seen.append((time.monotonic() - started, self.readyz(), self.accepts()))
            time.sleep(0.1)
        if self.proc.poll() is None:
            self.kill()
            raise AssertionError(f"replica {self.index} did not exit within {EXIT_BOUND_S + 10} s of SIGTERM")
        return time.monotonic() - started, self.proc.returncode, seen


@dataclass
class Record:
    phase: str
    client: str
    method: str
    outcome: str  # ok, ok-after-retry, failed
    detail: str = ""


@dataclass
class Ledger:
    """Every call's outcome and every acknowledged write, shared by the client threads."""

    phase: str = "start"
    records: list[Record] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    indexes: list[str] = field(default_factory=list)
    committed: list[int] = field(default_factory=list)
    opened: list[int] = field(default_factory=list)

    def counts(self, phase: str | None = None) -> Counter:
        return Counter((r.client, r.outcome) for r in self.records if phase is None or r.phase == phase)

    def failures(self, phase: str, client: str) -> list[Record]:
        return [r for r in self.records if r.phase == phase and r.client == client and r.outcome == "failed"]


class CountedCalls:
    """A client's calls counted in the ledger by phase; after a connection error (CONNECTION_ERRORS)
    the connection is closed and the call made again, on a new one, `retries` times (after
    RETRY_DELAY_S). Declared exceptions are answers, never retried."""

    CONNECTION_ERRORS: tuple[type[Exception], ...] = ()

    def __init__(self, name: str, retries: int, ledger: Ledger):
        self.name, self.retries, self.ledger = name, retries, ledger

    def _counted(self, method: str, attempt: Callable[[], object]):
        error = None
        for n in range(self.retries + 1):
            if n:
                time.sleep(RETRY_DELAY_S)
            try:
                answer = attempt()
            except self.CONNECTION_ERRORS as e:
                self.close()
                error = e
                continue
            except Exception as e:  # a declared exception (or worse): an answer, never sent again
                self._record(method, "failed", f"{type(e).__name__}: {e}")
                raise
            self._record(method, "ok-after-retry" if n else "ok")
            return answer
        self._record(method, "failed", str(error))
        raise error

    def _record(self, method: str, outcome: str, detail: str = "") -> None:
        self.ledger.records.append(Record(self.ledger.phase, self.name, method, outcome, detail))

    def close(self) -> None:
        raise NotImplementedError


class CountingClient(CountedCalls):
    """A thriftpy2 connection over `uris` (hmsproxy's ThriftConnection tries them in order)."""

    CONNECTION_ERRORS = (BackendUnavailable,)

    def __init__(self, name: str, uris: tuple[str, ...], retries: int, ledger: Ledger):
        super().__init__(name, retries, ledger)
        self.conn = ThriftConnection(name, uris, connect_timeout_s=2, call_timeout_s=30)

    def call(self, method: str, **fields):
        return self._counted(method, lambda: self._send(method, fields))

    def _send(self, method: str, fields: dict):
        if not self.conn.is_open:
            self.conn.open()
        return unwrap(self.conn.call(method, args(method, **fields)))

    def close(self) -> None:
        self.conn.close()


class PymetastoreClient(CountedCalls):
    """pymetastore (a Hive 3-era Python client on Apache Thrift's own library, not thriftpy2) reading
    through the balancer; after a connection error it opens a new connection and reads again once."""

    def __init__(self, name: str, port: int, ledger: Ledger):
        from thrift.transport.TTransport import TTransportException

        super().__init__(name, 1, ledger)
        self.CONNECTION_ERRORS = (TTransportException, OSError, EOFError)
        self.port, self._opened, self.hms = port, None, None

    def read(self, method: str, *arguments):
        return self._counted(method, lambda: getattr(self._hms(), method)(*arguments))

    def _hms(self):
        from pymetastore.metastore import HMS

        if self.hms is None:
            self._opened = HMS.create(host="127.0.0.1", port=self.port)
            self.hms = self._opened.__enter__()
        return self.hms

    def close(self) -> None:
        opened, self._opened, self.hms = self._opened, None, None
        if opened is not None:
            with contextlib.suppress(Exception):
                opened.__exit__(None, None, None)


def pymetastore_loop(client: PymetastoreClient, stop: threading.Event, names: dict) -> None:
    """Reads until `stop`: the databases, the events table, the tables of default."""
    while not stop.is_set():
        with contextlib.suppress(Exception):  # counted in the ledger; the loop goes on
            client.read("list_databases")
            client.read("get_table", "default", names["events"])  # decoded into pymetastore's own model
            client.read("list_tables", "default")
        stop.wait(PYMETASTORE_PAUSE_S)


def client_loop(client: CountingClient, ledger: Ledger, stop: threading.Event, names: dict) -> None:
    """Reads and writes until `stop`; an acknowledged write goes into the ledger."""
    n = 0
    while not stop.is_set():
        n += 1
        tag = f"{client.name}_{n}"
        with contextlib.suppress(Exception):  # counted in the ledger; the loop goes on
            client.call("get_all_databases")
            client.call("get_table", dbname="default", tbl_name=names["events"])
            kind = n % 3
            if kind == 0:
                link = f"{names['run']}_l_{tag}"
                client.call(
                    "hmsproxy_execute",
                    statements=f"CREATE REMOTE TABLE default.{link} CONNECTED TO {names['remote_db']}.t "
                    f"WITH TBLPROPERTIES ('hive.metastore.uris'='{names['remote_uri']}')",
                    current_database="default",
                )
                ledger.links.append(link)
            elif kind == 1:
                index = f"i_{tag}"
                client.call(
                    "hmsproxy_execute",
                    statements=f"CREATE INDEX {index} ON TABLE {names['events']} (user_id) AS 'COMPACT' WITH DEFERRED REBUILD",
                    current_database="default",
                )
                ledger.indexes.append(index)
            else:
                user = f"{names['run']}-{ledger.phase}"
                [txn] = client.call("open_txns", rqst=hive.OpenTxnRequest(num_txns=1, user=user, hostname="replicas")).txn_ids
                ledger.opened.append(txn)
                client.call("commit_txn", rqst=hive.CommitTxnRequest(txnid=txn))
                ledger.committed.append(txn)
        stop.wait(PAUSE_S)


STREAM_ROWS = 20  # rows per streaming commit
#: The stream's pause between commits and its transactions per batch: a batch (and its connection)
#: lives until a failure or its last transaction, at least STREAM_TXNS * STREAM_PAUSE_S = 125 s, longer
#: than the phases before the rolling restart and the restart together (~60 s). So the batch open when
#: the rolling restart begins is on a replica that restarts, and a drain closes it. (With 100
#: transactions and 0.05 s a batch could end early and the next open on a replica already restarted.)
STREAM_PAUSE_S = 0.25
STREAM_TXNS = 500


@dataclass
class StreamLedger:
    """The streaming writer's commits: acknowledged rows by phase, rows given up on, retries by phase."""

    acked: dict[str, list[int]] = field(default_factory=dict)
    given_up: list[int] = field(default_factory=list)
    retries: Counter = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)


def stream_loop(uri: str, table_name: str, ledger: Ledger, stream: StreamLedger, stop: threading.Event) -> None:
    """Numbered rows committed STREAM_ROWS at a time until `stop`; a commit that returned is acknowledged."""
    endpoint = HiveEndPoint(uri, "default", table_name)

    def retried(attempt: int, pause: float, error: Exception) -> None:
        stream.retries[ledger.phase] += 1
        stream.errors.append(f"{ledger.phase}: {error}")

    writer = RetryingWriter(
        endpoint, DelimitedInputWriter(["id", "msg"], ",", endpoint), txns_per_batch=STREAM_TXNS, retries=20, backoff_s=RETRY_DELAY_S,
        backoff_max_s=2.0, user=f"{table_name}-stream", on_retry=retried,
    )  # fmt: skip
    first = 0
    try:
        while not stop.is_set():
            ids = range(first, first + STREAM_ROWS)
            first += STREAM_ROWS
            try:
                for i in ids:
                    writer.write(b"%d,row %d" % (i, i))
                phase = ledger.phase
                writer.commit()
                stream.acked.setdefault(phase, []).extend(ids)
            except GaveUp as e:
                stream.given_up.extend(ids)
                stream.errors.append(f"{ledger.phase}: gave up: {e}")
                writer.close()  # drops the held rows: reported above, never in the table
            stop.wait(STREAM_PAUSE_S)
    finally:
        writer.close()


def stored_ids(location: Path) -> Counter:
    """How often each id is in the table's visible files (staging directories and hidden names skipped)."""
    files = [p for p in location.iterdir() if p.is_file() and not p.name.startswith(("_", "."))]
    return Counter(row["id"] for f in files for row in pq.read_table(f, columns=["id"]).to_pylist())


@contextlib.contextmanager
def haproxy(replicas: list[Replica], port: int, workdir: Path):
    env = dict(os.environ, HMSPROXY_LB_BIND=f"127.0.0.1:{port}")
    for r in replicas:
        env |= {f"HMSPROXY_{r.index}": f"127.0.0.1:{r.port}", f"HMSPROXY_{r.index}_OPS": str(r.ops_port)}
    log = open(workdir / "haproxy.log", "w")  # noqa: SIM115 (the process writes it)
    proc = subprocess.Popen(
        [shutil.which("haproxy") or "/usr/sbin/haproxy", "-f", str(HAPROXY_CFG), "-db"], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    log.close()
    try:
        deadline = time.monotonic() + 20
        while not Replica(0, port, 0, Path(), workdir).accepts():
            assert proc.poll() is None, (workdir / "haproxy.log").read_text()
            assert time.monotonic() < deadline, "haproxy did not listen within 20 s"
            time.sleep(0.1)
        time.sleep(RISE_S)  # every replica checked up
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class SparkLoop:
    """tests/support/spark_catalog_loop.py in a child process; its lines read by a thread."""

    def __init__(self, uri: str, workdir: Path, database: str):
        self.stop_file = workdir / "spark.stop"
        self.lines: list[dict] = []
        self.ready = threading.Event()
        log = open(workdir / "spark.log", "w")  # noqa: SIM115 (the process writes it)
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.support.spark_catalog_loop",
                uri,
                str(workdir / "spark-warehouse"),
                database,
                str(self.stop_file),
            ],
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            cwd=REPO,
        )
        log.close()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for raw in self.proc.stdout:
            with contextlib.suppress(ValueError):
                line = json.loads(raw)
                if line.get("ready"):
                    self.ready.set()
                else:
                    self.lines.append(line)

    def stop(self) -> None:
        self.stop_file.touch()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.reader.join(10)

    def in_window(self, start: float, end: float) -> list[dict]:
        return [line for line in self.lines if start <= line["t"] < end]


#: CREATE TABLE, SHOW TABLES, DESCRIBE each: 60 statements, about a second each after a ~10 s start,
#: begun with the SIGTERM phase: longer than it and the rolling restart (~15 s + ~35 s) together.
HIVE_CLI_TABLES = 20
HIVE_RETRIES = ("--hiveconf", "hive.metastore.failure.retries=1", "--hiveconf", "hive.metastore.client.connect.retry.delay=1s")


class HiveCliRun:
    """The Hive 2.3 CLI running a HiveQL file through `uri` in a thread; `started`/`ended`: wall clock."""

    def __init__(self, uri: str, workdir: Path, prefix: str):
        self.tables = [f"{prefix}_cli_{i}" for i in range(HIVE_CLI_TABLES)]
        script = workdir / "hive-cli.sql"
        script.write_text(
            "".join(
                f"CREATE TABLE IF NOT EXISTS default.{t} (id INT, name STRING);\nSHOW TABLES IN default LIKE '{prefix}_cli_*';\n"
                f"DESCRIBE default.{t};\n"
                for t in self.tables
            )
        )
        (workdir / "hive-cli-run" / "conf").mkdir(parents=True)
        self.result = None
        self.started = time.time()
        self.ended = None
        self._thread = threading.Thread(target=self._run, args=(uri, script, workdir / "hive-cli-run"), daemon=True)
        self._thread.start()

    def _run(self, uri: str, script: Path, run_dir: Path) -> None:
        self.result = run_file(uri, script, run_dir, 300, HIVE_RETRIES)
        self.ended = time.time()

    def wait(self) -> subprocess.CompletedProcess:
        self._thread.join(330)
        assert self.result is not None, "the Hive CLI did not end within 330 s"
        return self.result


def open_txns_of(metastore, user: str) -> list[int]:
    with contextlib.closing(metastore.client()) as c:
        return [t.id for t in c.get_open_txns_info().open_txns if t.user == user and t.state == hive.TxnState.OPEN]


def test_three_replicas_behind_haproxy_sigkill_sigterm_and_rolling_restart(tmp_path, pg_url, metastores):
    if shutil.which("haproxy") is None and not Path("/usr/sbin/haproxy").exists():
        unavailable("no haproxy (Debian's haproxy package; `make haproxy` installs it)")
    if missing_java(cache_dir()) or not TOOL.is_file():
        unavailable(f"the Hive CLI cannot run: {missing_java(cache_dir()) or f'no {TOOL}'}")
    primary, federated = metastores
    run = f"rep{uuid.uuid4().hex[:6]}"
    names = {"run": run, "events": f"{run}_events", "remote_db": f"{run}_src", "remote_uri": federated.uri}
    stream_table, stream_location = f"{run}_stream", tmp_path / "stream"
    stream_location.mkdir()
    with contextlib.closing(federated.client()) as c:
        c.create_database(hive.Database(name=names["remote_db"], parameters={}))
        c.create_table(table(names["remote_db"], "t"))
    with contextlib.closing(primary.client()) as c:
        c.create_table(table("default", names["events"], columns=(("user_id", "bigint"), ("action", "string"))))
        c.create_table(parquet_table("default", stream_table, stream_location.as_uri(), columns=(("id", "int"), ("msg", "string"))))

    ports = free_ports(7)
    config = tmp_path / "hmsproxy.yml"
    yaml = federation_yaml(primary.uri, federated.uri)
    yaml = yaml.replace("server: {", f"server: {{host: 127.0.0.1, drain-notice-s: {NOTICE_S}, drain-timeout-s: {DRAIN_TIMEOUT_S}, ")
    config.write_text(yaml + f"store: {{url: '{pg_url}'}}\nhttp: {{host: 127.0.0.1}}\n")
    replicas = [Replica(i + 1, ports[2 * i], ports[2 * i + 1], config, tmp_path) for i in range(3)]
    ledger = Ledger()
    stream = StreamLedger()
    stop = threading.Event()
    threads: list[threading.Thread] = []
    clients: list[CountingClient] = []
    terminations = {}
    marks: list[tuple[float, str]] = []  # (wall clock, phase): Spark's lines are placed by time
    spark = None
    hive_cli = None

    def enter(name: str) -> None:
        ledger.phase = name
        marks.append((time.time(), name))

    try:
        for r in replicas:
            r.start()
        for r in replicas:
            r.wait_ready()
        with haproxy(replicas, ports[6], tmp_path):
            lb = (f"thrift://127.0.0.1:{ports[6]}",)
            if WITH_SPARK:
                spark = SparkLoop(lb[0], tmp_path, "default")  # starts while the other clients run
            for name, uris, retries in [
                ("retrying1", lb, 1),
                ("retrying2", lb, 1),
                ("plain", lb, 0),
                ("uris", tuple(r.uri for r in replicas), 1),
            ]:
                clients.append(CountingClient(name, uris, retries, ledger))
            threads = [threading.Thread(target=client_loop, args=(c, ledger, stop, names), daemon=True) for c in clients]
            clients.append(PymetastoreClient("pymetastore", ports[6], ledger))
            threads.append(threading.Thread(target=pymetastore_loop, args=(clients[-1], stop, names), daemon=True))
            threads.append(threading.Thread(target=stream_loop, args=(lb[0], stream_table, ledger, stream, stop), daemon=True))
            for t in threads:
                t.start()

            enter("steady")
            time.sleep(2)

            enter("sigkill")
            replicas[0].kill()  # the `uris` client's first URI: it moves to the second
            time.sleep(2)
            replicas[0].start()
            replicas[0].wait_ready()
            time.sleep(RISE_S)

            assert spark is None or spark.ready.wait(240), (
                f"Spark answered no query through HAProxy:\n{(tmp_path / 'spark.log').read_text()[-3000:]}"
            )
            enter("sigterm")
            hive_cli = HiveCliRun(lb[0], tmp_path, run)  # its JVM starts meanwhile; its statements reach into the rolling restart
            terminations["sigterm"] = replicas[1].terminate()
            replicas[1].start()
            replicas[1].wait_ready()
            time.sleep(RISE_S)

            enter("rolling")
            for r in replicas:
                terminations[f"rolling-{r.index}"] = r.terminate()
                r.start()
                r.wait_ready()
                time.sleep(RISE_S)

            enter("after")
            time.sleep(1)
            cli = hive_cli.wait()
            if spark is not None:
                spark.stop()
            stop.set()
            for t in threads:
                t.join(30)
            assert not any(t.is_alive() for t in threads), "a client thread is stuck"

            # What was acknowledged is there, once: read back through the balancer.
            reader = CountingClient("reader", lb, 1, Ledger())
            try:
                shown = reader.call("hmsproxy_execute", statements="SHOW REMOTE TABLES IN default", current_database="default")
                links = {row[1] for row in shown.rows if row[1].startswith(f"{run}_l_")}
                indexes = {i.indexName for i in reader.call("get_indexes", db_name="default", tbl_name=names["events"], max_indexes=-1)}
                cli_tables = set(reader.call("get_tables", db_name="default", pattern=f"{run}_cli_*"))
            finally:
                reader.close()
    finally:
        stop.set()
        if spark is not None and spark.proc.poll() is None:
            spark.proc.kill()
            spark.proc.wait()
        for c in clients:
            c.close()
        for r in replicas:
            r.kill()

    print(f"\nreplicas under fault ({run}): calls by phase, client and outcome")
    for phase in ("steady", "sigkill", "sigterm", "rolling", "after"):
        print(f"  {phase}: {dict(sorted(ledger.counts(phase).items()))}")
        for f in [r for r in ledger.records if r.phase == phase and r.outcome == "failed"][:6]:
            print(f"    failed {f.client} {f.method}: {f.detail[:160]}")
    for what, (took, code, _) in terminations.items():
        print(f"  {what}: exited {code} {took:.2f} s after SIGTERM")
    windows = {name: (start, end) for (start, name), (end, _) in zip(marks, [*marks[1:], (float("inf"), "")])}
    spark_seen = (
        {name: Counter("ok" if line["ok"] else "failed" for line in spark.in_window(*window)) for name, window in windows.items()}
        if spark
        else {}
    )
    print(
        f"  stream: acknowledged rows by phase { ({k: len(v) for k, v in stream.acked.items()}) }, "
        f"retries by phase {dict(stream.retries)}, rows given up on {len(stream.given_up)}"
    )
    for error in stream.errors[:6]:
        print(f"    stream retried: {error[:200]}")
    cli_phases = [name for name, (start, end) in windows.items() if start < hive_cli.ended and end > hive_cli.started]
    retried = (tmp_path / "hive-cli-run" / "logs" / "hive.log").read_text(errors="replace").count("Attempting to reconnect")
    print(
        f"  Hive CLI: exit {cli.returncode} after {hive_cli.ended - hive_cli.started:.1f} s, running through {cli_phases}; "
        f"{len(cli_tables)} of {HIVE_CLI_TABLES} tables made; RetryingMetaStoreClient reconnected {retried} time(s)"
    )
    if spark is not None:
        print(f"  Spark SHOW TABLES through HAProxy, by phase: {spark_seen}")
        for line in [line for line in spark.lines if not line["ok"]][:3]:
            print(f"    Spark failed: {line['error'][:300]}")

    total = ledger.counts()
    assert sum(n for (_, outcome), n in total.items() if outcome != "failed") > 200, "the load was too thin to show anything"
    for phase in ("sigterm", "rolling"):
        for client in ("retrying1", "retrying2", "uris", "pymetastore"):
            assert ledger.failures(phase, client) == [], f"{client} saw a call fail during {phase}"
        assert ledger.counts(phase)[("retrying1", "ok")] > 0 and ledger.counts(phase)[("pymetastore", "ok")] > 0
        if spark is not None:
            assert spark_seen[phase]["failed"] == 0 and spark_seen[phase]["ok"] > 0, f"Spark during {phase}: {spark_seen[phase]}"
    # The drain's order, seen from outside: /readyz 503 while the Thrift port still accepts, then closed.
    for what, (took, code, seen) in terminations.items():
        assert code == 0 and took <= EXIT_BOUND_S + POLL_SLACK_S, f"{what}: exit {code} after {took:.2f} s (bound {EXIT_BOUND_S} s)"
        assert any(status == 503 and accepts for _, status, accepts in seen), f"{what}: no notice period seen: {seen}"
        first_closed = next((t for t, _, accepts in seen if not accepts), None)
        first_unready = next((t for t, status, _ in seen if status != 200), None)
        assert first_unready is not None and (first_closed is None or first_unready < first_closed)
    # No acknowledged write lost, none applied twice.
    assert set(ledger.links) <= links, f"acknowledged remote links missing: {set(ledger.links) - links}"
    assert set(ledger.indexes) <= indexes, f"acknowledged indexes missing: {set(ledger.indexes) - indexes}"
    assert len(ledger.links) == len(set(ledger.links)) and len(ledger.indexes) == len(set(ledger.indexes))
    still_open = {t for phase in ("steady", "sigkill", "sigterm", "rolling", "after") for t in open_txns_of(primary, f"{run}-{phase}")}
    assert not still_open & set(ledger.committed), "a committed transaction is open"
    for phase in ("sigterm", "rolling"):
        left = set(open_txns_of(primary, f"{run}-{phase}")) - set(ledger.opened)
        assert left == set(), f"{phase}: transactions opened twice (an open_txns carried out but unanswered): {left}"
    assert len(ledger.committed) > 3 and len(ledger.links) > 3 and len(ledger.indexes) > 3
    # The Hive CLI: every statement answered while replicas drained and restarted, every table made.
    assert cli.returncode == 0, f"the Hive CLI failed:\n{cli.stderr[-3000:]}"
    assert cli_tables == set(hive_cli.tables)
    assert "rolling" in cli_phases, f"the Hive CLI ended before the rolling restart: {cli_phases}"
    # Streamed rows: every acknowledged one stored exactly once, none of a batch given up on.
    stored = stored_ids(stream_location)
    acked = [i for ids in stream.acked.values() for i in ids]
    assert stream.acked.get("sigterm") and stream.acked.get("rolling"), f"the stream committed nothing in a fault: {stream.acked}"
    assert [i for i in acked if stored[i] != 1] == [], "acknowledged rows lost or stored twice"
    assert set(stored) <= set(acked), f"rows no commit acknowledged are stored: {sorted(set(stored) - set(acked))[:10]}"
    assert stream.given_up == [], f"the streaming writer gave up: {stream.errors}"
    assert stream.retries["rolling"] > 0, (
        f"the streaming writer's connection was never closed by a drain in the rolling restart: commits by phase "
        f"{ {k: len(v) // STREAM_ROWS for k, v in stream.acked.items()} }, retries by phase {dict(stream.retries)}"
    )

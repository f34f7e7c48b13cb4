"""Transaction batches: a run of the metastore's transactions, consumed one after another.

The batch holds a shared lock on the partition (or table) without a transaction from its first
`begin_next_transaction` until `close`: a compaction (which takes the exclusive lock) waits for open
batches, so it never swaps the location between a commit and its renames, and the location, read
once under that lock, stays. What dead writers left there is recovered then (publish.py). The lock's
agent info names the batch's transactions, so another writer's recovery leaves their files alone.

Per transaction (publish.py says how rows become visible):

1. `begin_next_transaction`: the next id of the batch takes a shared lock on the partition *with*
   the transaction, which binds it to the table's metastore through the proxy.
2. `write`: rows are parsed by the writer (a bad record raises SerializationError and is left
   out; the transaction goes on) and kept per bucket.
3. `commit`: the files are written into the staging directory, the metastore commits the
   transaction, the files are marked committed and renamed into place, the second lock is released.
   `abort`: the metastore aborts it, its files are deleted.

A batch is used by one thread at a time; batches (each with its own connection) may run on
different threads. Heartbeats run on their own connection while the batch is open (heartbeats.py).
"""

from __future__ import annotations

import contextlib
import enum
import socket
import threading
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

from thriftpy2.thrift import TException

from hmsproxy.protocol import idl
from hmsproxy.streaming.buckets import bucketer
from hmsproxy.streaming.datafiles import RowBuffer, write_file
from hmsproxy.streaming.errors import LockTimeout, StreamingError, TransactionError
from hmsproxy.streaming.heartbeats import Heartbeats, txn_timeout_s
from hmsproxy.streaming.metastore import Metastore
from hmsproxy.streaming.publish import TxnFiles, publish_agent, publishing, recover
from hmsproxy.streaming.writers import SerializationError

if TYPE_CHECKING:
    from hmsproxy.streaming.endpoint import StreamingConnection
    from hmsproxy.streaming.writers import RecordWriter

hive = idl.hive

#: How long a transaction waits for its partition's lock before LockTimeout (a compaction may hold it).
LOCK_WAIT_S = 600.0


class TxnState(enum.Enum):
    INACTIVE = "inactive"  # between transactions, or before the first
    OPEN = "open"
    COMMITTED = "committed"
    ABORTED = "aborted"


class TransactionBatch:
    def __init__(self, connection: StreamingConnection, num_transactions: int, writer: RecordWriter, *, lock_wait_s: float = LOCK_WAIT_S):
        if num_transactions < 1:
            raise ValueError("a batch has at least one transaction")
        self.connection = connection
        self.target = connection.target
        self.writer = writer
        self.lock_wait_s = lock_wait_s
        writer.bind(list(self.target.columns))
        # Hive hashes the bucket columns in CLUSTERED BY's order, not the table's.
        names = [name for name, _ in self.target.columns]
        self._bucket_index = [names.index(c) for c in self.target.bucket_columns] if self.target.bucketed else []
        types = tuple(self.target.columns[i][1] for i in self._bucket_index)
        self._bucket = bucketer(types, self.target.num_buckets, self.target.bucketing_version) if self._bucket_index else None
        self.ms = Metastore(connection.uri, connection.user, sasl_principal=connection.sasl_principal)
        self._host = socket.gethostname()
        try:
            request = hive.OpenTxnRequest(
                num_txns=num_transactions, user=connection.user, hostname=self._host, agentInfo=connection.agent_info
            )
            self.txn_ids: list[int] = list(self.ms.call("open_txns", request).txn_ids)
        except BaseException:
            self.ms.close()
            raise
        self._next = 0
        self._state = TxnState.INACTIVE
        self._current: int | None = None
        self._files: TxnFiles | None = None
        self._buffers: dict[int, RowBuffer] = {}
        self._publish_lock: int | None = None  # the batch's lock on its location (module doc)
        self._location = ""
        self._rows = 0
        self._closed = False
        self._guard = threading.Lock()  # heartbeats read what is held while the batch changes it
        try:
            self.heartbeats = Heartbeats(
                connection.uri, connection.user, txn_timeout_s(self.ms) / 2, self._beat, sasl_principal=connection.sasl_principal
            )
        except BaseException:
            # The heartbeats' own connection failed: without this the batch's transactions would
            # stay open until the metastore's reaper times them out.
            with contextlib.suppress(TException, OSError):
                self.ms.call("abort_txns", hive.AbortTxnsRequest(txn_ids=self.txn_ids))
            self.ms.close()
            raise

    # -- the seed's API ----------------------------------------------------------------------------

    def remaining_transactions(self) -> int:
        return len(self.txn_ids) - self._next

    def current_transaction_state(self) -> TxnState:
        return self._state

    def current_transaction_id(self) -> int | None:
        return self._current

    def begin_next_transaction(self) -> None:
        self._require_usable()
        if self._state is TxnState.OPEN:
            raise StreamingError(f"transaction {self._current} is open: commit or abort it first")
        if not self.remaining_transactions():
            raise StreamingError("no transactions left in this batch: fetch a new one")
        txnid = self.txn_ids[self._next]
        self._next += 1
        with self._guard:
            self._current, self._state = txnid, TxnState.OPEN
        try:
            if self._publish_lock is None:
                self._hold_location()
            self._lock(txnid)  # binds the transaction to the table's metastore
        except BaseException:
            self._abort_current()
            raise
        self._files = TxnFiles(self._location, txnid, self.target.file_format)
        self._buffers, self._rows = {}, 0

    def write(self, record: bytes) -> None:
        """One record; SerializationError leaves it out and the transaction goes on."""
        self._require_open()
        self._add(self.writer.parse(record))

    def write_many(self, records: Iterable[bytes]) -> list[SerializationError]:
        """Every record that parses; the ones that don't are returned, not raised."""
        self._require_open()
        rejected = []
        parse, add = self.writer.parse, self._add
        for record in records:
            try:
                add(parse(record))
            except SerializationError as e:
                rejected.append(e)
        return rejected

    def commit(self) -> None:
        self._require_open()
        txnid, files = self._current, self._files
        try:
            for bucket, rows in sorted(self._buffers.items()):
                if len(rows):
                    write_file(rows.to_arrow(), files.staged_path(bucket), self.target.file_format, files.fs)
            self._call("commit_txn", hive.CommitTxnRequest(txnid=txnid))
        except BaseException:
            self._abort_current()
            raise
        try:
            files.mark()  # from here on the rows are the table's: recover finishes it should we die
        except BaseException:
            self._abort_current()  # unmarked, they never become visible: the caller sends them again
            raise
        # A caller that gets an error from here on sees the state COMMITTED and must not send the rows
        # again: the next batch's recover renames what this one could not.
        with self._guard:
            self._state = TxnState.COMMITTED
        files.move_in()

    def abort(self) -> None:
        """Abort the open transaction (nothing of it is ever visible); a no-op when none is open."""
        if self._state is TxnState.OPEN:
            self._abort_current()

    def heartbeat(self) -> None:
        """Heartbeat now (heartbeats are also sent every half transaction timeout while the batch is open)."""
        self._require_usable()
        self.heartbeats.now()

    def close(self) -> None:
        """Abort the open transaction and the unused ones; stop the heartbeats."""
        if self._closed:
            return
        try:
            self.abort()
            unused = self.txn_ids[self._next :]
            self._next = len(self.txn_ids)
            if unused:
                self._call("abort_txns", hive.AbortTxnsRequest(txn_ids=unused), quiet=True)
            self._release_publish_lock()
        finally:
            self._closed = True
            self.heartbeats.stop()
            self.ms.close()

    @property
    def rows_in_transaction(self) -> int:
        return self._rows

    # -- inside ------------------------------------------------------------------------------------

    def _hold_location(self) -> None:
        """The batch's lock, then the location under it, cleared of what dead writers left."""
        agent = publish_agent(self.connection.agent_info, self.txn_ids[0], self.txn_ids[-1])
        lock = self._lock(None, agent=agent)
        with self._guard:
            self._publish_lock = lock
        self._location = self.connection.location(self.ms)  # a compaction may have moved it before we got the lock
        recover(self._location, self._txn_states(), skip=frozenset(self.txn_ids), alive=self._publishing)

    def _add(self, row: list) -> None:
        bucket = 0 if self._bucket is None else self._bucket([row[i] for i in self._bucket_index])
        rows = self._buffers.get(bucket)
        if rows is None:
            rows = self._buffers[bucket] = RowBuffer(list(self.target.columns))
        rows.append(row)
        self._rows += 1

    def _lock(self, txnid: int | None, *, agent: str | None = None) -> int:
        """A shared lock on the partition (or table), waited for; returns its id."""
        target, values = self.target, self.connection.partition_vals
        component = hive.LockComponent(
            type=hive.LockType.SHARED_READ,
            level=hive.LockLevel.PARTITION if target.partition_keys else hive.LockLevel.TABLE,
            dbname=target.database,
            tablename=target.table,
            partitionname=target.partition_name(values),
            operationType=hive.DataOperationType.INSERT,
            isAcid=False,
        )
        request = hive.LockRequest(
            component=[component],
            txnid=txnid,
            user=self.connection.user,
            hostname=self._host,
            agentInfo=agent or self.connection.agent_info,
        )
        answer = self._call("lock", request)
        deadline, pause = time.monotonic() + self.lock_wait_s, 0.05
        while answer.state == hive.LockState.WAITING:
            if time.monotonic() > deadline:
                self._call("unlock", hive.UnlockRequest(lockid=answer.lockid), quiet=True)
                raise LockTimeout(f"the lock on {self._where()} was not granted within {self.lock_wait_s:.0f} s (a compaction holds it?)")
            time.sleep(pause)
            pause = min(pause * 2, 2.0)
            answer = self._call("check_lock", hive.CheckLockRequest(lockid=answer.lockid, txnid=txnid))
        if answer.state != hive.LockState.ACQUIRED:
            raise TransactionError(
                f"the lock on {self._where()} was refused ({hive.LockState._VALUES_TO_NAMES.get(answer.state, answer.state)})"
            )
        return answer.lockid

    def _release_publish_lock(self) -> None:
        with self._guard:
            lock, self._publish_lock = self._publish_lock, None
        if lock is not None:
            self._call("unlock", hive.UnlockRequest(lockid=lock), quiet=True)

    def _abort_current(self) -> None:
        txnid, files = self._current, self._files
        try:
            if txnid is not None:
                self._call("abort_txn", hive.AbortTxnRequest(txnid=txnid), quiet=True)
            if files is not None:
                files.discard()
        finally:
            with self._guard:
                self._state, self._files = TxnState.ABORTED, None

    def _publishing(self) -> frozenset[int]:
        """Transactions of other writers of this partition that are publishing right now (their locks say so)."""
        target = self.target
        request = hive.ShowLocksRequest(
            dbname=target.database, tablename=target.table, partname=target.partition_name(self.connection.partition_vals)
        )
        return publishing(e.agentInfo for e in self._call("show_locks", request).locks or [])

    def _txn_states(self):
        """txn id -> "open" / "aborted" / "gone", from one get_open_txns_info (recover asks per directory)."""
        answer = None

        def state(txnid: int) -> str:
            nonlocal answer
            if answer is None:
                info = self._call("get_open_txns_info")
                answer = {t.id: t.state for t in info.open_txns or []}
            found = answer.get(txnid)
            if found == hive.TxnState.OPEN:
                return "open"
            return "aborted" if found == hive.TxnState.ABORTED else "gone"

        return state

    def _beat(self, ms: Metastore) -> None:
        with self._guard:
            first = self._next - 1 if self._state is TxnState.OPEN else self._next
            lock = self._publish_lock
        if first < len(self.txn_ids) and not self._closed:
            ms.call("heartbeat_txn_range", hive.HeartbeatTxnRangeRequest(min=self.txn_ids[first], max=self.txn_ids[-1]))
        if lock is not None:
            ms.call("heartbeat", hive.HeartbeatRequest(lockid=lock))

    def _call(self, method: str, *args, quiet: bool = False):
        try:
            return self.ms.call(method, *args)
        except (TException, OSError) as e:
            if quiet:
                return None
            message = getattr(e, "message", None) or str(e)
            raise TransactionError(f"{method} on {self._where()} failed: {type(e).__name__}: {message}") from e

    def _where(self) -> str:
        name = self.target.partition_name(self.connection.partition_vals)
        return f"{self.target.database}.{self.target.table}" + (f" partition {name}" if name else "")

    def _require_usable(self) -> None:
        if self._closed:
            raise StreamingError("this batch is closed: fetch a new one")

    def _require_open(self) -> None:
        self._require_usable()
        if self._state is not TxnState.OPEN:
            raise StreamingError("no transaction is open: call begin_next_transaction() first")

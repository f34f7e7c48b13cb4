"""The seed's error handling as one object: a writer that survives a bad hour of its metastore.

The seed: an error other than SerializationError means abort the transaction, close the batch, back
off exponentially and start a new batch, redoing the failed transaction's work. `RetryingWriter`
does that: it holds the records of the open transaction, and on a failure it closes the batch and
the connection, waits (`backoff_s`, doubled each time up to `backoff_max_s`), opens new ones and
writes the held records again into the new transaction. A commit succeeds once or its records are
sent again, never both: a batch aborts a transaction whose commit failed before its files were
marked (their rows are never visible), and a failure after the mark leaves the batch's state
COMMITTED, which counts as committed here (publish.py's recover finishes the renames).

After `retries` failures in a row without a commit in between, `GaveUp` is raised: `committed`
records (in the order written) are in the table, the held ones are not.

    stream = RetryingWriter(HiveEndPoint(uri, "shop", "alerts", ["Asia"]), DelimitedInputWriter(...),
                            auto_create_partition=True)
    for record in source:
        try:
            stream.write(record)
        except SerializationError:
            ...                          # a dead letter: nothing else changes
        if stream.held >= 10_000:
            stream.commit()
    stream.commit(); stream.close()
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from thriftpy2.thrift import TException

from hmsproxy.files.locations import StorageError
from hmsproxy.streaming.batch import TxnState
from hmsproxy.streaming.errors import InvalidPartition, InvalidTable, StreamingError

if TYPE_CHECKING:
    from hmsproxy.streaming.endpoint import HiveEndPoint
    from hmsproxy.streaming.writers import RecordWriter

log = logging.getLogger(__name__)

#: Failures that a new batch can't cure: the table or partition itself is wrong.
FATAL = (InvalidTable, InvalidPartition)
#: Failures worth a new batch after a pause (a metastore, the proxy, the store or the network away).
RETRIED = (StreamingError, StorageError, TException, OSError)


class GaveUp(StreamingError):
    """Retries ran out; the writer's `committed` records are in the table, its held ones are not."""


class RetryingWriter:
    def __init__(
        self,
        endpoint: HiveEndPoint,
        writer: RecordWriter,
        *,
        txns_per_batch: int = 10,
        retries: int = 8,
        backoff_s: float = 1.0,
        backoff_max_s: float = 30.0,
        auto_create_partition: bool = False,
        user: str | None = None,
        sasl_principal: str | None = None,
        on_retry: Callable[[int, float, Exception], None] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ):
        if retries < 0 or backoff_s < 0 or backoff_max_s < backoff_s:
            raise ValueError("retries and backoff_s must not be negative, nor backoff_max_s below backoff_s")
        self.endpoint = endpoint
        self.writer = writer
        self.txns_per_batch = txns_per_batch
        self.retries = retries
        self.backoff_s = backoff_s
        self.backoff_max_s = backoff_max_s
        self._connect = {"auto_create_partition": auto_create_partition, "user": user, "sasl_principal": sasl_principal}
        self.on_retry = on_retry
        self._sleep = sleep
        #: Records committed by this writer, in all.
        self.committed = 0
        #: Retries made in all (`failures` counts those since the last commit).
        self.retried = 0
        self.failures = 0
        self._held: list[bytes] = []
        self._conn = None
        self._batch = None

    @property
    def held(self) -> int:
        """Records written since the last commit (sent again after a failure; lost only to close())."""
        return len(self._held)

    def connect(self) -> None:
        """Open the connection now (the table checked, the partition made if asked), not retried: for a
        caller that wants a wrong table, store or login to fail at once, before any record."""
        if self._conn is None:
            self._conn = self.endpoint.new_connection(**self._connect)

    def write(self, record: bytes) -> None:
        """Into the open transaction (one is begun if needed). SerializationError: the record is left out
        and nothing else changes; other failures are retried as the module doc says."""
        self._attempt(lambda: self._write(record))

    def commit(self) -> int:
        """Commit the held records; returns how many (0, and nothing asked of the metastore, when none)."""
        if not self._held:
            return 0
        self._attempt(self._commit)
        done, self._held = len(self._held), []
        self.committed += done
        self.failures = 0
        return done

    def close(self) -> None:
        """Close the batch (its open and unused transactions are aborted) and the connection; records
        held and not committed are dropped."""
        self._held = []
        self._drop()

    # -- inside ------------------------------------------------------------------------------------

    def _write(self, record: bytes) -> None:
        self._open()
        self._batch.write(record)
        self._held.append(record)

    def _commit(self) -> None:
        self._open()
        try:
            self._batch.commit()
        except RETRIED:
            if self._batch.current_transaction_state() is not TxnState.COMMITTED:
                raise
            # Committed and marked; only the renames failed: the next batch's recover finishes them.
            log.warning("committed, but the files were not all moved into place: the next batch does it")
            self._drop()

    def _open(self) -> None:
        """A connection, a batch with a transaction left, an open transaction holding the held records."""
        if self._conn is None:
            self._conn = self.endpoint.new_connection(**self._connect)
        batch = self._batch
        if batch is not None and batch.current_transaction_state() is TxnState.OPEN:
            return
        if batch is None or not batch.remaining_transactions():
            if batch is not None:
                self._batch = None
                batch.close()
            self._batch = self._conn.fetch_transaction_batch(self.txns_per_batch, self.writer)
        self._batch.begin_next_transaction()
        if self._held:
            self._batch.write_many(self._held)  # they parsed once: none is rejected now

    def _attempt(self, step: Callable[[], None]) -> None:
        while True:
            try:
                return step()
            except FATAL:
                raise
            except RETRIED as e:
                self._drop()
                self.failures += 1
                if self.failures > self.retries:
                    raise GaveUp(f"{e} (gave up after {self.retries} retries)") from e
                pause = min(self.backoff_s * 2 ** (self.failures - 1), self.backoff_max_s)
                self.retried += 1
                if self.on_retry is not None:
                    self.on_retry(self.failures, pause, e)
                self._sleep(pause)

    def _drop(self) -> None:
        """Abort and close what is open, quietly: it may be what failed."""
        batch, conn, self._batch, self._conn = self._batch, self._conn, None, None
        for thing in (batch, conn):
            if thing is not None:
                try:
                    thing.close()
                except Exception as e:  # noqa: BLE001 - the failure being handled is the one that counts
                    log.debug("closing after a failure: %s", e)

"""End points and connections: which table (and partition) a stream writes to, and as whom."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

from hmsproxy.files.storage import arrow_filesystem
from hmsproxy.streaming.batch import TransactionBatch
from hmsproxy.streaming.errors import InvalidPartition
from hmsproxy.streaming.metastore import Metastore
from hmsproxy.streaming.target import describe_table, location_of

if TYPE_CHECKING:
    from hmsproxy.streaming.writers import RecordWriter


class HiveEndPoint:
    """A table, or one partition of it (`partition_vals` in the table's partition-key order), behind a
    metastore URI: the proxy's, so the table may live on any metastore of the federation."""

    def __init__(self, metastore_uri: str, database: str, table: str, partition_vals: Sequence[str] | None = None):
        self.metastore_uri = metastore_uri
        self.database = database
        self.table = table
        self.partition_vals = tuple(str(v) for v in partition_vals or ())

    def new_connection(
        self,
        auto_create_partition: bool = False,
        user: str | None = None,
        agent_info: str = "hmsproxy-streaming",
        *,
        sasl_principal: str | None = None,
    ) -> StreamingConnection:
        """`sasl_principal` (e.g. hive/_HOST@EXAMPLE.COM): the metastore's or proxy's Kerberos principal;
        every connection then authenticates with the caller's ticket cache (kinit / KRB5CCNAME)."""
        return StreamingConnection(
            self, auto_create_partition=auto_create_partition, user=user, agent_info=agent_info, sasl_principal=sasl_principal
        )

    def __repr__(self) -> str:
        values = f", partition_vals={list(self.partition_vals)}" if self.partition_vals else ""
        return f"HiveEndPoint({self.metastore_uri!r}, {self.database!r}, {self.table!r}{values})"


class StreamingConnection:
    """Checks the table (and makes the partition if asked); hands out transaction batches."""

    def __init__(
        self, endpoint: HiveEndPoint, *, auto_create_partition: bool, user: str | None, agent_info: str, sasl_principal: str | None = None
    ):
        self.endpoint = endpoint
        self.uri = endpoint.metastore_uri
        self.auto_create_partition = auto_create_partition
        self.agent_info = agent_info
        self.partition_vals = endpoint.partition_vals
        self.sasl_principal = sasl_principal
        self.ms = Metastore(self.uri, user, sasl_principal=sasl_principal)
        self.user = self.ms.user
        self._batches: list[TransactionBatch] = []
        self._lock = threading.Lock()
        try:
            self.target = describe_table(self.ms, endpoint.database, endpoint.table)
            if self.partition_vals and not self.target.partition_keys:
                raise InvalidPartition(f"{endpoint.database}.{endpoint.table} is not partitioned: give no partition values")
            # The store answers (keys, bucket, NameNode) before the metastore is changed: StorageError otherwise.
            arrow_filesystem(self.target.table_struct.sd.location)
            self.location(self.ms)  # the partition exists (or is made now), and the values fit
        except BaseException:
            self.ms.close()
            raise

    def location(self, ms: Metastore) -> str:
        return location_of(ms, self.target, self.partition_vals, create=self.auto_create_partition)

    def fetch_transaction_batch(self, num_transactions: int, writer: RecordWriter) -> TransactionBatch:
        batch = TransactionBatch(self, num_transactions, writer)
        with self._lock:
            self._batches = [b for b in self._batches if not b._closed] + [batch]
        return batch

    def close(self) -> None:
        """Close every batch still open (their open and unused transactions are aborted)."""
        with self._lock:
            batches, self._batches = self._batches, []
        try:
            for batch in batches:
                batch.close()
        finally:
            self.ms.close()

    def __enter__(self) -> StreamingConnection:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

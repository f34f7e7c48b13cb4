"""What the streaming API raises (the seed's exception kinds, in Python).

SerializationError (writers.py) concerns one record: the transaction goes on. Everything here
means the batch must be aborted and closed, and a new one fetched (the seed's "Error Handling").
"""

from __future__ import annotations


class StreamingError(Exception):
    """The batch can't go on: abort the transaction, close the batch, fetch a new one."""


class InvalidTable(StreamingError):
    """The table can't be streamed into (a view, transactional, a format other than Parquet/ORC, ...)."""


class InvalidPartition(StreamingError):
    """The partition values don't fit the table, or the partition is missing and may not be created."""


class TransactionError(StreamingError):
    """A transaction call failed (the metastore refused, timed it out, or could not be reached)."""


class LockTimeout(StreamingError):
    """The partition's lock was not granted in time (a compaction holds it, say)."""

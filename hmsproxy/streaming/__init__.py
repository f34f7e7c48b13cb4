"""Streaming ingest: rows pushed continuously into Hive tables in small transactions, through the proxy.

    from hmsproxy.streaming import HiveEndPoint, DelimitedInputWriter

    ep = HiveEndPoint("thrift://proxy:9083", "shop", "alerts", partition_vals=["Asia", "India"])
    conn = ep.new_connection(auto_create_partition=True, user="ingest")
    batch = conn.fetch_transaction_batch(10, DelimitedInputWriter(["id", "msg"], ",", ep))
    batch.begin_next_transaction()
    batch.write(b"1,Hello streaming")
    batch.commit()                       # visible to every new query from here on
    batch.close(); conn.close()

Hive's HCatalog Streaming API in Python terms (../shared/design/hive-streaming-api.md); the targets
are ordinary Parquet and ORC tables, which Spark reads (publish.py says how a commit becomes visible).
Rooms: endpoint.py (end points, connections), batch.py (transaction batches), publish.py (staging,
publishing, recovery), heartbeats.py, target.py (the table and partition), metastore.py (the
connection), writers.py + types.py (records into typed rows), datafiles.py (Parquet/ORC files),
buckets.py (Hive's bucket function), errors.py, retrying.py (the seed's error handling: retries with
backoff, the failed transaction's records sent again); cli.py is `hmsproxy stream`.
"""

from __future__ import annotations

import importlib

#: Public name -> the module that makes it. Imported on first use (PEP 562), so `hmsproxy`'s command
#: line, which names `hmsproxy stream`, does not load pyarrow and the writers for every command.
_HOMES = {
    "TransactionBatch": "batch",
    "TxnState": "batch",
    "HiveEndPoint": "endpoint",
    "StreamingConnection": "endpoint",
    "GaveUp": "retrying",
    "InvalidPartition": "errors",
    "InvalidTable": "errors",
    "LockTimeout": "errors",
    "StreamingError": "errors",
    "TransactionError": "errors",
    "DelimitedInputWriter": "writers",
    "RecordWriter": "writers",
    "RetryingWriter": "retrying",
    "SerializationError": "writers",
    "StrictJsonWriter": "writers",
    "StrictRegexWriter": "writers",
}
__all__ = sorted(_HOMES)


def __getattr__(name: str):
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'hmsproxy.streaming' has no attribute {name!r}")
    return getattr(importlib.import_module(f"hmsproxy.streaming.{home}"), name)

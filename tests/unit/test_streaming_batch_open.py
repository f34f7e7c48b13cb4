"""A batch that fails after the metastore opened its transactions aborts them at once, instead
of leaving them open until the metastore's reaper times them out."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from hmsproxy.streaming import batch as batch_module
from hmsproxy.streaming.target import Target
from hmsproxy.streaming.writers import DelimitedInputWriter


class RecordingMetastore:
    """Answers open_txns with ids 1..n and records every call (the fake of the batch's connection)."""

    made: list[RecordingMetastore] = []

    def __init__(self, *args, **kwargs):
        self.calls: list[tuple[str, object]] = []
        self.closed = False
        RecordingMetastore.made.append(self)

    def call(self, name, *args):
        self.calls.append((name, args[0] if args else None))
        if name == "open_txns":
            return SimpleNamespace(txn_ids=list(range(1, args[0].num_txns + 1)))
        if name == "get_config_value":
            return "300s"
        return None

    def close(self):
        self.closed = True


def test_transactions_are_aborted_when_the_heartbeats_cannot_connect(monkeypatch):
    def refused(*args, **kwargs):
        raise ConnectionRefusedError("the heartbeats' connection was refused")

    monkeypatch.setattr(batch_module, "Metastore", RecordingMetastore)
    monkeypatch.setattr(batch_module, "Heartbeats", refused)
    target = Target("db", "t", (("id", "int"),), (), "parquet", (), 0, 1, None)
    connection = SimpleNamespace(target=target, uri="thrift://127.0.0.1:1", user="u", sasl_principal=None, agent_info="a")

    with pytest.raises(ConnectionRefusedError):
        batch_module.TransactionBatch(connection, 4, DelimitedInputWriter(["id"], ","))

    [ms] = RecordingMetastore.made
    aborted = [request.txn_ids for name, request in ms.calls if name == "abort_txns"]
    assert aborted == [[1, 2, 3, 4]]
    assert ms.closed

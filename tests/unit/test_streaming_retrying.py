"""RetryingWriter's decisions on a fake metastore: what is sent again, what never twice, how long it
waits, when it gives up. (A real metastore killed mid-stream: tests/integration/test_stream_retries.py.)"""

from __future__ import annotations

import pytest

from hmsproxy.streaming.batch import TxnState
from hmsproxy.streaming.errors import InvalidTable, TransactionError
from hmsproxy.streaming.retrying import GaveUp, RetryingWriter
from hmsproxy.streaming.writers import SerializationError


class Table:
    """What the fake metastore holds, and the failures it is told to give (by call name, in order)."""

    def __init__(self, *failures: str):
        self.rows: list[bytes] = []
        self.failures = list(failures)
        self.batches: list[FakeBatch] = []
        self.connections = 0

    def maybe_fail(self, call: str) -> None:
        if self.failures and self.failures[0] == call:
            self.failures.pop(0)
            raise TransactionError(f"{call} failed: the metastore is away")


class FakeBatch:
    def __init__(self, table: Table, n: int):
        self.table, self.left, self.state = table, n, TxnState.INACTIVE
        self.rows: list[bytes] = []
        self.closed = False

    def remaining_transactions(self) -> int:
        return self.left

    def current_transaction_state(self) -> TxnState:
        return self.state

    def begin_next_transaction(self) -> None:
        assert not self.closed and self.state is not TxnState.OPEN and self.left
        self.left -= 1
        self.table.maybe_fail("begin")
        self.state, self.rows = TxnState.OPEN, []

    def write(self, record: bytes) -> None:
        assert self.state is TxnState.OPEN
        if record.startswith(b"bad"):
            raise SerializationError("not a number", record)
        self.table.maybe_fail("write")
        self.rows.append(record)

    def write_many(self, records) -> list:
        for r in records:
            self.write(r)
        return []

    def commit(self) -> None:
        self.table.maybe_fail("commit")  # before the metastore committed: the batch aborts it
        self.table.rows += self.rows
        self.state = TxnState.COMMITTED
        self.table.maybe_fail("rename")  # after: committed, the renames left to recover

    def close(self) -> None:
        self.closed = True
        self.left = 0


class FakeConnection:
    def __init__(self, table: Table):
        self.table = table

    def fetch_transaction_batch(self, n: int, writer) -> FakeBatch:
        self.table.maybe_fail("fetch")
        batch = FakeBatch(self.table, n)
        self.table.batches.append(batch)
        return batch

    def close(self) -> None:
        pass


class FakeEndPoint:
    def __init__(self, table: Table):
        self.table = table

    def new_connection(self, **kwargs) -> FakeConnection:
        self.table.maybe_fail("connect")
        self.table.connections += 1
        return FakeConnection(self.table)


def writer_of(table: Table, **kwargs) -> tuple[RetryingWriter, list[float]]:
    pauses: list[float] = []
    kwargs = {"txns_per_batch": 3, "retries": 4, "backoff_s": 1.0, "backoff_max_s": 3.0, **kwargs}
    return RetryingWriter(FakeEndPoint(table), writer=None, sleep=pauses.append, **kwargs), pauses


def test_a_failed_commit_sends_the_held_records_again_in_a_new_batch():
    table = Table("commit")
    stream, pauses = writer_of(table)
    for r in (b"1", b"2"):
        stream.write(r)
    assert stream.commit() == 2
    assert table.rows == [b"1", b"2"] and stream.committed == 2 and stream.held == 0
    assert pauses == [1.0] and stream.retried == 1 and stream.failures == 0
    assert len(table.batches) == 2 and table.batches[0].closed  # aborted and closed, then a new one
    assert table.connections == 2


def test_a_commit_that_failed_after_the_metastore_committed_is_not_sent_again():
    table = Table("rename")
    stream, pauses = writer_of(table)
    stream.write(b"1")
    assert stream.commit() == 1
    stream.write(b"2")
    stream.commit()
    assert table.rows == [b"1", b"2"] and pauses == []


def test_pauses_double_up_to_the_longest_and_reset_after_a_commit():
    table = Table("connect", "fetch", "begin", "write")
    stream, pauses = writer_of(table)
    stream.write(b"1")
    assert pauses == [1.0, 2.0, 3.0, 3.0]
    stream.commit()
    table.failures = ["commit"]
    stream.write(b"2")
    stream.commit()
    assert pauses == [1.0, 2.0, 3.0, 3.0, 1.0] and table.rows == [b"1", b"2"] and stream.retried == 5


def test_giving_up_keeps_what_was_committed_and_names_the_retries():
    table = Table()
    stream, pauses = writer_of(table, retries=2)
    stream.write(b"1")
    stream.commit()
    stream.write(b"2")
    table.failures = ["commit"] * 3  # the first try and both retries fail
    with pytest.raises(GaveUp, match=r"commit failed: the metastore is away \(gave up after 2 retries\)"):
        stream.commit()
    assert table.rows == [b"1"] and stream.committed == 1 and stream.held == 1 and pauses == [1.0, 2.0]
    assert all(b.closed for b in table.batches)


def test_a_bad_record_is_not_retried_and_leaves_the_transaction_going():
    table = Table()
    stream, pauses = writer_of(table)
    stream.write(b"1")
    with pytest.raises(SerializationError):
        stream.write(b"bad")
    stream.write(b"2")
    stream.commit()
    assert table.rows == [b"1", b"2"] and pauses == [] and len(table.batches) == 1


def test_a_wrong_table_is_not_retried():
    class Refusing(FakeEndPoint):
        def new_connection(self, **kwargs):
            raise InvalidTable("t is a view")

    stream = RetryingWriter(Refusing(Table()), None, sleep=pytest.fail)
    with pytest.raises(InvalidTable):
        stream.write(b"1")


def test_batches_roll_over_and_close_drops_the_held_records():
    table = Table()
    stream, _ = writer_of(table, txns_per_batch=2)
    for i in range(5):
        stream.write(b"%d" % i)
        stream.commit()
    stream.write(b"held")
    stream.close()
    assert table.rows == [b"%d" % i for i in range(5)]
    assert len(table.batches) == 3 and all(b.closed for b in table.batches)
    assert stream.held == 0 and stream.commit() == 0


def test_connect_is_not_retried():
    stream, pauses = writer_of(Table("connect"))
    with pytest.raises(TransactionError, match="connect failed"):
        stream.connect()
    stream.connect()
    stream.write(b"1")
    assert pauses == [] and stream.failures == 0


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="backoff_max_s below backoff_s"):
        RetryingWriter(FakeEndPoint(Table()), None, backoff_s=5, backoff_max_s=1)

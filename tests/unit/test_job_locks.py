"""exclusive_lock's check of the metastore's grant (jobs/locks.py): a grant beside another held lock
is let go and asked for again."""

from __future__ import annotations

import contextlib

from hmsproxy.jobs.locks import exclusive_lock
from hmsproxy.jobs.tables import Target
from hmsproxy.protocol import idl

hive = idl.hive


class Metastore:
    """Grants each request at once; a writer's lock (id 1) stays acquired for `writer_holds` looks."""

    user = "job"

    def __init__(self, writer_holds: int):
        self.writer_holds, self.next_id, self.calls = writer_holds, 10, []

    def lock(self, request):
        self.next_id += 1
        self.calls.append(("lock", self.next_id))
        return hive.LockResponse(lockid=self.next_id, state=hive.LockState.ACQUIRED)

    def locks_on(self, db, table, partition):
        self.calls.append(("locks_on", partition))
        mine = hive.ShowLocksResponseElement(lockid=self.next_id, state=hive.LockState.ACQUIRED)
        if self.writer_holds > 0:
            self.writer_holds -= 1
            return [hive.ShowLocksResponseElement(lockid=1, state=hive.LockState.ACQUIRED), mine]
        return [hive.ShowLocksResponseElement(lockid=2, state=hive.LockState.WAITING), mine]

    def unlock(self, lockid):
        self.calls.append(("unlock", lockid))

    def heartbeat_lock(self, lockid):
        pass


def test_a_grant_beside_a_held_lock_is_given_back_and_asked_again():
    ms = Metastore(writer_holds=1)
    target = Target("db", "t", "ds=1", "file:/w/t/ds=1", ("1",))
    with exclusive_lock(ms, target, lambda: contextlib.nullcontext(ms)) as lockid:
        assert lockid == 12
    assert ms.calls == [
        ("lock", 11), ("locks_on", "ds=1"), ("unlock", 11),  # the writer's lock (1) held beside it
        ("lock", 12), ("locks_on", "ds=1"),  # a waiting lock does not count
        ("unlock", 12),
    ]  # fmt: skip


class TableMetastore(Metastore):
    """Also keeps the last request; show_locks of the whole table lists a writer's lock on `held`."""

    def __init__(self, held: str):
        super().__init__(writer_holds=0)
        self.held, self.requests = held, []

    def lock(self, request):
        self.requests.append(request)
        return super().lock(request)

    def locks_on(self, db, table, partition):
        self.calls.append(("locks_on", partition))
        writer = hive.ShowLocksResponseElement(lockid=1, state=hive.LockState.ACQUIRED, partname=self.held)
        if self.held == "ds=1" and len(self.requests) > 1:
            writer.state = hive.LockState.WAITING  # the writer finished by the second look
        return [writer, hive.ShowLocksResponseElement(lockid=self.next_id, state=hive.LockState.ACQUIRED, partname="ds=0")]


def targets(n: int) -> list[Target]:
    return [Target("db", "t", f"ds={i}", f"file:/w/t/ds={i}", (str(i),)) for i in range(n)]


def test_many_partitions_are_locked_by_one_request_and_one_look_at_the_table():
    ms = TableMetastore(held="ds=9")  # a writer of a partition outside the batch: it does not count
    with exclusive_lock(ms, targets(3), lambda: contextlib.nullcontext(ms)):
        pass
    assert [c.partitionname for c in ms.requests[0].component] == ["ds=0", "ds=1", "ds=2"]
    assert ms.calls == [("lock", 11), ("locks_on", None), ("unlock", 11)]


def test_a_writer_of_one_partition_of_the_batch_holds_off_the_whole_batch():
    ms = TableMetastore(held="ds=1")
    with exclusive_lock(ms, targets(3), lambda: contextlib.nullcontext(ms)) as lockid:
        assert lockid == 12
    assert ms.calls == [("lock", 11), ("locks_on", None), ("unlock", 11), ("lock", 12), ("locks_on", None), ("unlock", 12)]

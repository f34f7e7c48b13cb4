"""A job's exclusive lock on what it rewrites, taken from the metastore through the proxy.

Streaming writers (hmsproxy.streaming) hold a shared lock on a partition from the start of each
transaction until its files are published; a job that swaps the partition's location takes the
exclusive lock first, so it waits for writers in flight, and writers of that partition wait for it
(writers of other partitions go on: the locks are per partition). An index rebuild reads a
partition under a shared read lock, so it and such a job never interleave on one partition. While held, the lock is heartbeated
on a connection of its own, since a rewrite may outlast the metastore's lock timeout.
Under the lock, what dead writers left behind is published or deleted first (streaming/publish.py).

The metastore's word is checked: Hive 2.3 grants a shared lock asked for while an exclusive one
waits, and then grants the exclusive one as soon as the locks that were there before it are gone,
with that later shared lock still held (measured; a writer's batch then published into the
location the job was replacing, and its rows were lost). So once granted, the job looks at the
partition's locks; if another one is held it lets its own go and asks again.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator

from hmsproxy.jobs.errors import JobError
from hmsproxy.jobs.tables import Target
from hmsproxy.protocol import idl

hive = idl.hive

#: How long a job waits for writers in flight before it gives the partition up (reported as failed).
LOCK_WAIT_S = 600.0


def lock_request(targets: list[Target], user: str) -> object:
    return _request([_component(t, hive.LockType.EXCLUSIVE, hive.DataOperationType.NO_TXN) for t in targets], user)


def _component(target: Target, kind: int, operation: int) -> object:
    return hive.LockComponent(
        type=kind,
        level=hive.LockLevel.PARTITION if target.is_partition else hive.LockLevel.TABLE,
        dbname=target.db,
        tablename=target.table,
        partitionname=target.name if target.is_partition else None,
        operationType=operation,
    )


def _request(components: list, user: str) -> object:
    return hive.LockRequest(component=components, user=user, hostname=socket.gethostname(), agentInfo="hmsproxy-job")


@contextlib.contextmanager
def exclusive_lock(
    ms,
    target: Target | list[Target],
    connect: Callable[[], object],
    *,
    wait_s: float = LOCK_WAIT_S,
    interval_s: float = 60.0,
    on_wait: Callable[[], None] | None = None,
) -> Iterator[int]:
    """Hold the exclusive lock of the target (or of every target in a list: partitions of one table,
    one request granted whole) for the block; `connect()` opens the heartbeat connection."""
    targets = target if isinstance(target, list) else [target]
    what = _named(targets)
    deadline = time.monotonic() + wait_s
    while True:
        lockid = _acquire(ms, lock_request(targets, ms.user), what, deadline, wait_s, on_wait)
        if not _held_beside(ms, targets, lockid):
            break
        ms.unlock(lockid)  # granted beside a writer's lock (module doc): let it finish, then ask again
        if time.monotonic() > deadline:
            raise JobError(f"waited {wait_s:.0f} s for the lock on {what} (writers hold it)")
        time.sleep(0.5)
    try:
        with _heartbeats(connect, lockid, interval_s):
            yield lockid
    finally:
        ms.unlock(lockid)


@contextlib.contextmanager
def beside_writers(ms, target: Target | list[Target], connect: Callable[[], object]) -> Iterator[None]:
    """The exclusive lock of the target (or of every target in a list, at once) for a rewrite: streaming
    writers in flight finish first, and what dead ones left in each location is published or deleted
    (streaming/publish.py) before the rewrite reads it."""
    from hmsproxy.streaming.publish import recover

    targets = target if isinstance(target, list) else [target]
    with exclusive_lock(ms, targets, connect):
        states = txn_states(ms)
        if len(targets) == 1:
            recover(targets[0].location, states)
        else:  # a listing each: round trips to the store, overlapped
            from hmsproxy.jobs.staged_pass import in_threads

            failed = [e for e in in_threads(lambda t: recover(t.location, states), targets) if isinstance(e, Exception)]
            if failed:
                raise failed[0]
        yield


def _named(targets: list[Target]) -> str:
    return targets[0].name if len(targets) == 1 else f"{len(targets)} partitions of {targets[0].db}.{targets[0].table}"


def _acquire(ms, request, what: str, deadline: float, wait_s: float, on_wait: Callable[[], None] | None) -> int:
    """The metastore's grant of a new lock request, waited for; its id."""
    answer = ms.lock(request)
    lockid = answer.lockid
    try:
        pause = 0.1
        while answer.state == hive.LockState.WAITING:
            if on_wait is not None:
                on_wait()
            if time.monotonic() > deadline:
                raise JobError(f"waited {wait_s:.0f} s for the lock on {what} (another job or writer holds it)")
            time.sleep(pause)
            pause = min(pause * 2, 2.0)
            answer = ms.check_lock(lockid)
        if answer.state != hive.LockState.ACQUIRED:
            raise JobError(f"the metastore refused the lock on {what}")
    except BaseException:
        ms.unlock(lockid)
        raise
    return lockid


@contextlib.contextmanager
def shared_read_lock(
    ms,
    targets: list[Target],
    connect: Callable[[], object],
    *,
    wait_s: float = LOCK_WAIT_S,
    interval_s: float = 60.0,
    on_wait: Callable[[], None] | None = None,
) -> Iterator[int | None]:
    """Hold a shared read lock on every target for the block (one request, granted whole): readers that
    must see a partition's files unchanged, such as an index rebuild, wait for a job's exclusive lock
    and hold the job off in turn, while streaming writers' shared locks go on beside them."""
    if not targets:
        yield None
        return
    components = [_component(t, hive.LockType.SHARED_READ, hive.DataOperationType.SELECT) for t in targets]
    lockid = _acquire(ms, _request(components, ms.user), _named(targets), time.monotonic() + wait_s, wait_s, on_wait)
    try:
        with _heartbeats(connect, lockid, interval_s):
            yield lockid
    finally:
        ms.unlock(lockid)


def _held_beside(ms, targets: list[Target], lockid: int) -> bool:
    """Does another lock on a target count as acquired next to ours? (One show_locks: of the partition,
    or of the whole table when there are several.)"""
    first = targets[0]
    if len(targets) == 1:
        locks = ms.locks_on(first.db, first.table, first.name if first.is_partition else None)
    else:
        names = {t.name for t in targets}
        locks = [e for e in ms.locks_on(first.db, first.table, None) if e.partname in names]
    return any(e.lockid != lockid and e.state == hive.LockState.ACQUIRED for e in locks)


@contextlib.contextmanager
def _heartbeats(connect: Callable[[], object], lockid: int, interval_s: float) -> Iterator[None]:
    stop = threading.Event()

    def beat() -> None:
        with connect() as beats:
            while not stop.wait(interval_s):
                beats.heartbeat_lock(lockid)

    thread = threading.Thread(target=beat, name="job-lock-heartbeats", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=interval_s + 30)


def txn_states(ms) -> Callable[[int], str]:
    """txn id -> "open" / "aborted" / "gone" (what streaming's recover asks), from one call."""
    states = {t.id: t.state for t in ms.open_txns_info()}

    def state(txnid: int) -> str:
        found = states.get(txnid)
        return "open" if found == hive.TxnState.OPEN else "aborted" if found == hive.TxnState.ABORTED else "gone"

    return state

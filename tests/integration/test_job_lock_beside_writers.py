"""A job's exclusive lock against a real Hive 2.3 metastore, through the proxy, when a writer's shared
lock jumps ahead of it: Hive grants a shared lock asked for while an exclusive one waits, then grants
the exclusive one as soon as the earlier locks are gone, the later shared lock still held. The job
must not run beside it (compact beside two streaming writers on S3 lost a batch's rows that way)."""

from __future__ import annotations

import threading
import time
import uuid

from hmsproxy.jobs.locks import exclusive_lock
from hmsproxy.jobs.metastore import MetastoreClient
from hmsproxy.jobs.tables import Target
from hmsproxy.protocol import idl
from hmsproxy.testing.builders import parquet_table

hive = idl.hive


def shared_lock(ms: MetastoreClient, table: str) -> int:
    """A streaming batch's lock on partition ds=1 (streaming/batch.py asks for the same)."""
    component = hive.LockComponent(
        type=hive.LockType.SHARED_READ,
        level=hive.LockLevel.PARTITION,
        dbname="default",
        tablename=table,
        partitionname="ds=1",
        operationType=hive.DataOperationType.INSERT,
        isAcid=False,
    )
    answer = ms.lock(hive.LockRequest(component=[component], user="writer", hostname="here", agentInfo="test writer"))
    assert answer.state == hive.LockState.ACQUIRED
    return answer.lockid


def test_the_job_waits_for_a_writer_whose_lock_jumped_ahead_of_its_own(proxy, tmp_path):
    name = f"lk_{uuid.uuid4().hex[:8]}"
    with MetastoreClient(proxy.uri) as ms:
        ms._client.create_table(parquet_table("default", name, (tmp_path / name).as_uri(), partition_keys=(("ds", "string"),)))
        target = Target("default", name, "ds=1", (tmp_path / name / "ds=1").as_uri(), ("1",))
        first = shared_lock(ms, name)
        held: dict[str, float] = {}

        def job() -> None:
            with MetastoreClient(proxy.uri) as own, exclusive_lock(own, target, lambda: MetastoreClient(proxy.uri)):
                held["at"] = time.monotonic()

        thread = threading.Thread(target=job)
        thread.start()
        deadline = time.monotonic() + 30
        while not any(e.state == hive.LockState.WAITING for e in ms.locks_on("default", name, "ds=1")):
            assert time.monotonic() < deadline, "the job's lock never waited"
            time.sleep(0.1)
        second = shared_lock(ms, name)  # granted ahead of the waiting exclusive lock
        ms.unlock(first)
        time.sleep(3)  # the job's lock is granted now, beside `second`
        assert "at" not in held and thread.is_alive(), "the job ran while a writer held the partition"
        released = time.monotonic()
        ms.unlock(second)
        thread.join(60)
        assert held["at"] >= released
        ms._client.drop_table("default", name, True)

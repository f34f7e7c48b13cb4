"""staged_pass: the driver-side pieces the one-pass jobs share (threads, file systems, staging names)."""

import pytest

from hmsproxy.jobs import staged_pass
from hmsproxy.jobs.errors import JobError


def test_in_threads_keeps_the_order_and_maps_a_failing_item_to_its_exception():
    def work(n: int) -> int:
        if n == 3:
            raise ValueError("three")
        return n * n

    results = staged_pass.in_threads(work, list(range(40)))
    assert [r for i, r in enumerate(results) if i != 3] == [i * i for i in range(40) if i != 3]
    assert isinstance(results[3], ValueError) and str(results[3]) == "three"


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("hdfs://nn:8020/w/t/ds=1", "hdfs://nn:8020/w/t", True),
        ("hdfs://nn:8020/w/t/ds=1", "hdfs://other:8020/w/t", False),
        ("s3a://bucket/t/ds=1", "hdfs://nn:8020/w/t", False),
        ("file:/tmp/w/t/ds=1", "file:/tmp/w/t", True),
    ],
)
def test_same_store_compares_scheme_and_authority(a, b, same):
    assert staged_pass.same_store(a, b) is same


def test_the_staging_directory_sits_beside_the_table_and_names_the_job():
    where = staged_pass.staging_location("hdfs://nn/w/db.db/t", "compact", "20261129T000000Z-abcdef")
    assert where == "hdfs://nn/w/db.db/t.hmsproxy-compact-staging-20261129T000000Z-abcdef"
    assert staged_pass.piece_directory(where, 7) == f"{where}/_piece=7"
    with pytest.raises(JobError):
        staged_pass.staging_location("/", "compact", "x")


def test_batches_by_size():
    assert list(staged_pass.batches("abcde", lambda _: 2, 4)) == [["a", "b"], ["c", "d"], ["e"]]


def test_write_tasks_keep_every_core_busy_and_none_idle():
    assert staged_pass.write_tasks(2000, 10 * 2**20) == staged_pass.MIN_WRITE_TASKS  # many small outputs
    assert staged_pass.write_tasks(3, 10 * 2**20) == 3  # never a task without an output
    assert staged_pass.write_tasks(10_000, 100 * staged_pass.TASK_BYTES) == 100  # a task per TASK_BYTES read
    assert staged_pass.write_tasks(0, 0) == 1

"""Where a stream's partition lives when several writers race to make it (target.location_of)."""

from __future__ import annotations

import pytest

from hmsproxy.protocol import idl
from hmsproxy.streaming.target import Target, location_of
from hmsproxy.testing.builders import parquet_table

hive = idl.hive


class RacedMetastore:
    """add_partition fails as `error`; the partition exists afterwards unless `made` is False."""

    def __init__(self, error: Exception, made: bool = True):
        self.error, self.made, self.calls = error, made, []

    def call(self, method: str, *args):
        self.calls.append(method)
        if method == "add_partition" or not self.made:
            raise self.error if method == "add_partition" else hive.NoSuchObjectException(message="no partition")
        partition = hive.Partition(values=args[2], sd=hive.StorageDescriptor(location="s3a://lake/t/ds=1"))
        if self.calls.count("get_partition") == 1:
            raise hive.NoSuchObjectException(message="not yet")  # before add_partition
        return partition


def target() -> Target:
    table = parquet_table("db", "t", "s3a://lake/t", partition_keys=(("ds", "string"),))
    return Target("db", "t", (("id", "int"),), ("ds",), "parquet", (), 0, 1, table)


@pytest.mark.parametrize(
    "error",
    [
        hive.AlreadyExistsException(message="Partition already exists"),
        # Hive on S3: the loser's undo could not delete the directory it thought it had made.
        hive.MetaException(message="Got exception: MetaException Unable to delete directory: s3a://lake/t/ds=1"),
    ],
)
def test_a_writer_that_lost_the_race_to_make_the_partition_uses_the_winners(error):
    ms = RacedMetastore(error)
    assert location_of(ms, target(), ("1",), create=True) == "s3a://lake/t/ds=1"
    assert ms.calls == ["get_partition", "add_partition", "get_partition"]


def test_a_failed_add_partition_with_no_partition_made_is_the_metastores_error():
    ms = RacedMetastore(hive.MetaException(message="disk full"), made=False)
    with pytest.raises(hive.MetaException, match="disk full"):
        location_of(ms, target(), ("1",), create=True)

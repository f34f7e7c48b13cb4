"""Jobs ask the metastore whether the table, partition or index exists before they start Spark."""

from __future__ import annotations

import io

import pytest

from hmsproxy.jobs import context as context_module
from hmsproxy.jobs import skew_layout
from hmsproxy.jobs.cli import build_parser, run_job_command
from hmsproxy.jobs.context import JobContext
from hmsproxy.jobs.metastore import MetastoreClient
from hmsproxy.protocol import idl
from tests.unit.test_jobs import table

hive = idl.hive


class FakeThrift:
    """The Thrift calls MetastoreClient makes, on one partitioned Parquet table db.t (ds=1, ds=2), no index."""

    def __init__(self):
        self.calls: list[str] = []

    def get_table(self, db, name):
        self.calls.append(f"get_table {db}.{name}")
        if (db, name) != ("db", "t"):
            raise hive.NoSuchObjectException(message=f"{db}.{name} table not found")
        return table()

    def get_partition_names(self, db, name, max_parts):
        self.calls.append(f"get_partition_names {db}.{name}")
        return ["ds=1", "ds=2"]

    def get_index_by_name(self, db, name, index):
        self.calls.append(f"get_index_by_name {db}.{name}.{index}")
        raise hive.NoSuchObjectException(message=f"index {index} on {db}.{name} does not exist")


@pytest.fixture
def metastore(monkeypatch):
    """Every job's connection (MetastoreClient, skew-layout's open_metastore) on a FakeThrift; Spark refuses to start."""
    thrift = FakeThrift()
    connected: list[str] = []

    def connect(uri, user=None, timeout_s=600.0, sasl_principal=None):
        connected.append(uri if sasl_principal is None else f"{uri} as {sasl_principal}")
        client = MetastoreClient.__new__(MetastoreClient)
        client.uris, client._client = uri, thrift
        thrift.close = lambda: None
        return client

    def no_spark(*_args, **_kwargs):
        raise AssertionError("the job started Spark")

    monkeypatch.setattr(context_module, "MetastoreClient", connect)
    monkeypatch.setattr(skew_layout, "open_metastore", connect)
    monkeypatch.setattr(context_module, "build_session", no_spark)
    monkeypatch.setattr(context_module, "_spark_running_here", lambda: False)  # whatever ran in this process before
    return thrift, connected


def run(argv: list[str]) -> tuple[int, str, JobContext]:
    err = io.StringIO()
    ctx = JobContext(stdout=io.StringIO(), stderr=err)
    return run_job_command(build_parser().parse_args(argv), context=ctx), err.getvalue(), ctx


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["compact", "db.missing"], "hmsproxy job compact: table db.missing does not exist (metastore thrift://127.0.0.1:9083)"),
        (["compact", "db.t", "--partition", "ds=3"], "hmsproxy job compact: no partition of db.t matches ds=3"),
        (["skew-layout", "db.missing"], "hmsproxy job skew-layout: table db.missing does not exist"),
        (["rebuild-index", "db.t.by_id"], "hmsproxy job rebuild-index: index by_id on db.t does not exist"),
    ],
)
def test_a_missing_table_partition_or_index_fails_before_spark_starts(metastore, argv, message):
    thrift, connected = metastore
    status, err, ctx = run(argv)
    assert status == 1
    assert err.startswith(message) and err.count("\n") == 1
    assert not ctx.spark_started
    assert connected == ["thrift://127.0.0.1:9083"]  # the dev proxy, as Spark would have been told


def test_usage_errors_found_in_the_metastore_also_come_before_spark(metastore):
    status, err, ctx = run(["compact", "db.t", "--partition", "hr=1"])
    assert status == 2
    assert "--partition names hr but db.t is partitioned by ds" in err
    assert not ctx.spark_started


def test_the_uri_checked_is_the_one_spark_would_use(metastore):
    thrift, connected = metastore
    err = io.StringIO()
    ctx = JobContext(spark_conf={"spark.hadoop.hive.metastore.uris": "thrift://proxy:9999"}, stdout=io.StringIO(), stderr=err)
    assert run_job_command(build_parser().parse_args(["compact", "db.missing"]), context=ctx) == 1
    assert connected == ["thrift://proxy:9999"]
    assert "thrift://proxy:9999" in err.getvalue()


def test_under_spark_submit_without_uri_only_the_session_knows_the_metastore(metastore, monkeypatch):
    thrift, connected = metastore
    monkeypatch.setenv("PYSPARK_GATEWAY_PORT", "1")
    status, err, _ = run(["compact", "db.missing"])
    assert connected == [] and "the job started Spark" in err and status == 1

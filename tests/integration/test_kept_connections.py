"""Metastore connections kept between reads (clients/kept_connections.py), through the real proxy."""

from __future__ import annotations

import socket
import threading

import pytest

from hmsproxy.clients.kept_connections import KeptConnections
from hmsproxy.jobs.metastore import JobError
from hmsproxy.protocol import idl
from hmsproxy.testing import storage, table

PARQUET_INPUT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat"
PARQUET_OUTPUT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"
PARQUET_SERDE = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"


@pytest.fixture
def connections(proxy):
    kept = KeptConnections(proxy.uri, "alice")
    yield kept
    for client in kept._idle:
        client.close()


def test_together_runs_each_work_on_a_connection_of_its_own_at_the_same_time(connections):
    meeting = threading.Barrier(3, timeout=20)  # broken unless all three calls are under way at once
    used = []

    def work(ms):
        used.append(id(ms))
        meeting.wait()
        return sorted(ms._client.get_all_databases())

    answers = connections.together(work, work, work)

    assert len(set(used)) == 3
    assert answers[0] == answers[1] == answers[2] and "default" in answers[0]
    assert len(connections._idle) == 3  # kept for the next read
    again = connections.together(work, work, work)  # the same three connections, none opened anew
    assert again == answers and set(id(c) for c in connections._idle) == set(used)


def test_a_failing_work_fails_together_after_the_others_ended_and_keeps_its_connection(connections):
    ended = []

    def slow(ms):
        answer = ms._client.get_all_databases()
        ended.append("slow")
        return answer

    with pytest.raises(JobError, match="does not exist"):
        connections.together(slow, lambda ms: ms.get_table("default", "no_such_table_anywhere"), slow)
    assert ended == ["slow", "slow"]
    assert len(connections._idle) == 3  # an answer, even an error, leaves the connection usable


def test_a_connection_gone_stale_is_replaced_once(connections):
    first = connections.run(lambda ms: ms)
    stale = first._client._connection._recorder.inner.sock
    stale.shutdown(socket.SHUT_RDWR)  # as a proxy restart leaves it

    databases = connections.run(lambda ms: ms._client.get_all_databases())

    assert "default" in databases
    assert connections._idle and connections._idle[0] is not first


def test_answers_come_back_in_the_order_of_the_works(connections):
    names = connections.together(*[lambda ms, n=n: (n, ms._client.get_database("default").name) for n in range(4)])
    assert names == [(n, "default") for n in range(4)]
    assert all(isinstance(c._client.get_database("default"), idl.hive.Database) for c in connections._idle)


def test_a_lookup_of_a_missing_table_or_column_says_so(proxy, proxy_client, tag, tmp_path):
    from hmsproxy.clients.index_lookup import arrow_lookup

    with pytest.raises(JobError, match=f"table default.no_such_{tag} does not exist"):
        arrow_lookup(proxy.uri, f"default.no_such_{tag}", {"x": 1})
    sd = storage((("x", "int"),), location=f"file:{tmp_path}/kept")
    sd.inputFormat, sd.outputFormat, sd.serdeInfo.serializationLib = PARQUET_INPUT, PARQUET_OUTPUT, PARQUET_SERDE
    proxy_client.create_table(table("default", f"kept_{tag}", sd=sd))
    with pytest.raises(ValueError, match="has no column y"):
        arrow_lookup(proxy.uri, f"default.kept_{tag}", {"y": 1})
    assert arrow_lookup(proxy.uri, f"default.kept_{tag}", {"x": 1}).table.num_rows == 0

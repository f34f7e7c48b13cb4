"""A kept connection the metastore closed is noticed before a write goes over it (a write is never
sent twice, so it must not meet a dead connection), and a protocol error closes ours as Hive closes its."""

from __future__ import annotations

import socket
import threading

from thriftpy2.thrift import TApplicationException

from hmsproxy.protocol import idl
from hmsproxy.protocol.relay import is_protocol_error
from hmsproxy.protocol.required import missing_argument, unset_required
from hmsproxy.upstream.wire import ThriftConnection

hive = idl.hive


def test_a_connection_closed_by_the_other_end_is_told_apart_from_an_idle_open_one():
    with socket.create_server(("127.0.0.1", 0)) as server:
        conn = ThriftConnection("m", (f"thrift://127.0.0.1:{server.getsockname()[1]}",), connect_timeout_s=2, call_timeout_s=2)
        conn.open()
        accepted, _ = server.accept()
        try:
            assert conn.closed_by_peer() is False  # open and idle
            accepted.close()
            deadline = threading.Event()
            for _ in range(50):  # the FIN arrives at once on loopback; bounded all the same
                if conn.closed_by_peer():
                    break
                deadline.wait(0.01)
            assert conn.closed_by_peer() is True
        finally:
            conn.close()


def test_a_protocol_errors_body_is_recognised():
    from thriftpy2.protocol import TCyBinaryProtocolFactory
    from thriftpy2.utils import serialize

    refused = serialize(
        TApplicationException(TApplicationException.PROTOCOL_ERROR, "Required field 'x' is unset!"), TCyBinaryProtocolFactory()
    )
    internal = serialize(TApplicationException(TApplicationException.INTERNAL_ERROR, "boom"), TCyBinaryProtocolFactory())
    assert is_protocol_error(refused) and not is_protocol_error(internal)
    assert not is_protocol_error(refused[:5])  # cut short: never decoded


def test_unset_required_fields_are_named_as_java_names_them():
    assert (
        unset_required(idl.HmsProxy.abort_txn_args(rqst=hive.AbortTxnRequest()))
        == "Required field 'txnid' is unset! Struct:AbortTxnRequest"
    )
    nested = idl.HmsProxy.update_table_column_statistics_args(
        stats_obj=hive.ColumnStatistics(statsDesc=hive.ColumnStatisticsDesc(dbName="d", tableName="t"), statsObj=[])
    )
    assert unset_required(nested) == "Required field 'isTblLevel' is unset! Struct:ColumnStatisticsDesc"
    assert unset_required(idl.HmsProxy.abort_txn_args(rqst=hive.AbortTxnRequest(txnid=1))) is None
    assert unset_required(idl.HmsProxy.get_table_args(dbname=None, tbl_name=None)) is None  # args fields are never required


def test_a_struct_argument_left_out_is_named_with_its_type():
    assert missing_argument(idl.HmsProxy.commit_txn_args(), "commit_txn") == (
        "hmsproxy: commit_txn needs its argument 'rqst' (CommitTxnRequest)"
    )
    assert missing_argument(idl.HmsProxy.commit_txn_args(rqst=hive.CommitTxnRequest(txnid=1)), "commit_txn") is None
    assert missing_argument(idl.HmsProxy.get_table_args(), "get_table") is None  # no struct argument to miss

"""A kept connection the metastore closed is noticed before a write goes over it (a write is never
sent twice, so it must not meet a dead connection), and a protocol error closes ours as Hive closes its."""

from __future__ import annotations

import socket
import threading

from thriftpy2.thrift import TApplicationException

from hmsproxy.protocol import idl
from hmsproxy.protocol.relay import ends_connection
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
    assert ends_connection(refused) and not ends_connection(internal)
    # Cut short (the relay holds what the first reads brought): never decoded, and the type can't be
    # told, so the connection is not kept.
    assert ends_connection(refused[:7]) and ends_connection(internal[:7])


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


def _exception_message(method: str, exc: TApplicationException) -> bytes:
    from thriftpy2.protocol import TCyBinaryProtocolFactory
    from thriftpy2.thrift import TMessageType
    from thriftpy2.transport import TCyMemoryBuffer

    buffer = TCyMemoryBuffer()
    proto = TCyBinaryProtocolFactory().get_protocol(buffer)
    proto.write_message_begin(method, TMessageType.EXCEPTION, 1)
    exc.write(proto)
    proto.write_message_end()
    proto.trans.flush()
    return buffer.getvalue()


def _answering_in_two_pieces(answer: bytes, first: int):
    """A server that answers one call with `answer`: its first `first` bytes, a pause, the rest
    (as Hive 3.1 writes a long protocol error)."""
    server = socket.create_server(("127.0.0.1", 0))

    def serve():
        accepted, _ = server.accept()
        with accepted:
            accepted.recv(65536)
            accepted.sendall(answer[:first])
            threading.Event().wait(0.05)
            accepted.sendall(answer[first:])
            accepted.recv(1)  # until the client closes

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return server, thread


def test_a_relayed_protocol_error_in_two_pieces_closes_the_connection():
    from hmsproxy.downstream.reply_sink import ReplySink

    message = "Required field 'dbName' is unset! Struct:CacheFileMetadataRequest(dbName:null, tblName:" + "a" * 4000 + ")"
    answer = _exception_message("getVersion", TApplicationException(TApplicationException.PROTOCOL_ERROR, message))
    header_length = 4 + 4 + len("getVersion") + 4  # strict binary: version and type, name, sequence id
    server, thread = _answering_in_two_pieces(answer, header_length + 7)
    with server:
        conn = ThriftConnection("m", (f"thrift://127.0.0.1:{server.getsockname()[1]}",), connect_timeout_s=2, call_timeout_s=5)
        relayed = bytearray()
        sink = ReplySink(relayed.extend, "getVersion", 1)
        try:
            conn.relay("getVersion", idl.HmsProxy.getVersion_args(), sink)
            sink.finish()
            assert not conn.is_open  # Hive would answer the next call on it with nothing
        finally:
            conn.close()
            thread.join(timeout=5)
    assert message.encode() in bytes(relayed)  # the client got the whole error all the same

"""relay.py's pieces that need no server: the reply header's length, the outcome from the body's
first field, and the `server.relay` key."""

from __future__ import annotations

from thriftpy2.protocol import TBinaryProtocol
from thriftpy2.thrift import TApplicationException, TMessageType
from thriftpy2.transport import TMemoryBuffer

from hmsproxy.protocol import idl
from hmsproxy.protocol.framing import message_header
from hmsproxy.protocol.relay import outcome
from hmsproxy.testing import table
from tests.unit.test_config import own

A = idl.HmsProxy


def message(result, name: str = "get_table", mtype: int = TMessageType.REPLY) -> bytes:
    buf = TMemoryBuffer()
    proto = TBinaryProtocol(buf)
    proto.write_message_begin(name, mtype, 7)
    result.write(proto)
    proto.write_message_end()
    return buf.getvalue()


def test_the_body_starts_after_the_header_and_its_first_field_says_the_outcome():
    ok = message(A.get_table_result(success=table("shop", "t")))
    body = ok[message_header(ok).length :]
    assert body[:3] == b"\x0c\x00\x00"  # field 0 (success), a struct
    assert outcome(A.get_table_result, TMessageType.REPLY, body) == ("ok", None)
    missing = message(A.get_table_result(o2=idl.hive.NoSuchObjectException(message="no")))
    missing_body = missing[message_header(missing).length :]
    assert outcome(A.get_table_result, TMessageType.REPLY, missing_body) == ("NoSuchObjectException", "no")
    assert outcome(A.get_table_result, TMessageType.REPLY, missing_body[:6]) == ("NoSuchObjectException", None)  # cut short
    void = message(A.drop_table_result(), "drop_table")
    assert outcome(A.drop_table_result, TMessageType.REPLY, void[message_header(void).length :]) == ("ok", None)
    assert outcome(A.get_table_result, TMessageType.EXCEPTION, b"") == ("application_error", None)
    buf = TMemoryBuffer()
    TApplicationException(TApplicationException.UNKNOWN_METHOD, "no such call").write(TBinaryProtocol(buf))
    assert outcome(A.get_table_result, TMessageType.EXCEPTION, buf.getvalue()) == ("application_error", "no such call")


def test_server_relay_is_on_unless_turned_off(tmp_path):
    head = "primary-meta-store: {name: p, remote-meta-store-uris: 'thrift://h:9083'}\n"
    assert own(tmp_path, head).server.relay is True
    assert own(tmp_path, head + "server: {relay: false}\n").server.relay is False

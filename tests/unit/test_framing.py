"""framing.py: whole messages off a socket however the bytes arrive, and both header styles."""

from __future__ import annotations

import socket
import struct

import pytest
from thriftpy2.protocol import TBinaryProtocol
from thriftpy2.thrift import TMessageType, TType
from thriftpy2.transport import TMemoryBuffer, TTransportException

from hmsproxy.protocol import codec, framing, idl
from hmsproxy.protocol._thriftwalk import value_end
from hmsproxy.protocol.framing import MessageReader, message_header, readable_now
from hmsproxy.testing import partition, table
from tests.support.pieces import Pieces

A = idl.HmsProxy


def call(name: str, args, seqid: int = 7, strict: bool = True) -> bytes:
    buf = TMemoryBuffer()
    proto = TBinaryProtocol(buf, strict_write=strict)
    proto.write_message_begin(name, TMessageType.CALL, seqid)
    args.write(proto)
    proto.write_message_end()
    return buf.getvalue()


GET = call("get_table", A.get_table_args(dbname="shop", tbl_name="events"))
ADD = call("add_partitions", A.add_partitions_args(new_parts=[partition("shop", "events", [f"{i:05d}"]) for i in range(300)]), 8)


@pytest.mark.parametrize("piece", [7, 100, 1 << 20])
def test_messages_come_whole_however_the_bytes_arrive(piece):
    reader = MessageReader(Pieces(GET + ADD + GET, piece).recv)
    first, second, third = reader.next(), reader.next(), reader.next()
    assert first.data == GET and third.data == GET and second.data == ADD
    assert (first.header.name, first.header.mtype, first.header.seqid) == ("get_table", TMessageType.CALL, 7)
    assert first.decoded(A.get_table_args) == A.get_table_args(dbname="shop", tbl_name="events")
    assert len(second.decoded(A.add_partitions_args).new_parts) == 300
    with pytest.raises(TTransportException):  # the client left
        reader.next()


def test_old_style_headers_and_framed_transport():
    old = call("get_table", A.get_table_args(dbname="shop", tbl_name="t"), seqid=3, strict=False)
    header = message_header(old)
    assert (header.name, header.mtype, header.seqid) == ("get_table", TMessageType.CALL, 3)
    framed = MessageReader(Pieces(struct.pack("!i", len(GET)) + GET + struct.pack("!i", len(old)) + old, 5).recv, framed=True)
    assert framed.next().data == GET and framed.next().data == old
    assert message_header(GET[:10]) is None  # too short to tell


def test_the_c_walker_bounds_messages_as_its_python_twin_does():
    old = call("get_table", A.get_table_args(dbname="shop", tbl_name="t"), seqid=3, strict=False)
    for message in (GET, ADD, old):
        for cut in (0, 5, 8, 20, len(message) - 1, len(message)):
            assert framing.message_bounds(message[:cut]) == framing.python_message_bounds(message[:cut])
        assert framing.message_bounds(message)[3:] == (message_header(message).length, len(message))
    assert framing.message_bounds(GET + ADD)[4] == len(GET)  # the next message's bytes are not this one's
    for garbage in (b"\xff\xff\xff\xff" + b"\x00" * 20, b"\x80\x01\x00\x01\xff\xff\xff\xff"):
        with pytest.raises(ValueError):
            framing.message_bounds(garbage)


def test_bytes_that_are_not_a_thrift_message_are_refused():
    with pytest.raises(ValueError, match="not a Thrift binary-protocol message"):
        MessageReader(Pieces(b"\xff\xff\xff\xff" + b"\x00" * 20, 100).recv).next()


def test_the_python_walker_answers_as_the_c_one():
    body = call("alter_table", A.alter_table_args(dbname="shop", tbl_name="t", new_tbl=table("shop", "t")))
    start = message_header(body).length
    assert codec.value_end(body, start, TType.STRUCT) == value_end(body, start, TType.STRUCT) == len(body)
    assert codec.value_end(body[:-3], start, TType.STRUCT) == value_end(body[:-3], start, TType.STRUCT) == -1


def test_a_large_message_in_small_pieces_is_not_walked_once_per_piece(monkeypatch):
    walks = []
    bounds = framing.message_bounds
    monkeypatch.setattr(framing, "message_bounds", lambda *a: walks.append(1) or bounds(*a))
    sock = Pieces(ADD, 100)
    assert MessageReader(sock.recv, more_waiting=sock.waiting).next().data == ADD
    assert len(walks) < 20  # ~900 pieces: walked as the message doubles, and at its end
    walks.clear()
    assert MessageReader(Pieces(ADD, 100).recv).next().data == ADD  # nothing said to be waiting: any piece may be the last
    assert len(walks) > 800


def test_readable_now_sees_bytes_waiting_on_a_socket():
    a, b = socket.socketpair()
    try:
        waiting = readable_now(a)
        assert not waiting()
        b.sendall(b"x")
        assert waiting()
    finally:
        a.close()
        b.close()

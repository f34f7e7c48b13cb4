"""Whole Thrift messages off a socket, as bytes: where a message's header and body end.

The server reads each client call whole before decoding it (server.py), so that a read the proxy
only forwards can go to the metastore as the client sent it (shortcuts.py), and the relay reads a
metastore's reply header the same way (wire.py). Where a header and body end is found by the C
walker (`_thriftwalk.message_bounds`) without decoding anything.
"""

from __future__ import annotations

import select
import struct
from collections.abc import Callable
from functools import partial
from typing import NamedTuple

from thriftpy2.protocol import TCyBinaryProtocol
from thriftpy2.thrift import TType
from thriftpy2.transport import TCyMemoryBuffer, TTransportException

from hmsproxy.protocol import codec

# The C walker (_thriftwalk.c, built by setup.py), imported here for the whole proxy. Without it
# (an install built without a C compiler) messages are framed by codec's Python twin and nothing
# is relayed (relay.py): copying answers value by value in Python would cost more than it saves.
try:
    from hmsproxy.protocol._thriftwalk import exchange, has_field, message_bounds, value_end

    WALKER_IN_C = True
except ImportError:  # pragma: no cover - a build without a C compiler
    exchange, has_field, message_bounds, value_end = None, None, None, codec.value_end  # message_bounds: below
    WALKER_IN_C = False

# `exchange`'s answers (_thriftwalk.c): its statuses, and how it fills the catalog in (relay.CatalogFill.in_c);
# numbered once, in _thriftwalk.h (the extension is required: setup.py).
from hmsproxy.protocol import _thriftwalk  # noqa: E402

DONE, OVER, CLOSED, ERRNO = _thriftwalk.X_DONE, _thriftwalk.X_OVER, _thriftwalk.X_CLOSED, _thriftwalk.X_ERRNO
FILL_STRUCT, FILL_LIST = _thriftwalk.FILL_STRUCT, _thriftwalk.FILL_LIST

#: The first word of a strict binary-protocol message header (the message type in its low byte).
VERSION_1 = -2147418112  # 0x80010000 as a signed int32
_VERSION_MASK = -65536  # 0xFFFF0000
_TWO_I32 = struct.Struct("!ii")
_I32 = struct.Struct("!i")
#: Bytes asked of the socket at a time (more once a message is larger than this).
CHUNK = 65_536


class Header(NamedTuple):
    name: str
    mtype: int
    seqid: int
    #: Bytes of the header: the body starts here.
    length: int


_header = partial(tuple.__new__, Header)  # Header(...) without its Python-level __new__: every call reads two


def message_header(data) -> Header | None:
    """The header of the message at the start of `data`, or None while `data` is too short to tell.
    Strict (version and type, name, seqid) or old style (name, type, seqid), as Thrift's binary protocol allows."""
    if len(data) < 8:
        return None
    first, second = _TWO_I32.unpack_from(data)
    if first < 0:
        if first & _VERSION_MASK != VERSION_1:
            raise ValueError(f"not a Thrift binary-protocol message (version word {first & 0xFFFFFFFF:#010x})")
        length = 12 + second
        if len(data) < length:
            return None
        return _header((bytes(data[8 : 8 + second]).decode(), first & 0xFF, _I32.unpack_from(data, 8 + second)[0], length))
    length = 9 + first  # old style: `first` is the name's length
    if len(data) < length:
        return None
    return _header((bytes(data[4 : 4 + first]).decode(), data[4 + first], _I32.unpack_from(data, 5 + first)[0], length))


def python_message_bounds(data) -> tuple[str, int, int, int, int] | None:
    """(name, message type, seqid, header length, end) of the message at the start of `data`, `end`
    -1 while its body is incomplete; None while its header is (the C walker's message_bounds)."""
    header = message_header(data)
    if header is None:
        return None
    return (*header, value_end(data, header.length, TType.STRUCT))


if message_bounds is None:  # pragma: no cover - a build without a C compiler
    message_bounds = python_message_bounds


def header_bytes(name: str, mtype: int, seqid: int) -> bytes:
    """A strict message header."""
    encoded = name.encode()
    return b"".join((_TWO_I32.pack(VERSION_1 | mtype, len(encoded)), encoded, _I32.pack(seqid)))


def readable_now(sock):
    """`more_waiting` for MessageReader: whether `sock` has bytes to read without waiting."""
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    pending = getattr(sock, "pending", None)  # a TLS socket may hold decrypted bytes the kernel no longer sees
    return lambda: bool((pending is not None and pending()) or poller.poll(0))


def received(recv, size: int = CHUNK) -> bytes:
    """What the socket has, at most `size` bytes; EOF as thriftpy2's transport reports it."""
    data = recv(size)
    if not data:
        raise TTransportException(type=TTransportException.END_OF_FILE, message="TSocket read 0 bytes")
    return data


class Message:
    """One message as it came (a framed transport's length not included), and its header."""

    __slots__ = ("data", "header")

    def __init__(self, data: bytes, header: Header):
        self.data = data
        self.header = header

    def decoded(self, struct_cls):
        """The body as a `struct_cls` (thriftpy2's C decoder; codec.py's for maps keyed by lists)."""
        value = struct_cls()
        try:
            value.read(TCyBinaryProtocol(TCyMemoryBuffer(self.data[self.header.length :])))
        except TypeError:  # a map keyed by lists (SkewedInfo's location map): see codec.py
            value = codec.decode(self.data, struct_cls)[3]
        return value


class MessageReader:
    """The messages a peer sends on one connection, one whole message at a time.

    Bytes past a message's end stay for the next one. An incomplete message is walked again each
    time what has arrived doubled, and before the reader would wait for more (it may be complete),
    so a large message sent in many small pieces is not walked once per piece.
    """

    def __init__(self, recv, *, framed: bool = False, more_waiting=lambda: False):
        """`recv`: the socket's; `more_waiting()`: whether the socket has bytes to read right now
        (then a large message is not walked again before they are read; `readable_now`)."""
        self._recv = recv
        self._more_waiting = more_waiting
        self._buf: bytes | bytearray = b""
        #: The next whole message (read once per call: bound here, so it costs no dispatching call).
        self.next: Callable[[], Message] = self._next_frame if framed else self._next_message

    @property
    def holds(self) -> bool:
        """Whether bytes past the last message wait here (the socket's next bytes are not the next call's)."""
        return bool(self._buf)

    def push(self, data: bytes) -> None:
        """Bytes read off the socket elsewhere (downstream/hits.py), to come before what it reads next."""
        self._buf = data if not self._buf else bytes(self._buf) + data

    def _next_message(self) -> Message:
        buf = self._buf
        walked = 0  # bytes there were when the message was last found incomplete
        drained = True  # the socket may have nothing more: the message may be all here
        while True:
            if buf and (len(buf) >= 2 * walked or (drained and not self._more_waiting())):
                bounds = message_bounds(buf)
                if bounds is not None and bounds[4] >= 0:
                    return self._taken(buf, bounds)
                walked = len(buf)
            asked = max(CHUNK, len(buf))
            before = len(buf)
            buf = self._more(buf, asked)
            drained = len(buf) - before < asked

    def _next_frame(self) -> Message:
        buf = self._buf
        while len(buf) < 4:
            buf = self._more(buf)
        (size,) = _I32.unpack_from(buf)
        if size < 0:
            raise ValueError(f"a frame of {size} bytes")
        while len(buf) < 4 + size:
            buf = self._more(buf)
        message = bytes(buf[4 : 4 + size])
        header = message_header(message)
        if header is None:
            raise ValueError("a frame shorter than its message header")
        self._buf = buf[4 + size :]
        return Message(message, header)

    def _more(self, buf, size: int = CHUNK):
        chunk = received(self._recv, size)
        if not buf:
            return chunk
        if isinstance(buf, bytes):
            buf = bytearray(buf)
        buf += chunk
        return buf

    def _taken(self, buf, bounds: tuple) -> Message:
        header, end = _header(bounds[:4]), bounds[4]
        if end == len(buf):
            self._buf = b""
            return Message(bytes(buf) if isinstance(buf, bytearray) else buf, header)
        self._buf = buf[end:]
        return Message(bytes(buf[:end]), header)

"""Reading Thrift messages thriftpy2's decoder cannot: maps keyed by lists.

Hive's `SkewedInfo.skewedColValueLocationMaps` is a `map<list<string>,string>`
(skewed values -> directory). thriftpy2 builds every map as a dict, so a list key
raises `TypeError: unhashable type: 'list'` halfway through a message, in its C
decoder and its Python one alike; the Hive CLI's `ALTER TABLE … SET SKEWED LOCATION`
would break the connection, and so would reading such a table back.

The fast decoder stays in front. A :class:`RecordingSocket` under the transport
(buffered or framed) keeps the bytes of the message being read; when the fast decoder fails
that way, :func:`redecode` reads the whole message again with the decoder here,
which turns list keys into tuples (thriftpy2 encodes tuple keys as lists, so the
value goes back out unchanged) and reads the rest of the message from the socket.

Recording starts when a message starts (`RecordingSocket.start`), which is exact
for request/response traffic: a peer sends the next message only after it has the
answer to the last one, so nothing of it sits in the transport's buffer yet.
"""

from __future__ import annotations

import struct

from thriftpy2.thrift import TType

BINARY = 18  # thriftpy2's spec type for `binary` fields; STRING on the wire
_FIXED = {TType.BYTE: (1, "!b"), TType.I16: (2, "!h"), TType.I32: (4, "!i"), TType.I64: (8, "!q"), TType.DOUBLE: (8, "!d")}


class RecordingSocket:
    """A transport wrapper that keeps what it reads since `start()` (see the module doc).

    Under a framed transport (`framed`) the recording starts with the frame's 4-byte length and
    holds the whole frame (the transport reads frames whole): `redecode` skips the length.
    """

    def __init__(self, inner, *, framed: bool = False):
        self.inner = inner
        self.framed = framed
        self._record: bytearray | None = None

    def start(self) -> None:
        self._record = bytearray()

    def take(self) -> bytes:
        """The bytes read since `start()`; stops recording."""
        data, self._record = bytes(self._record or b""), None
        return data

    def read(self, n: int) -> bytes:
        data = self.inner.read(n)
        if self._record is not None:
            self._record += data
        return data

    def write(self, data: bytes) -> None:  # every call's request and answer: no __getattr__ detour
        self.inner.write(data)

    def flush(self) -> None:
        self.inner.flush()

    def __getattr__(self, name):  # open, close, sock, is_open, ...
        return getattr(self.inner, name)


class _Source:
    """Exact reads: first the recorded bytes, then more from the socket."""

    def __init__(self, recorded: bytes, socket):
        self._data = memoryview(recorded)
        self._pos = 0
        self._socket = socket

    def read(self, n: int) -> bytes:
        if self._pos + n > len(self._data):
            more = bytearray(self._data[self._pos :])
            while len(more) < n:
                chunk = self._socket.read(n - len(more))
                if not chunk:
                    raise EOFError("the peer closed the connection inside a message")
                more += chunk
            self._data, self._pos = memoryview(bytes(more)), 0
        out = bytes(self._data[self._pos : self._pos + n])
        self._pos += n
        return out

    def fixed(self, ttype: int):
        size, fmt = _FIXED[ttype]
        return struct.unpack(fmt, self.read(size))[0]


def redecode(recorder: RecordingSocket, transport, struct_cls):
    """The message now being read, decoded again from its first byte: (name, type, seqid, struct).

    `transport` is the buffered transport over `recorder`; its read buffer is dropped,
    since everything in it is in the recording too.
    """
    transport.clean()  # its write buffer is empty: the message before this one was flushed
    recorded = recorder.take()
    src = _Source(recorded[4:] if recorder.framed else recorded, recorder.inner)
    name, mtype, seqid = _message_begin(src)
    return name, mtype, seqid, _struct(src, struct_cls)


def decode(data: bytes, struct_cls):
    """A whole message in memory, decoded: (name, type, seqid, struct). For tests and tools."""
    src = _Source(data, _NoMore())
    name, mtype, seqid = _message_begin(src)
    return name, mtype, seqid, _struct(src, struct_cls)


class _NoMore:
    @staticmethod
    def read(n: int) -> bytes:
        return b""


def value_end(data, pos: int, ttype: int) -> int:
    """Where the value of type `ttype` at `pos` in `data` ends, or -1 if `data` ends first: what
    `_thriftwalk.value_end` answers, in Python, for an install built without a C compiler."""
    src = _Source(bytes(data[pos:]), _NoMore())
    try:
        _skip(src, ttype)
    except EOFError:
        return -1
    return pos + src._pos  # nothing was read past `data`: _NoMore has nothing more


def _message_begin(src: _Source):
    size = src.fixed(TType.I32)
    if size < 0:  # strict: version word, name, seqid
        return src.read(src.fixed(TType.I32)).decode("utf-8"), size & 0xFF, src.fixed(TType.I32)
    name = src.read(size).decode("utf-8")  # old-style: name, type byte, seqid
    return name, src.fixed(TType.BYTE), src.fixed(TType.I32)


def _wire(ttype: int) -> int:
    return TType.STRING if ttype == BINARY else ttype


def _split(spec) -> tuple[int, object]:
    """A container element's spec: a bare type or (type, argument)."""
    return (spec, None) if isinstance(spec, int) else (spec[0], spec[1])


def _struct(src: _Source, cls):
    obj = cls()
    fields = cls.thrift_spec
    while True:
        ftype = src.fixed(TType.BYTE)
        if ftype == TType.STOP:
            return obj
        fid = src.fixed(TType.I16)
        spec = fields.get(fid)
        if spec is None or _wire(spec[0]) != ftype:
            _skip(src, ftype)  # as thriftpy2 does: unknown ids and other types are dropped
            continue
        setattr(obj, spec[1], _value(src, spec[0], spec[2] if len(spec) > 3 else None))


def _value(src: _Source, ttype: int, arg):
    if ttype == TType.BOOL:
        return src.read(1) != b"\x00"
    if ttype in _FIXED:
        return src.fixed(ttype)
    if ttype in (TType.STRING, BINARY):
        raw = src.read(src.fixed(TType.I32))
        if ttype == BINARY:
            return raw
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return raw  # as thriftpy2: bytes that are not text stay bytes
    if ttype == TType.STRUCT:
        return _struct(src, arg)
    if ttype in (TType.LIST, TType.SET):
        etype, earg = _split(arg)
        wire_etype, n = src.fixed(TType.BYTE), src.fixed(TType.I32)
        if wire_etype != _wire(etype):
            for _ in range(n):
                _skip(src, wire_etype)
            return []
        return [_value(src, etype, earg) for _ in range(n)]
    if ttype == TType.MAP:
        (ktype, karg), (vtype, varg) = _split(arg[0]), _split(arg[1])
        wk, wv, n = src.fixed(TType.BYTE), src.fixed(TType.BYTE), src.fixed(TType.I32)
        if wk != _wire(ktype) or wv != _wire(vtype):
            for _ in range(n):
                _skip(src, wk)
                _skip(src, wv)
            return {}
        out = {}
        for _ in range(n):
            key = _hashable(_value(src, ktype, karg))
            out[key] = _value(src, vtype, varg)
        return out
    raise ValueError(f"unknown Thrift type {ttype}")


def _hashable(value):
    """Lists (list keys of SkewedInfo's location map) as tuples, all the way down."""
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    return value


def _skip(src: _Source, ttype: int) -> None:
    if ttype == TType.BOOL:
        src.read(1)
    elif ttype in _FIXED:
        src.read(_FIXED[ttype][0])
    elif ttype == TType.STRING:
        src.read(src.fixed(TType.I32))
    elif ttype == TType.STRUCT:
        while (ftype := src.fixed(TType.BYTE)) != TType.STOP:
            src.fixed(TType.I16)
            _skip(src, ftype)
    elif ttype in (TType.LIST, TType.SET):
        etype, n = src.fixed(TType.BYTE), src.fixed(TType.I32)
        for _ in range(n):
            _skip(src, etype)
    elif ttype == TType.MAP:
        kt, vt, n = src.fixed(TType.BYTE), src.fixed(TType.BYTE), src.fixed(TType.I32)
        for _ in range(n):
            _skip(src, kt)
            _skip(src, vt)
    else:
        raise ValueError(f"unknown Thrift type {ttype}")

"""Answers forwarded as bytes, from the metastore's socket (upstream) to the client's (downstream).

Which calls qualify is decided in pipeline/fastpath.py (`relay_plan`: nothing on the full path
would change the answer). For those the backend's answer is not decoded: the request goes out as
usual (or as the client sent it: pipeline/shortcuts.py), the reply header is read to give the
client its own sequence id, and the body is copied to the client as it arrives from the backend's
socket (`copy_body`), while a small C walker (_thriftwalk.c) finds
where each value ends. Memory stays at about one list element and one chunk whatever the answer's
size; metrics and audit get the outcome from the body's first field (success, or which declared
exception). Without the walker (an install built without a C compiler) nothing is relayed.

A metastore older than Hive 3 leaves out the catalog Hive 3+ clients expect on each Database,
Table and Partition (routing/default_catalog.py). Where the answer is such a struct or a list of
them, `copy_body` appends the catalog field to each as it copies. Other shapes (a struct nesting
them, e.g. GetTableResult) take the full path.

Buffered transport only (a framed reply needs its length before its body). A backend that fails
after part of an answer reached the client leaves the client's stream unusable: the client's
connection is closed (`RelayBroken`).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from thriftpy2.protocol import TCyBinaryProtocolFactory
from thriftpy2.thrift import TApplicationException, TMessageType, TType
from thriftpy2.utils import deserialize

from hmsproxy.protocol.framing import CHUNK, has_field, value_end


@dataclass(frozen=True)
class RelayPlan:
    """How a call's answer is relayed: as it is, or with `catalog_field` appended to each struct."""

    catalog_field: bytes | None = None


AS_BYTES = RelayPlan()


class RelayBroken(Exception):
    """The backend failed after part of its answer was sent to the client."""


def outcome(result_cls, mtype: int, body_start: bytes) -> tuple[str, str | None]:
    """(outcome, error message) that metrics and audit record for a relayed answer, from the body's
    first field; the message when the body's first bytes hold the whole exception."""
    if mtype == TMessageType.EXCEPTION:
        return "application_error", _message(TApplicationException, body_start)
    if len(body_start) < 3 or body_start[0] == 0:  # too little seen to tell, or a void call's empty struct
        return "ok", None
    (fid,) = struct.unpack("!h", body_start[1:3])
    spec = result_cls.thrift_spec.get(fid) if fid != 0 else None
    if spec is None or len(spec) < 3 or not isinstance(spec[2], type):
        return "ok", None
    return spec[2].__name__, _message(spec[2], body_start[3:])


def _message(cls, data: bytes) -> str | None:
    if value_end(data, 0, TType.STRUCT) < 0:  # never decode a struct that may be cut short
        return None
    return getattr(deserialize(cls(), data, TCyBinaryProtocolFactory()), "message", None)


def typed_element(success_type: tuple) -> type | None:
    """The struct a typed relay reads one at a time: the answer's own, or its list's; None for other shapes."""
    if success_type[0] == TType.STRUCT:
        return success_type[1]
    if success_type[0] in (TType.LIST, TType.SET) and isinstance(success_type[1], tuple) and success_type[1][0] == TType.STRUCT:
        return success_type[1][1]
    return None


def copy_body(body_start: bytes, read, sink, catalog_field: bytes | None = None, *, complete: bool = False) -> None:
    """Copy a `<method>_result` body to `sink` as the backend sends it; with `catalog_field`,
    append that field to the success value's struct (or to each struct of its list or set) where
    the struct has no such field. `body_start`: the body's bytes already read; `read(n)` reads more
    from the backend. Values are found with the C walker, never decoded: memory stays at about one
    list element and one chunk, and chunks never exceed CHUNK unless one element does.
    `complete`: the caller knows `body_start` is the whole body.
    """
    if complete or value_end(body_start, 0, TType.STRUCT) == len(body_start):  # the whole body is here: most answers
        if catalog_field is None:
            sink.write(body_start)
            return
        if body_start[:3] == _SUCCESS_STRUCT:
            sink.write(_with_field(body_start, 3, len(body_start) - 1, _fid(catalog_field), catalog_field))
            return
    src = _Source(body_start, read)
    out = bytearray()
    while True:
        ftype = src.take(1)[0]
        out.append(ftype)
        if ftype == TType.STOP:
            sink.write(bytes(out))
            return
        fid_bytes = src.take(2)
        out += fid_bytes
        adding = catalog_field if struct.unpack("!h", fid_bytes)[0] == 0 else None  # declared exceptions: as they are
        if ftype not in (TType.LIST, TType.SET):
            value = src.take_value(ftype)
            out += _with_field(value, 0, len(value), _fid(adding), adding) if adding is not None and ftype == TType.STRUCT else value
            continue
        header = src.take(5)
        out += header
        etype, count = struct.unpack("!bi", header)
        if adding is not None and count > 0 and etype != TType.STRUCT:
            raise ValueError(f"a list of type {etype} where the IDL has structs")
        for _ in range(count):
            value = src.take_value(etype)
            if adding is not None:
                value = _with_field(value, 0, len(value), _fid(adding), adding)
            if len(out) + len(value) > CHUNK and out:
                sink.write(bytes(out))
                out.clear()
            out += value


def _fid(field: bytes) -> int:
    """The field id of an encoded field (type byte, then the id)."""
    return struct.unpack("!h", field[1:3])[0]


#: A result body's first field header when it is the success value (field 0) and a struct.
_SUCCESS_STRUCT = bytes([TType.STRUCT, 0, 0])


def _with_field(data: bytes, start: int, end: int, fid: int, field: bytes) -> bytes:
    """`data` with the encoded `field` added to the struct at [start, end) unless it has field `fid`
    already (the metastore named the catalog itself: kept)."""
    if has_field(data, start, fid):
        return data
    return b"".join((data[: end - 1], field, data[end - 1 :]))  # before the struct's STOP byte


class _Source:
    """The backend's bytes, taken a Thrift value at a time; holds about one value and one chunk."""

    def __init__(self, start: bytes, read):
        self._buf = bytearray(start)
        self._pos = 0
        self._read = read

    def take(self, n: int) -> bytes:
        while len(self._buf) - self._pos < n:
            self._more()
        return self._slice(self._pos + n)

    def take_value(self, ttype: int) -> bytes:
        while (end := value_end(self._buf, self._pos, ttype)) < 0:
            self._more()
        return self._slice(end)

    def _slice(self, end: int) -> bytes:
        data = bytes(memoryview(self._buf)[self._pos : end])
        self._pos = end
        return data

    def _more(self) -> None:
        """One read of what the backend has sent (asking for as much again as is buffered, so a large
        value is re-walked few times; never more than one read: the answer may end here)."""
        if self._pos:
            del self._buf[: self._pos]
            self._pos = 0
        chunk = self._read(max(CHUNK, len(self._buf)))
        if not chunk:
            raise EOFError("the metastore closed the connection inside an answer")
        self._buf += chunk

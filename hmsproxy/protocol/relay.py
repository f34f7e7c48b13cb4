"""Answers forwarded as bytes, from the metastore's socket (upstream) to the client's (downstream).

Which calls qualify is decided in pipeline/fastpath.py (`FastPath.plan`: nothing on the full path
would change the answer). For those the backend's answer is not decoded: the request goes out as
usual (or as the client sent it: pipeline/shortcuts.py), the reply header is read to give the
client its own sequence id, and the body is copied to the client as it arrives from the backend's
socket (`copy_body`), while a small C walker (_thriftwalk.c) finds
where each value ends. Memory stays at about one list element and one chunk whatever the answer's
size; metrics and audit get the outcome from the body's first field (success, or which declared
exception). Without the walker (an install built without a C compiler) nothing is relayed.

A metastore older than Hive 3 leaves out the catalog Hive 3+ clients expect on each Database,
Table and Partition (routing/default_catalog.py). `copy_body` inserts the catalog field into each
such struct as it copies, wherever the answer holds them (a `CatalogFill`: the struct itself, a
list of them, a struct nesting either, e.g. GetTableResult.table or
PartitionsByExprResult.partitions), before each one's STOP byte, and only at the level the IDL
has them: the structs nested inside (StorageDescriptor, ...) are copied as they are.

A shortcut hit (the client's bytes forwarded as sent) on a plain backend socket skips this module's
Python for answers up to wire.WHOLE_IN_C: `_thriftwalk.exchange` sends, reads the whole reply and
inserts the catalog in C (a struct or a list of them: `CatalogFill.in_c`); longer answers and
nested shapes come back here.

Buffered transport only (a framed reply needs its length before its body). A backend that fails
after part of an answer reached the client leaves the client's stream unusable: the client's
connection is closed (`RelayBroken`).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from dataclasses import field as dataclass_field

from thriftpy2.protocol import TCyBinaryProtocolFactory
from thriftpy2.thrift import TApplicationException, TMessageType, TType
from thriftpy2.utils import deserialize

from hmsproxy.protocol.framing import CHUNK, FILL_LIST, FILL_STRUCT, has_field, value_end


@dataclass(frozen=True)
class CatalogFill:
    """Where a catalog field goes in an answer, as its bytes are copied (routing/default_catalog.py
    builds one per answer type from the IDL, the same plan the full path fills decoded answers by).

    For a struct: `field` is its own catalog field, encoded (field id `fid`), inserted before the
    struct's STOP byte unless the struct has field `fid` already; `fields` maps the ids of its
    fields that hold such structs to their fills. For a list or set: `element` is each element's."""

    field: bytes | None = None
    fid: int = 0
    fields: dict[int, CatalogFill] = dataclass_field(default_factory=dict)
    element: CatalogFill | None = None
    #: A struct whose own field is all it may lack: copied as one value, the field inserted. (Kept,
    #: not a property: every relayed answer of an older metastore asks.)
    whole: bool = dataclass_field(init=False, compare=False, repr=False, default=False)
    #: How the C exchange (framing.exchange) fills an answer by this plan: FILL_STRUCT (the success
    #: value is a `whole` struct), FILL_LIST (a list of them), or 0: a shape only `copy_body` fills.
    in_c: int = dataclass_field(init=False, compare=False, repr=False, default=0)
    #: (field, fid) the C exchange inserts by that plan (into the struct, or into each of the list's).
    c_field: tuple[bytes, int] = dataclass_field(init=False, compare=False, repr=False, default=(b"", 0))

    def __post_init__(self):
        object.__setattr__(self, "whole", self.field is not None and not self.fields)
        element = self.element
        plain_list = self.field is None and not self.fields and element is not None and element.whole
        object.__setattr__(self, "in_c", FILL_STRUCT if self.whole else FILL_LIST if plain_list else 0)
        if self.in_c:
            filled = element if plain_list else self
            object.__setattr__(self, "c_field", (filled.field, filled.fid))


@dataclass(frozen=True)
class RelayPlan:
    """How a call's answer is relayed: as it is, or with the catalog inserted where `catalog_field` says."""

    catalog_field: CatalogFill | None = None
    #: The request names a Hive 3 catalog ("@hive#db") the metastore has none of: sent as "db".
    drops_catalog: bool = False


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


def ends_connection(body_start: bytes) -> bool:
    """Whether the connection an EXCEPTION message came over is done with: its body is a
    TApplicationException of type PROTOCOL_ERROR (a request refused as malformed: Hive 3.1 then drops
    the connection at the next call, unanswered), or too little of it is in hand to tell. The type
    follows the message in the struct, and Hive writes a long message ("Required field 'dbName' is
    unset! Struct:..." with the request's values) in several pieces: the relay may hold only the
    first seven bytes."""
    if value_end(body_start, 0, TType.STRUCT) < 0:
        return True
    return deserialize(TApplicationException(), body_start, TCyBinaryProtocolFactory()).type == TApplicationException.PROTOCOL_ERROR


def _message(cls, data: bytes) -> str | None:
    if value_end(data, 0, TType.STRUCT) < 0:  # never decode a struct that may be cut short
        return None
    return getattr(deserialize(cls(), data, TCyBinaryProtocolFactory()), "message", None)


def copy_body(body_start: bytes, read, sink, catalog_field: CatalogFill | None = None, *, complete: bool = False) -> None:
    """Copy a `<method>_result` body to `sink` as the backend sends it; with `catalog_field`, insert
    the catalog into the success value's structs where it says (declared exceptions go as they
    are). `body_start`: the body's bytes already read; `read(n)` reads more from the backend.
    Values are found with the C walker, never decoded: memory stays at about one list element and
    one chunk, and chunks never exceed CHUNK unless one element does.
    `complete`: the caller knows `body_start` is the whole body.
    """
    if complete or value_end(body_start, 0, TType.STRUCT) == len(body_start):  # the whole body is here: most answers
        if catalog_field is None:
            sink.write(body_start)
            return
        if catalog_field.whole and body_start[:3] == _SUCCESS_STRUCT:
            sink.write(_with_field(body_start, 3, len(body_start) - 1, catalog_field))
            return
        element = catalog_field.element
        if element is not None and element.whole and body_start[:3] in _SUCCESS_LISTS:
            filled = _with_each(body_start, element)
            if filled is not None:
                sink.write(filled)
                return
    copy = _Copy(_Source(body_start, read), sink)
    copy.fields(CatalogFill(fields={0: catalog_field}))  # the result struct: field 0 is the success value
    copy.flush()


#: A result body's first field header when it is the success value (field 0) and a struct.
_SUCCESS_STRUCT = bytes([TType.STRUCT, 0, 0])
#: ... and a list or set (get_partitions*, get_databases' objects, ...).
_SUCCESS_LISTS = (bytes([TType.LIST, 0, 0]), bytes([TType.SET, 0, 0]))


def _with_each(body: bytes, fill: CatalogFill) -> bytes | None:
    """A whole result `body` whose success value is a list of structs each lacking only its own catalog
    field (`fill.whole`), with the field inserted in each: what `_Copy` does, in one loop, for the
    common answer that arrived in one piece (a get_partitions_by_filter of a few partitions). None
    when the list is not of structs or a struct is cut short: `_Copy` then says why."""
    etype, count = body[3], int.from_bytes(body[4:8], "big", signed=True)
    if count > 0 and etype != TType.STRUCT:
        return None
    parts, start, pos, field, fid = [], 0, 8, fill.field, fill.fid
    for _ in range(count):
        end = value_end(body, pos, TType.STRUCT)
        if end < 0:
            return None
        if not has_field(body, pos, fid):
            parts += (body[start : end - 1], field)  # before the struct's STOP byte
            start = end - 1
        pos = end
    parts.append(body[start:])
    return b"".join(parts)


def _with_field(data: bytes, start: int, end: int, fill: CatalogFill) -> bytes:
    """`data` with `fill.field` added to the struct at [start, end) unless it has field `fill.fid`
    already (the metastore named the catalog itself: kept)."""
    if has_field(data, start, fill.fid):
        return data
    return b"".join((data[: end - 1], fill.field, data[end - 1 :]))  # before the struct's STOP byte


class _Copy:
    """One answer's copy: values taken from `src`, the catalog inserted where a fill says, written
    to `sink` in chunks of about CHUNK bytes."""

    def __init__(self, src: _Source, sink):
        self.src = src
        self.sink = sink
        self.out = bytearray()

    def value(self, ttype: int, fill: CatalogFill | None) -> None:
        """Copy the value of type `ttype` that comes next, filled as `fill` says. Lists are taken an
        element at a time, filled or not (an answer's list may be long)."""
        if ttype in (TType.LIST, TType.SET) and (fill is None or fill.element is not None):
            self.elements(fill.element if fill is not None else None)
        elif ttype == TType.STRUCT and fill is not None and fill.whole:
            value = self.src.take_value(ttype)
            self.emit(_with_field(value, 0, len(value), fill))
        elif ttype == TType.STRUCT and fill is not None and fill.element is None:
            self.fields(fill)
        else:  # nothing to fill, or not the type the IDL has here: as it is
            self.emit(self.src.take_value(ttype))

    def fields(self, fill: CatalogFill) -> None:
        """A struct field by field: those holding catalog structs filled, the rest copied as they are."""
        src, seen = self.src, False
        while True:
            ftype = src.take(1)[0]
            if ftype == TType.STOP:
                if fill.field is not None and not seen:
                    self.emit(fill.field)
                self.emit(b"\x00")
                return
            fid_bytes = src.take(2)
            self.emit(bytes([ftype]) + fid_bytes)
            (fid,) = struct.unpack("!h", fid_bytes)
            seen = seen or fid == fill.fid
            self.value(ftype, fill.fields.get(fid))

    def elements(self, element: CatalogFill | None) -> None:
        header = self.src.take(5)
        self.emit(header)
        etype, count = struct.unpack("!bi", header)
        if element is not None and count > 0 and etype != TType.STRUCT:
            raise ValueError(f"a list of type {etype} where the IDL has structs")
        for _ in range(count):
            self.value(etype, element)

    def emit(self, data: bytes) -> None:
        out = self.out
        if len(out) + len(data) > CHUNK and out:
            self.sink.write(bytes(out))
            out.clear()
        out += data

    def flush(self) -> None:
        self.sink.write(bytes(self.out))
        self.out.clear()


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

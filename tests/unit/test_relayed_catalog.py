"""The catalog the relay inserts equals the catalog the full path fills, for every answer shape.

For each method whose answer may hold a Database, Table or Partition (every shape the IDL has:
the struct, a list of them, a struct nesting either: GetTableResult.table,
PartitionsByExprResult.partitions, PartitionSpec's partition list, ...), an answer with every
field set is encoded as a Hive 2.3 metastore would send it, copied by `relay.copy_body` in pieces
that cut structs anywhere, and decoded; the full path's answer is the original decoded and given
`fill_default_catalog`. Both must be equal, and the relayed bytes must be exactly one catalog
field longer per struct that lacked it (a struct that has one, as from a Hive 3.1 metastore,
never gets a second).
"""

from __future__ import annotations

import struct
import tracemalloc
from itertools import count

import pytest
from thriftpy2.protocol import TBinaryProtocol
from thriftpy2.thrift import TType
from thriftpy2.transport import TMemoryBuffer

from hmsproxy.protocol import codec, idl
from hmsproxy.protocol.framing import CHUNK
from hmsproxy.protocol.relay import copy_body
from hmsproxy.routing.default_catalog import CATALOG_FIELDS, DEFAULT_CATALOG, catalog_fill, fill_default_catalog
from hmsproxy.routing.methods import METHOD_SPECS
from hmsproxy.testing import partition
from tests.support.pieces import Pieces

#: Every method whose answer may hold a struct that gets a catalog.
FILLED = sorted(name for name, spec in METHOD_SPECS.items() if catalog_fill(spec.success_type) is not None)
#: A strict REPLY message header, for codec.decode.
HEADER = struct.pack("!i", -2147418110) + struct.pack("!i", 3) + b"get" + struct.pack("!i", 1)


class Sample:
    """Values of any IDL type with every field set; every other Database, Table and Partition
    names its catalog itself (`named`, as a Hive 3.1 metastore's would), the rest leave it unset."""

    def __init__(self, elements: int = 3, first_named: bool = False):
        self.elements = elements
        self.numbers = count(1)
        self.catalog_structs = count(1 if first_named else 0)
        self.lacking = 0  # catalog structs made without their catalog

    def value(self, ttype: int, nested, depth: int = 0):
        n = next(self.numbers)
        if ttype == TType.STRUCT:
            return self.struct(nested, depth + 1)
        if ttype in (TType.LIST, TType.SET):
            items = [self.value(*_split(nested), depth + 1) for _ in range(self.elements if depth == 0 else 2)]
            return set(items) if ttype == TType.SET else items
        if ttype == TType.MAP:
            key_type, value_type = nested
            key = self.value(*_split(key_type), depth + 1)
            return {tuple(key) if isinstance(key, list) else key: self.value(*_split(value_type), depth + 1)}
        return {
            TType.BOOL: True,
            TType.BYTE: 3,
            TType.I16: n % 30_000,
            TType.I32: n,
            TType.I64: n * 1_000_003,
            TType.DOUBLE: n / 4,
            TType.STRING: f"s{n}",
            TType.BINARY: f"b{n}".encode(),
        }[ttype]

    def struct(self, cls: type, depth: int):
        obj = cls()
        if depth > 6:  # deep enough for every struct an answer nests (Table > sd > skewedInfo > map)
            return obj
        for ttype, name, *rest in cls.thrift_spec.values():
            nested = rest[0] if len(rest) > 1 else None
            if ttype == TType.I32 and isinstance(nested, type):  # an enum: one of its values
                setattr(obj, name, next(iter(nested._VALUES_TO_NAMES)))
            else:
                setattr(obj, name, self.value(ttype, nested, depth))
        own = CATALOG_FIELDS.get(cls.__name__)
        if own is not None and next(self.catalog_structs) % 2 == 0:
            setattr(obj, own, None)
            self.lacking += 1
        return obj


def _split(t) -> tuple:
    return t if isinstance(t, tuple) else (t, None)


def encoded(value) -> bytes:
    buf = TMemoryBuffer()
    value.write(TBinaryProtocol(buf))
    return buf.getvalue()


def relayed(method: str, body: bytes, first: int, piece: int) -> tuple[bytes, list[bytes]]:
    chunks: list[bytes] = []
    sink = type("Sink", (), {"write": lambda self, data: chunks.append(data)})()
    fill = catalog_fill(METHOD_SPECS[method].success_type)
    copy_body(body[:first], Pieces(body[first:], piece).recv, sink, fill, complete=first >= len(body))
    return b"".join(chunks), chunks


def full_path(method: str, body: bytes):
    """What the full path answers: the metastore's answer decoded, the default catalog filled in."""
    spec = METHOD_SPECS[method]
    result = codec.decode(HEADER + body, spec.result_cls)[3]
    fill_default_catalog(result.success, spec.success_type)
    return result


def field_length() -> int:
    return 3 + 4 + len(DEFAULT_CATALOG)  # type, id, length, "hive"


@pytest.mark.parametrize("first_named", [False, True])
@pytest.mark.parametrize("method", FILLED)
def test_each_shape_relayed_decodes_to_the_full_paths_answer(method, first_named):
    spec = METHOD_SPECS[method]
    sample = Sample(first_named=first_named)
    result = spec.result_cls(success=sample.value(*spec.success_type))
    body = encoded(result)
    expected = full_path(method, body)
    for first, piece in ((len(body), 1 << 30), (3, 1), (1, 7), (3, 13), (20, 4096)):  # whole; cut at every byte; ...
        got, _ = relayed(method, body, first, piece)
        assert len(got) == len(body) + sample.lacking * field_length(), (method, first, piece)
        assert codec.decode(HEADER + got, spec.result_cls)[3] == expected, (method, first, piece)


@pytest.mark.parametrize(
    "method", ["get_partitions", "get_partitions_by_expr", "get_table_objects_by_name_req", "get_part_specs_by_filter"]
)
def test_empty_lists_and_declared_exceptions_go_as_they_are(method):
    spec = METHOD_SPECS[method]
    empty = [] if spec.success_type[0] == TType.LIST else spec.result_cls.thrift_spec[0][2]()
    if spec.success_type[0] == TType.STRUCT:
        list_field = next(s[1] for s in empty.thrift_spec.values() if s[0] == TType.LIST)
        setattr(empty, list_field, [])
    declared = spec.result_cls.thrift_spec[1][2]
    for result in (spec.result_cls(success=empty), spec.result_cls(o1=declared(message="no"))):
        body = encoded(result)
        assert relayed(method, body, 3, 5)[0] == body
        assert repr(codec.decode(HEADER + body, spec.result_cls)[3]) == repr(full_path(method, body))  # exceptions: equal by identity


def test_a_long_list_nested_in_a_struct_goes_on_in_chunks_one_partition_at_a_time():
    """PartitionsByExprResult's partitions, 20 MB of them: chunks of at most CHUNK, and the copy's
    memory stays about one partition and one chunk (tracemalloc's peak), not the answer's size."""
    parts = [partition("shop", "events", [f"value-{i:06d}-" + "x" * 200]) for i in range(60_000)]
    result = idl.HmsProxy.get_partitions_by_expr_result(
        success=idl.hive.PartitionsByExprResult(partitions=parts, hasUnknownPartitions=False)
    )
    body = encoded(result)
    del parts, result
    assert len(body) > 20_000_000
    written = [0, 0, 0]  # bytes, chunks, largest

    class Counting:
        def write(self, data: bytes) -> None:
            written[0] += len(data)
            written[1] += 1
            written[2] = max(written[2], len(data))

    socket, fill = Pieces(body[3:], CHUNK), catalog_fill(METHOD_SPECS["get_partitions_by_expr"].success_type)
    tracemalloc.start()
    try:
        copy_body(body[:3], socket.recv, Counting(), fill)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert written[0] == len(body) + 60_000 * field_length()
    assert written[2] <= CHUNK and written[1] >= written[0] // CHUNK
    assert peak < 8 * CHUNK, peak  # a piece read, the buffer, one chunk: never the 20 MB

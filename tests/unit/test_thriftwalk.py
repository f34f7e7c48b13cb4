"""The relay's body copy (relay.copy_body) and the C walker under it (_thriftwalk.c):
where each Thrift value ends, truncated and malformed input, and answers copied with Hive's
default catalog appended, read in pieces as a socket would hand them over."""

from __future__ import annotations

import struct

import pytest
from thriftpy2.protocol import TBinaryProtocol
from thriftpy2.thrift import TType
from thriftpy2.transport import TMemoryBuffer

from hmsproxy.protocol import codec, idl
from hmsproxy.protocol._thriftwalk import has_field, value_end
from hmsproxy.protocol.relay import copy_body
from hmsproxy.routing.default_catalog import catalog_fill
from hmsproxy.routing.methods import METHOD_SPECS
from hmsproxy.testing import partition, table
from tests.support.pieces import Pieces

A = idl.HmsProxy
hive = idl.hive


def encoded(value) -> bytes:
    buf = TMemoryBuffer()
    value.write(TBinaryProtocol(buf))
    return buf.getvalue()


def skewed_partition(values):
    p = partition("shop", "events", values)
    p.sd.skewedInfo = hive.SkewedInfo(
        skewedColNames=["country", "device"],
        skewedColValues=[["US", "ios"], ["IN", "web"]],
        skewedColValueLocationMaps={("US", "ios"): "/w/US_ios", ("IN", "web"): "/w/IN_web"},  # list keys
    )
    return p


def test_the_walker_finds_the_end_of_every_kind_of_value_and_never_reads_past_a_truncated_one():
    values = [table("shop", "events", partition_keys=(("ds", "string"),)), skewed_partition(["2026-11-01"]), hive.Database(name="d")]
    for value in values:
        data = encoded(value)
        assert value_end(data + b"trailing", 0, TType.STRUCT) == len(data)
        assert value_end(b"xx" + data, 2, TType.STRUCT) == len(data) + 2
        for cut in range(len(data)):  # every prefix is "not yet", never a wrong end or a crash
            assert value_end(data[:cut], 0, TType.STRUCT) == -1
    assert value_end(struct.pack("!i", 3) + b"abc", 0, TType.STRING) == 7
    assert value_end(bytes([TType.I32]) + struct.pack("!i", 2) + b"\0" * 8, 0, TType.LIST) == 13


def test_the_walker_tells_whether_a_struct_has_a_field_at_its_top_level():
    p = partition("shop", "events", ["1"])
    assert not has_field(encoded(p), 0, 9) and has_field(encoded(p), 0, 1)  # catName (9) unset; values (1) set
    p.catName = "spark"
    assert has_field(encoded(p), 0, 9)
    assert not has_field(encoded(table("shop", "t")), 0, 17)  # Table's Hive 3 catalog
    assert p.sd.sortCols is not None  # the Partition's sd has a field 9 of its own: only the top level counts
    with pytest.raises(ValueError, match="no complete Thrift struct"):
        has_field(encoded(partition("shop", "events", ["1"]))[:-3], 0, 9)  # walks to the end, which is not there


def test_the_walker_refuses_bytes_that_cannot_be_thrift():
    with pytest.raises(ValueError, match="not a Thrift value"):
        value_end(bytes([99, 0, 1, 0]), 0, TType.STRUCT)  # a field of type 99
    with pytest.raises(ValueError):
        value_end(struct.pack("!i", -5), 0, TType.STRING)
    with pytest.raises(ValueError):
        value_end(bytes([TType.STRING]) + struct.pack("!i", -1), 0, TType.LIST)
    nested = bytes([TType.STRUCT, 0, 1]) * 100  # 100 levels of structs: deeper than any real answer
    with pytest.raises(ValueError):
        value_end(nested, 0, TType.STRUCT)
    with pytest.raises(ValueError):
        value_end(b"\0", 5, TType.STRUCT)


class Sink:
    def __init__(self):
        self.chunks: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.chunks.append(data)


def fill(method: str):
    return catalog_fill(METHOD_SPECS[method].success_type)


def copied(result, first: int = 3, piece: int = 7) -> tuple[object, Sink]:
    body = encoded(result)
    sink = Sink()
    copy_body(body[:first], Pieces(body[first:], piece).recv, sink, fill(type(result).__name__.removesuffix("_result")))
    message = struct.pack("!i", -2147418110) + struct.pack("!i", 3) + b"get" + struct.pack("!i", 1)  # strict REPLY header
    return codec.decode(message + b"".join(sink.chunks), type(result))[3], sink


def test_each_partition_of_a_list_gets_the_catalog_and_keeps_everything_else():
    parts = [skewed_partition([f"2026-11-{d:02d}"]) for d in range(1, 31)]
    got, sink = copied(A.get_partitions_result(success=parts))
    assert [p.catName for p in got.success] == ["hive"] * 30
    for p in got.success:
        p.catName = None
    assert got.success == parts  # the list-keyed location map included
    assert len(sink.chunks) == 1  # a small answer goes on in one piece


def test_a_single_table_gets_the_catalog_and_a_long_list_goes_on_in_chunks():
    got, _ = copied(A.get_table_result(success=table("shop", "t")), first=1, piece=1)
    assert got.success.catNameHive3 == "hive" and got.success.tableName == "t"
    many = [partition("shop", "events", [f"value-{i:06d}-" + "x" * 200]) for i in range(2000)]
    got, sink = copied(A.get_partitions_result(success=many), piece=100_000)
    assert len(got.success) == 2000 and all(p.catName == "hive" for p in got.success)
    assert len(sink.chunks) > 5 and max(map(len, sink.chunks)) < 70_000


def test_declared_exceptions_and_empty_lists_pass_unchanged():
    missing = A.get_partitions_result(o1=hive.NoSuchObjectException(message="no such table"))
    got, sink = copied(missing)
    assert got.o1.message == "no such table" and b"".join(sink.chunks) == encoded(missing)
    empty = A.get_partitions_result(success=[])
    assert copied(empty)[0] == empty


def test_a_catalog_the_metastore_sent_is_kept_and_a_list_must_hold_structs():
    named = partition("shop", "events", ["1"])
    named.catName = "spark"
    got, _ = copied(A.get_partitions_result(success=[named, partition("shop", "events", ["2"])]))
    assert [p.catName for p in got.success] == ["spark", "hive"]
    strings = encoded(A.get_partition_names_result(success=["ds=1"]))
    with pytest.raises(ValueError, match="where the IDL has structs"):
        copy_body(strings, Pieces(b"", 7).recv, Sink(), fill("get_partitions"))


def test_a_backend_closing_mid_answer_is_an_error_not_a_short_answer():
    body = encoded(A.get_partitions_result(success=[partition("shop", "events", ["1"])]))
    with pytest.raises(EOFError):
        copy_body(body[:3], Pieces(body[3:-10], 7).recv, Sink(), fill("get_partitions"))


def test_the_fill_follows_the_idl_to_each_catalog_struct_and_no_deeper():
    partitions = fill("get_partitions")
    assert partitions.element.whole and partitions.element.fid == 9  # Partition.catName; its sd is copied as it is
    assert fill("get_table").fid == 17 and fill("get_database").fid == 8  # Table's Hive 3 id; Database.catalogName
    by_expr = fill("get_partitions_by_expr")  # PartitionsByExprResult: walked, its list's Partitions filled
    assert by_expr.field is None and set(by_expr.fields) == {1} and by_expr.fields[1].element.whole
    assert fill("get_table_req").fields[1].whole  # GetTableResult.table
    assert fill("get_partition_names") is None and fill("get_fields") is None  # nothing to fill

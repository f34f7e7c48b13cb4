"""Every IDL struct holding a map keyed by lists or structs gets through the proxy's codec.

thriftpy2 decodes maps into dicts, so a list key (SkewedInfo.skewedColValueLocationMaps:
skewed values -> directory) fails its decoder; hmsproxy/protocol/codec.py reads such messages
again with list keys as tuples. Found from the IDL, so a struct gaining such a map joins.
"""

from __future__ import annotations

import pytest
from thriftpy2.protocol import TCyBinaryProtocol
from thriftpy2.thrift import TMessageType, TType
from thriftpy2.transport import TCyMemoryBuffer

from hmsproxy.protocol import codec, idl

UNHASHABLE_KEYS = (TType.LIST, TType.SET, TType.STRUCT)


def _key_type(spec) -> int:
    key = spec[2][0]
    return key if isinstance(key, int) else key[0]


def structs_with_unhashable_map_keys() -> list[tuple[type, str]]:
    found = []
    for name in sorted(dir(idl.hive)):
        cls = getattr(idl.hive, name)
        spec = getattr(cls, "thrift_spec", None)
        if not isinstance(cls, type) or not isinstance(spec, dict):
            continue
        found += [(cls, f[1]) for f in spec.values() if f[0] == TType.MAP and _key_type(f) in UNHASHABLE_KEYS]
    return found


def message(value) -> bytes:
    buf = TCyMemoryBuffer()
    proto = TCyBinaryProtocol(buf)
    proto.write_message_begin("call", TMessageType.CALL, 7)
    value.write(proto)
    proto.write_message_end()
    return buf.getvalue()


def test_the_idl_has_such_maps():
    assert (idl.hive.SkewedInfo, "skewedColValueLocationMaps") in structs_with_unhashable_map_keys()


@pytest.mark.parametrize(("cls", "field"), structs_with_unhashable_map_keys(), ids=lambda x: getattr(x, "__name__", x))
def test_round_trip(cls, field):
    assert _key_type(cls.thrift_spec[next(k for k, v in cls.thrift_spec.items() if v[1] == field)]) == TType.LIST, (
        "a struct-keyed map: codec._hashable would need to freeze structs too"
    )
    value = cls(**{field: {("US",): "file:/w/t/country=US", ("10", "a"): "file:/w/t/x=10/y=a", (): "file:/w/t/none"}})
    data = message(value)
    proto = TCyBinaryProtocol(TCyMemoryBuffer(data))
    proto.read_message_begin()
    with pytest.raises(TypeError, match="unhashable"):  # what thriftpy2 alone does with it
        cls().read(proto)
    name, mtype, seqid, decoded = codec.decode(data, cls)
    assert (name, mtype, seqid) == ("call", TMessageType.CALL, 7)
    assert decoded == value
    assert message(decoded) == data  # tuple keys go out as the lists they came in as


def test_a_whole_table_with_a_location_map_round_trips():
    skew = idl.hive.SkewedInfo(
        skewedColNames=["country"], skewedColValues=[["US"], ["IN"]], skewedColValueLocationMaps={("US",): "file:/w/t/US"}
    )
    sd = idl.hive.StorageDescriptor(cols=[idl.hive.FieldSchema("country", "string", "é")], skewedInfo=skew, storedAsSubDirectories=True)
    table = idl.hive.Table(tableName="t", dbName="d", sd=sd, parameters={"k": "v"}, partitionKeys=[])
    args = idl.HmsProxy.alter_table_args(dbname="d", tbl_name="t", new_tbl=table)
    assert codec.decode(message(args), idl.HmsProxy.alter_table_args)[3] == args

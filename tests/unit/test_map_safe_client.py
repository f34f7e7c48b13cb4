"""The clients hmsproxy opens (open_client: SQL, streaming, jobs) read answers holding maps keyed by
lists, which thriftpy2's own client fails on; the connection stays usable for the next call."""

from __future__ import annotations

import pytest
from thriftpy2.protocol import TCyBinaryProtocol
from thriftpy2.thrift import TApplicationException, TMessageType
from thriftpy2.transport import TCyBufferedTransport, TCyMemoryBuffer

from hmsproxy.protocol import idl
from hmsproxy.protocol.client import MapSafeClient
from hmsproxy.protocol.codec import RecordingSocket

hive = idl.hive


def reply(method: str, result) -> bytes:
    buf = TCyMemoryBuffer()
    proto = TCyBinaryProtocol(buf)
    proto.write_message_begin(method, TMessageType.REPLY, 0)
    result.write(proto)
    proto.write_message_end()
    return buf.getvalue()


class Replay:
    """A peer answering each request (sent at flush) with the next of the given answers, as a server
    does: nothing of the next answer is there before the request."""

    def __init__(self, answers: list[bytes]):
        self.answers, self.data = list(answers), b""

    def read(self, n: int) -> bytes:
        chunk, self.data = self.data[:n], self.data[n:]
        return chunk

    def write(self, data: bytes) -> None:
        pass

    def flush(self) -> None:
        self.data += self.answers.pop(0)

    def is_open(self) -> bool:
        return True

    def close(self) -> None:
        pass


def client(*answers: bytes) -> MapSafeClient:
    recorder = RecordingSocket(Replay(list(answers)))
    return MapSafeClient(idl.HmsProxy, TCyBinaryProtocol(TCyBufferedTransport(recorder)), recorder)


def test_a_location_map_is_read_and_the_next_call_works():
    locations = {("US",): "file:/w/t/ds=1/country=US", ("10", "a"): "file:/w/t/ds=1/x=10/y=a"}
    sd = hive.StorageDescriptor(location="file:/w/t/ds=1", skewedInfo=hive.SkewedInfo(["country"], [["US"]], locations))
    partition = hive.Partition(values=["1"], dbName="db", tableName="t", sd=sd)
    after = idl.HmsProxy.get_partition_names_result(success=["ds=1"])
    c = client(reply("get_partition", idl.HmsProxy.get_partition_result(success=partition)), reply("get_partition_names", after))
    got = c.get_partition("db", "t", ["1"])
    assert got.sd.location == "file:/w/t/ds=1" and got.sd.skewedInfo.skewedColValueLocationMaps == locations
    assert c.get_partition_names("db", "t", -1) == ["ds=1"]


def test_declared_exceptions_and_missing_results_are_raised():
    missing = hive.NoSuchObjectException(message="no partition ds=9")
    c = client(
        reply("get_partition", idl.HmsProxy.get_partition_result(o2=missing)), reply("get_partition", idl.HmsProxy.get_partition_result())
    )
    with pytest.raises(hive.NoSuchObjectException, match="ds=9"):
        c.get_partition("db", "t", ["9"])
    with pytest.raises(TApplicationException):
        c.get_partition("db", "t", ["9"])

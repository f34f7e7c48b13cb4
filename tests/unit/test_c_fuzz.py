"""Hypothesis drives the C extension's readers with truncated, oversized and malformed input: the
walker (value_end, has_field, message_bounds) and the hit loop's frame reader (HitLoop.serve over
a socket pair). Whatever the bytes, each answers within its contract (an offset inside the input,
"not yet", a ValueError, or the bytes handed back to the full path) and never reads or writes
outside its buffers: `make sanitize` runs this file under AddressSanitizer and
UndefinedBehaviorSanitizer.

A short run here (FUZZ_EXAMPLES per property); HMSPROXY_FUZZ_EXAMPLES asks for a longer one.
"""

from __future__ import annotations

import os
import socket
import struct
import threading

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from thriftpy2.protocol import TBinaryProtocol
from thriftpy2.thrift import TMessageType, TType
from thriftpy2.transport import TMemoryBuffer

from hmsproxy.protocol import idl
from hmsproxy.protocol._thriftwalk import H_GONE, H_MISS, Gate, HitLoop, Tally, has_field, message_bounds, value_end
from hmsproxy.protocol.framing import header_bytes
from hmsproxy.routing.methods import METHOD_SPECS
from hmsproxy.testing import table

FUZZ_EXAMPLES = int(os.environ.get("HMSPROXY_FUZZ_EXAMPLES", "150"))
FUZZ = settings(max_examples=FUZZ_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
#: What the hit loop reads of a client's call at most before it hands the call to the full path (_hits.c).
CLIENT_READ = 65536
TYPES = [
    TType.BOOL,
    TType.BYTE,
    TType.DOUBLE,
    TType.I16,
    TType.I32,
    TType.I64,
    TType.STRING,
    TType.STRUCT,
    TType.MAP,
    TType.SET,
    TType.LIST,
]


def encoded(value) -> bytes:
    buf = TMemoryBuffer()
    value.write(TBinaryProtocol(buf))
    return buf.getvalue()


names = st.text(st.characters(min_codepoint=48, max_codepoint=122), min_size=1, max_size=40)
tables = st.builds(lambda db, name, cols: table(db, name, columns=[(c, "string") for c in cols]), names, names, st.lists(names, max_size=8))


def get_table_call(db: str, name: str, seqid: int = 1) -> bytes:
    args = idl.HmsProxy.get_table_args(dbname=db, tbl_name=name)
    return header_bytes("get_table", TMessageType.CALL, seqid) + encoded(args)


@st.composite
def mutated(draw, base: bytes) -> bytes:
    """`base` with a few bytes overwritten, inserted or removed."""
    data = bytearray(base)
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, max(len(data) - 1, 0)))
        op = draw(st.sampled_from(["set", "insert", "delete"]))
        if op == "set" and data:
            data[at] = draw(st.integers(0, 255))
        elif op == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif data:
            del data[at]
    return bytes(data)


def within_contract(fn, data: bytes, pos: int = 0):
    """fn's answer on `data`: an offset in [pos, len], -1 for "not yet", or ValueError (returned)."""
    try:
        end = fn()
    except ValueError as e:
        return e
    assert end == -1 or pos <= end <= len(data), (end, len(data))
    return end


@FUZZ
@given(tables)
def test_a_whole_struct_ends_where_it_ends_and_every_prefix_is_not_yet(t):
    data = encoded(t)
    assert value_end(data, 0, TType.STRUCT) == len(data)
    for cut in sorted({0, 1, len(data) // 3, len(data) // 2, len(data) - 1}):
        assert value_end(data[:cut], 0, TType.STRUCT) == -1


@FUZZ
@given(tables.flatmap(lambda t: mutated(encoded(t))), st.sampled_from(TYPES), st.integers(0, 16))
def test_malformed_values_get_an_offset_not_yet_or_a_value_error(data, ttype, pos):
    pos = min(pos, len(data))
    within_contract(lambda: value_end(data, pos, ttype), data, pos)
    try:
        assert has_field(data, pos, 1) in (True, False)
    except ValueError:
        pass  # no complete struct there


@FUZZ
@given(st.binary(max_size=512))
def test_random_bytes_never_escape_the_walker(data):
    for ttype in TYPES:
        within_contract(lambda t=ttype: value_end(data, 0, t), data)
    try:
        bounds = message_bounds(data)
    except ValueError:
        return
    if bounds is not None:
        name, _mtype, _seqid, header_length, end = bounds
        assert isinstance(name, str) and 0 < header_length <= len(data) and (end == -1 or header_length <= end <= len(data))


@FUZZ
@given(names, names, st.integers(0, 2**31 - 1))
def test_message_bounds_of_a_call_and_its_prefixes(db, name, seqid):
    call = get_table_call(db, name, seqid)
    assert message_bounds(call)[4] == len(call)
    for cut in range(0, len(call), max(1, len(call) // 7)):
        bounds = message_bounds(call[:cut])
        assert bounds is None or bounds[4] == -1


# -- the hit loop's frame reader ------------------------------------------------------------------


def hit_loop() -> HitLoop:
    return HitLoop({}, Gate(lambda name: None), Tally(), lambda conn: None, [], 1 << 20, 1024, 64, 100)


def served(sent: bytes):
    """HitLoop.serve's answer to a client that sent `sent` and closed its side: nothing is remembered,
    so every call is a miss."""
    client, proxy = socket.socketpair()
    client.settimeout(10.0)  # bounded: the reader stops reading only when it hands the call back

    def send():
        try:
            client.sendall(sent)
            client.shutdown(socket.SHUT_WR)
        except OSError:  # the reader handed the call back before reading it all
            pass

    sender = threading.Thread(target=send, daemon=True)  # larger than a socket buffer: sent while it is read
    sender.start()
    try:
        eligible = {"get_table": METHOD_SPECS["get_table"]}
        return hit_loop().serve(proxy.fileno(), None, (None, ()), object(), eligible, {})
    finally:
        proxy.close()
        sender.join(10.0)
        client.close()


def assert_handed_back(sent: bytes, answer) -> None:
    """The reader's contract: what it read goes back to the full path, in order and unchanged."""
    status, data, shortcut, exchanged = answer
    if not sent:
        assert (status, data) == (H_GONE, 0)
        return
    assert status == H_MISS and shortcut is None and exchanged is None
    assert 0 < len(data) <= min(len(sent), CLIENT_READ) and sent.startswith(data)


@FUZZ
@given(names, names)
def test_a_whole_call_that_is_no_hit_goes_back_whole(db, name):
    call = get_table_call(db, name)
    status, data, _, _ = served(call)
    assert (status, data) == (H_MISS, call)


@FUZZ
@given(
    names.map(lambda n: get_table_call(n, n)).flatmap(
        lambda call: st.one_of(st.integers(0, len(call)).map(lambda i: call[:i]), mutated(call))
    )
)
def test_truncated_and_malformed_calls_go_back_as_read(sent):
    assert_handed_back(sent, served(sent))


@settings(max_examples=max(5, FUZZ_EXAMPLES // 10), deadline=None)
@given(st.integers(1024, 3 * CLIENT_READ), st.sampled_from(["string", "garbage"]))
def test_oversized_calls_go_back_as_read(size, shape):
    if shape == "string":  # a call whose one argument is longer than anything kept as a shortcut's key
        args = b"\x0b\x00\x01" + struct.pack("!i", size) + b"x" * size + b"\x00"
        sent = header_bytes("get_table", TMessageType.CALL, 7) + args
    else:
        sent = header_bytes("get_table", TMessageType.CALL, 7) + bytes(range(256)) * (size // 256)
    assert_handed_back(sent, served(sent))

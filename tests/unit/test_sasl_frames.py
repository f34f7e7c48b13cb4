"""protocol/sasl.py on a socket pair: the negotiation's frames as libthrift's TSaslTransport sends
them, data frames read across message boundaries, wrapping, and refusals in words.

The other end is a scripted peer on a real socket pair and the mechanism a stand-in (the GSSAPI
one runs against a real KDC and metastore in tests/integration/test_kerberos_upstream.py).
"""

from __future__ import annotations

import socket
import struct
import threading

import pytest

from hmsproxy.protocol.kerberos_client import local_host_name, own_principal
from hmsproxy.protocol.sasl import BAD, COMPLETE, OK, PROXY, SERVER, START, SaslError, SaslSocket, frame, negotiate, read_frame
from hmsproxy.upstream.kerberos import service_principal


class Scripted:
    """A two-step mechanism: "hello" first, then "proof:<challenge>"; wraps by reversing bytes."""

    name = "TOY"
    peer = SERVER

    def __init__(self, wraps: bool = False):
        self.steps: list[bytes] = []
        self._complete = False
        self.wraps = wraps

    @property
    def complete(self) -> bool:
        return self._complete

    def initial(self) -> bytes:
        return b"hello"

    def step(self, challenge: bytes) -> bytes:
        self.steps.append(challenge)
        self._complete = True
        return b"proof:" + challenge

    def wrap(self, data: bytes) -> bytes:
        return data[::-1]

    def unwrap(self, data: bytes) -> bytes:
        return data[::-1]


def _peer(script):
    """A socket pair whose far end runs `script(sock)` on a thread; returns (near socket, thread's errors)."""
    near, far = socket.socketpair()
    near.settimeout(10)
    far.settimeout(10)
    errors: list[BaseException] = []

    def run():
        try:
            script(far)
        except BaseException as e:  # noqa: BLE001 - reported by the test
            errors.append(e)
        finally:
            far.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return near, thread, errors


def test_the_negotiation_frames_as_thrift_sends_them():
    seen = []

    def server(sock):
        seen.append(read_frame(sock))  # START "TOY"
        seen.append(read_frame(sock))  # OK "hello"
        sock.sendall(frame(OK, b"challenge"))
        seen.append(read_frame(sock))  # COMPLETE "proof:challenge"
        sock.sendall(frame(COMPLETE))

    near, thread, errors = _peer(server)
    mechanism = Scripted()
    negotiate(near, mechanism)
    thread.join(10)
    assert not errors
    assert seen == [(START, b"TOY"), (OK, b"hello"), (COMPLETE, b"proof:challenge")]
    assert mechanism.steps == [b"challenge"]
    assert frame(START, b"TOY") == b"\x01\x00\x00\x00\x03TOY"
    near.close()


def test_a_refusal_carries_the_peers_reason():
    def server(sock):
        read_frame(sock)
        read_frame(sock)
        sock.sendall(frame(BAD, b"GSS initiate failed: clock skew too great"))

    near, thread, _ = _peer(server)
    with pytest.raises(SaslError, match="BAD.*clock skew too great"):
        negotiate(near, Scripted())
    thread.join(10)
    near.close()


def test_the_errors_name_the_peer_the_mechanism_talks_to():
    """A client of the proxy's port hears of the proxy, not of a metastore."""

    def server(sock):
        read_frame(sock)
        read_frame(sock)
        sock.sendall(frame(BAD, b"no"))

    to_proxy = Scripted()
    to_proxy.peer = PROXY
    near, thread, _ = _peer(server)
    with pytest.raises(SaslError, match="^the proxy refused the SASL negotiation"):
        negotiate(near, to_proxy)
    thread.join(10)
    near.close()
    near, thread, _ = _peer(lambda sock: (read_frame(sock), sock.sendall(b"\x80\x01\x00\x03" + b"\x00" * 8)))
    with pytest.raises(SaslError, match="is SASL off at the proxy"):
        negotiate(near, to_proxy)
    thread.join(10)
    near.close()


def test_a_plain_thrift_answer_is_not_taken_for_sasl():
    def server(sock):
        read_frame(sock)
        sock.sendall(b"\x80\x01\x00\x03" + b"\x00" * 8)  # a strict binary message header

    near, thread, _ = _peer(server)
    with pytest.raises(SaslError, match="not a SASL negotiation frame"):
        negotiate(near, Scripted())
    thread.join(10)
    near.close()


@pytest.mark.parametrize("wraps", [False, True])
def test_data_frames_read_as_a_stream(wraps):
    """Messages split over frames and frames holding parts of two messages read as one byte stream;
    each sendall is one frame; wrapped payloads are unwrapped."""
    payloads = [b"abc", b"defgh", b"i" * 70_000]

    def server(sock):
        for p in payloads:
            body = p[::-1] if wraps else p
            sock.sendall(struct.pack(">I", len(body)) + body)
        (length,) = struct.unpack(">I", sock.recv(4, socket.MSG_WAITALL))
        got = sock.recv(length, socket.MSG_WAITALL)
        sock.sendall(struct.pack(">I", len(got)) + got)  # echoed as it came (wrapped or not)

    near, thread, errors = _peer(server)
    layer = SaslSocket(near, Scripted(wraps=wraps))
    received = bytearray()
    while len(received) < sum(map(len, payloads)):
        chunk = layer.recv(4096)
        assert 0 < len(chunk) <= 4096
        received += chunk
    assert bytes(received) == b"".join(payloads)
    layer.sendall(b"reply")
    assert layer.recv(100) == b"reply"  # unwrapped again
    thread.join(10)
    assert not errors
    assert layer.recv(100) == b""  # the peer closed between frames: end of stream
    near.close()


def test_host_is_substituted_as_hadoop_does():
    assert service_principal("hive/_HOST@EXAMPLE.COM", "HMS-1.Example.com") == "hive/hms-1.example.com@EXAMPLE.COM"
    assert service_principal("hive/metastore@EXAMPLE.COM", "other") == "hive/metastore@EXAMPLE.COM"
    assert service_principal("hive/_HOST@EXAMPLE.COM", "0.0.0.0") == f"hive/{local_host_name().lower()}@EXAMPLE.COM"


def test_the_proxys_own_host_is_the_canonical_name_unless_server_host_is_a_name():
    """Hive's metastore: SecurityUtil.getServerPrincipal(principal, "0.0.0.0"), whatever it binds."""
    canonical = f"hive/{local_host_name().lower()}@EXAMPLE.COM"
    for address in ("127.0.0.1", "10.0.0.5", "0.0.0.0", "::1", "[::]", "", None):
        assert own_principal("hive/_HOST@EXAMPLE.COM", address) == canonical, address
    assert own_principal("hive/_HOST@EXAMPLE.COM", "Proxy-1.Example.com") == "hive/proxy-1.example.com@EXAMPLE.COM"
    assert own_principal("hive/fixed@EXAMPLE.COM", "127.0.0.1") == "hive/fixed@EXAMPLE.COM"

"""Thrift's SASL transport, the client's side: negotiation frames, then data frames.

What a Kerberized metastore (`hive.metastore.sasl.enabled`) speaks on its Thrift port, as
libthrift's TSaslTransport frames it:

* negotiation: 1 status byte (START=1 OK=2 BAD=3 ERROR=4 COMPLETE=5), a 4-byte big-endian length,
  the payload. The client opens with START carrying the mechanism's name ("GSSAPI") and then OK
  (or COMPLETE) carrying its first token; each side answers the other's token until the server
  sends COMPLETE. BAD and ERROR carry the peer's reason as text.
* data: a 4-byte big-endian length and the payload, one frame per flush; under QOP `auth-int` or
  `auth-conf` the payload is the mechanism's wrapped bytes.

`negotiate` is the client's half (the proxy towards Kerberized metastores), `accept` the server's
(the proxy's own port with server.sasl.enabled). `SaslSocket` is the data layer presented as the
socket the wire code already reads and writes
(`recv`, `sendall`; everything else, shutdown and timeouts included, goes to the real socket), so
the relay reads through the frames as through a plain socket. `SaslTransport` is the same for
thriftpy2's buffered transport. The mechanism (GSSAPI: upstream/kerberos.py) is handed in: this
module knows frames, not Kerberos.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Protocol

from thriftpy2.transport import TTransportException

START, OK, BAD, ERROR, COMPLETE = 1, 2, 3, 4, 5
STATUS_NAMES = {START: "START", OK: "OK", BAD: "BAD", ERROR: "ERROR", COMPLETE: "COMPLETE"}
_HEADER = struct.Struct(">BI")
_LENGTH = struct.Struct(">I")
#: A negotiation or data frame larger than this is a broken or hostile peer, not an answer.
MAX_FRAME = 1 << 30
#: A client's negotiation frame larger than this is refused before it is read (a Kerberos token
#: with a large PAC is tens of KiB): an unauthenticated peer may not make the proxy hold more.
MAX_CLIENT_TOKEN = 1 << 20


class SaslError(Exception):
    """The SASL negotiation failed; the message says where and why."""


@dataclass(frozen=True)
class Peer:
    """Who a client negotiates with, as its error texts name it: a metastore, the proxy, or either."""

    name: str  # "the metastore"
    qop_setting: str  # where that side's offered QOP is set, named when it offers another


METASTORE = Peer("the metastore", "hive.metastore.thrift.sasl.qop / hadoop.rpc.protection")
PROXY = Peer("the proxy", "the proxy's server.sasl.qop")
#: A client that may be pointed at either (open_client: the jobs, the streaming API).
SERVER = Peer("the server", "a proxy's server.sasl.qop, a metastore's hive.metastore.thrift.sasl.qop")


class Mechanism(Protocol):
    """A SASL client mechanism (protocol/kerberos_client.GssapiMechanism)."""

    name: str  # what START carries, e.g. "GSSAPI"
    peer: Peer  # who answers, for error texts

    @property
    def complete(self) -> bool: ...

    @property
    def wraps(self) -> bool:
        """Whether data frames carry wrapped payloads (QOP auth-int or auth-conf)."""

    def initial(self) -> bytes:
        """The first token, sent with START."""

    def step(self, challenge: bytes) -> bytes:
        """The answer to the server's token."""

    def wrap(self, data: bytes) -> bytes: ...

    def unwrap(self, data: bytes) -> bytes: ...


def frame(status: int, payload: bytes = b"") -> bytes:
    return _HEADER.pack(status, len(payload)) + payload


def _exactly(sock, n: int, peer: str = "the other end") -> bytes:
    data = bytearray()
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise TTransportException(type=TTransportException.END_OF_FILE, message=f"{peer} closed the connection during SASL")
        data += chunk
    return bytes(data)


def read_frame(sock, peer: str = "the other end", limit: int = MAX_FRAME) -> tuple[int, bytes]:
    """One negotiation frame from `peer`: (status, payload), refused over `limit` bytes."""
    status, length = _HEADER.unpack(_exactly(sock, _HEADER.size, peer))
    if status not in STATUS_NAMES:
        raise SaslError(f"not a SASL negotiation frame (status byte {status}): is SASL off at {peer}?")
    if length > limit:
        raise SaslError(f"SASL frame of {length} bytes refused (at most {limit})")
    return status, _exactly(sock, length, peer)


def negotiate(sock, mechanism: Mechanism) -> None:
    """The client's half of the negotiation on a connected socket; returns once both sides are complete."""
    peer = mechanism.peer.name
    sock.sendall(frame(START, mechanism.name.encode()) + frame(COMPLETE if mechanism.complete else OK, mechanism.initial()))
    status = None
    while not mechanism.complete:
        status, payload = read_frame(sock, peer)
        _check(status, payload, peer)
        response = mechanism.step(payload)
        if status == COMPLETE:  # the server is done: it expects nothing more
            if not mechanism.complete:
                raise SaslError(f"{peer} ended the SASL negotiation before the client was done")
            return
        sock.sendall(frame(COMPLETE if mechanism.complete else OK, response))
    if status != COMPLETE:  # we sent our last token: the server confirms
        status, payload = read_frame(sock, peer)
        _check(status, payload, peer)
        if status != COMPLETE:
            raise SaslError(f"expected SASL COMPLETE from {peer}, got {STATUS_NAMES[status]}")


#: Refusals that say nothing of their cause, and what they usually mean.
_OPAQUE_REASONS = {
    # libthrift's TSaslServerTransport (a Kerberized metastore) for any failure of its GSSAPI server
    "GSS initiate failed": (
        "the server gives no cause; its log has it. Usually: a clock skew of over 5 minutes between the server,"
        " this host and the KDC, a server keytab without the principal asked for, or a ticket the server cannot read"
    ),
}


def _check(status: int, payload: bytes, peer: str) -> None:
    if status in (BAD, ERROR):
        reason = payload.decode("utf-8", "replace") or "no reason given"
        if reason in _OPAQUE_REASONS:
            reason = f"{reason} ({_OPAQUE_REASONS[reason]})"
        raise SaslError(f"{peer} refused the SASL negotiation ({STATUS_NAMES[status]}): {reason}")
    if status not in (OK, COMPLETE):
        raise SaslError(f"expected SASL OK or COMPLETE from {peer}, got {STATUS_NAMES[status]}")


def accept(sock, mechanism_named) -> Mechanism:
    """The server's half on a client's socket: START names the mechanism (`mechanism_named(name)`
    makes it, or None: refused), then the client's tokens are answered (OK) until the mechanism is
    complete (COMPLETE). A refusal is sent to the client as BAD with the reason, then raised."""
    status, payload = read_frame(sock, "the client", MAX_CLIENT_TOKEN)
    if status != START:
        raise SaslError(f"expected SASL START from the client, got {STATUS_NAMES[status]}")
    name = payload.decode("utf-8", "replace")
    mechanism = mechanism_named(name)
    if mechanism is None:
        _refuse(sock, f"unsupported SASL mechanism {name!r}")
    while not mechanism.complete:
        status, token = read_frame(sock, "the client", MAX_CLIENT_TOKEN)
        _check(status, token, "the client")
        try:
            challenge = mechanism.step(token)
        except SaslError as e:
            _refuse(sock, str(e))
        sock.sendall(frame(COMPLETE if mechanism.complete else OK, challenge))
    return mechanism


def _refuse(sock, reason: str):
    try:
        sock.sendall(frame(BAD, reason.encode()))
    except OSError:  # the client is gone: the reason is still raised
        pass
    raise SaslError(reason)


class SaslSocket:
    """Data frames over `sock`, with a socket's `recv`/`sendall` (the wire code's relay uses them).

    `recv(n)` returns at most `n` bytes of the current frame (reading the next frame's header when
    it is used up), b"" at the end of the stream; `sendall(data)` sends `data` as one frame.
    """

    def __init__(self, sock, mechanism: Mechanism):
        self.sock = sock
        self._mechanism = mechanism
        self._wraps = mechanism.wraps
        self._frame = memoryview(b"")

    def recv(self, n: int) -> bytes:
        if not self._frame and not self._next_frame():
            return b""
        chunk = self._frame[:n]
        self._frame = self._frame[len(chunk) :]
        return bytes(chunk)

    def _next_frame(self) -> bool:
        header = self.sock.recv(_LENGTH.size)
        if not header:
            return False
        if len(header) < _LENGTH.size:
            header += _exactly(self.sock, _LENGTH.size - len(header))
        (length,) = _LENGTH.unpack(header)
        if length > MAX_FRAME:
            raise SaslError(f"SASL data frame of {length} bytes refused")
        payload = _exactly(self.sock, length)
        self._frame = memoryview(self._mechanism.unwrap(payload) if self._wraps else payload)
        return True

    @property
    def qop(self) -> str:
        """The security layer negotiated ("auth" for a mechanism without layers)."""
        return getattr(self._mechanism, "qop", "auth")

    def pending(self) -> int:
        """Bytes of the current frame not read yet (framing.readable_now asks, as of a TLS socket)."""
        return len(self._frame)

    def sendall(self, data: bytes) -> None:
        if self._wraps:
            data = self._mechanism.wrap(bytes(data))
        self.sock.sendall(_LENGTH.pack(len(data)) + data)

    def __getattr__(self, name):  # shutdown, setsockopt, settimeout, fileno, close, ...
        return getattr(self.sock, name)


class SaslTransport:
    """thriftpy2's side: a TSocket-like transport whose `open()` connects `socket` (a TSocket) and
    negotiates, and whose writes go out as one data frame per flush. `sock` is the SaslSocket
    (wire.py reads and writes it directly when it relays)."""

    def __init__(self, socket, mechanism_for, description: str, timeout_s: float | None = None):
        self._tsocket = socket
        self._mechanism_for = mechanism_for  # () -> a new Mechanism for this connection
        self._description = description  # "GSSAPI as <client> to <service>", for errors
        self._timeout_s = timeout_s  # for the negotiation: a metastore that hangs in it is not waited on for a call's time
        self._out: list[bytes] = []
        self.sock: SaslSocket | None = None

    def is_open(self) -> bool:
        return self.sock is not None

    def open(self) -> None:
        self._tsocket.open()
        if self._timeout_s is not None:
            self._tsocket.sock.settimeout(self._timeout_s)
        try:
            mechanism = self._mechanism_for()
            negotiate(self._tsocket.sock, mechanism)
        except SaslError as e:
            self._tsocket.close()
            raise SaslError(f"SASL {self._description} failed: {e}") from e
        except (TTransportException, OSError) as e:
            self._tsocket.close()
            raise SaslError(f"SASL {self._description} failed: {e}") from e
        self.sock = SaslSocket(self._tsocket.sock, mechanism)

    def read(self, n: int) -> bytes:
        data = self.sock.recv(n)
        if not data:
            raise TTransportException(type=TTransportException.END_OF_FILE, message="TSocket read 0 bytes")
        return data

    def write(self, data: bytes) -> None:
        self._out.append(data)

    def flush(self) -> None:
        data, self._out = b"".join(self._out), []
        if data:
            self.sock.sendall(data)

    def close(self) -> None:
        self.sock = None
        self._out = []
        self._tsocket.close()

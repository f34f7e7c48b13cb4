"""The one seam to the network upstream: a Thrift connection to a metastore.

Sends an already-built `<method>_args` struct and returns the whole
`<method>_result` struct, so the proxy can pass results (declared exceptions
included) through without unpacking them; or (`relay`) copies the answer to the
client undecoded. Transport errors become `BackendUnavailable`, the only foreign
exception the rest of the code sees.
"""

from __future__ import annotations

import os
import select
import socket
import struct
import threading
from collections.abc import Callable
from typing import Any, Protocol

from thriftpy2.protocol import TCyBinaryProtocol
from thriftpy2.thrift import TApplicationException, TMessageType
from thriftpy2.transport import TCyBufferedTransport, TCyFramedTransport, TSocket, TTransportException

from hmsproxy.protocol import idl
from hmsproxy.protocol._thriftwalk import HitSocket
from hmsproxy.protocol.codec import RecordingSocket, redecode
from hmsproxy.protocol.framing import CLOSED, DONE, OVER, exchange, message_bounds, received
from hmsproxy.protocol.relay import CatalogFill, RelayBroken, copy_body, ends_connection
from hmsproxy.protocol.sasl import SaslError, SaslTransport
from hmsproxy.protocol.uris import parse_uri

#: Answers up to this long are read whole by the C exchange (relay() of a shortcut hit); longer ones
#: are streamed by relay.copy_body, a list element at a time (memory stays at about one chunk).
WHOLE_IN_C = 262_144


class BackendUnavailable(Exception):
    """A metastore could not be reached or the connection broke mid-call."""

    def __init__(self, metastore: str, uri: str, reason: str, *, gone_before_answer: bool = False, cut: bool = False):
        super().__init__(f"metastore '{metastore}' ({uri}) is unavailable: {reason}")
        self.metastore = metastore
        self.uri = uri
        self.reason = reason
        #: The connection had been closed from the other end before this call's answer began (an
        #: idle connection the metastore, or a firewall between, dropped): a read may go again on
        #: a new connection. Never set for a timeout: a metastore that hangs is not asked twice.
        self.gone_before_answer = gone_before_answer
        #: The proxy itself ended the call (Connection.cut: the breaker tripped the metastore, or a
        #: fan-out stopped waiting): the reason says why; the call is not sent again.
        self.cut = cut


class Connection(Protocol):
    """What the proxy needs of a connection to one metastore (ThriftConnection; fakes in hmsproxy.testing)."""

    metastore: str  # the metastore's name in the config
    uri: str | None  # the URI it is connected to; None before open()

    @property
    def is_open(self) -> bool: ...

    def open(self) -> None:
        """Connect; raises BackendUnavailable when no URI answers."""

    def close(self) -> None:
        """Disconnect; never raises."""

    def call(self, method: str, args) -> Any:
        """Send a `<method>_args` struct, return the `<method>_result` struct.

        Raises TApplicationException when the server answers with one (e.g.
        UNKNOWN_METHOD) and BackendUnavailable when the transport fails.
        """

    def relay(self, method: str, args, sink, catalog_field: CatalogFill | None = None, exchanged=None) -> tuple[int, bytes]:
        """Send `args` (a `<method>_args` struct, or a whole call message as the client sent it) and
        copy the answer's body to `sink` undecoded (protocol/relay.py's copy_body), the catalog
        inserted where `catalog_field` says if given; returns (message type, the body's first bytes).
        `exchanged`: only for a connection with a `hit_fd` (ThriftConnection.relay).

        Raises BackendUnavailable before anything reached `sink`, RelayBroken after.
        """

    def closed_by_peer(self) -> bool:
        """Whether the metastore has closed this idle, open connection (asked without waiting, before
        a write goes over a kept one: a write is never sent twice, so it must not meet a dead one)."""

    def cut(self, uri: str, reason: str) -> None:
        """End the call waiting on this connection now, from another thread: it raises
        BackendUnavailable(uri, reason, cut=True) (RelayBroken if part of a relayed answer had
        gone out), and the connection never carries another call. Never raises."""


def in_order(uris: tuple[str, ...], avoid: Callable[[str], bool] | None) -> list[str]:
    """`uris` in the order a connection tries them: those `avoid` names (an HA set's URIs the breaker
    found stalled) last, so they are used only when every other fails to connect."""
    if avoid is None:
        return list(uris)
    return sorted(uris, key=avoid)  # stable: the config's order otherwise


def _transport_factory(kind: str):
    return TCyFramedTransport if kind == "framed" else TCyBufferedTransport


class SaslSettings(Protocol):
    """How connections to a Kerberized metastore authenticate (upstream/kerberos.GssapiSettings)."""

    def mechanism_for(self, host: str) -> Callable[[], Any]:
        """() -> a new SASL mechanism for one connection to `host`."""

    def describe(self, host: str) -> str:
        """Who authenticates to whom, for errors."""


class ThriftConnection(HitSocket):
    """One open connection to one metastore, tried over its URIs in order. Not thread-safe.

    A HitSocket (protocol/_gate.c): `hit_fd` is where the hit loop in C finds its descriptor.

    With `sasl`, each connection negotiates SASL first and every message then travels in SASL data
    frames (protocol/sasl.py): the relay reads and writes the frame layer's socket-like object.
    """

    def __init__(
        self,
        metastore: str,
        uris: tuple[str, ...],
        *,
        transport: str = "buffered",
        connect_timeout_s: float = 5.0,
        call_timeout_s: float = 600.0,
        sasl: SaslSettings | None = None,
    ):
        self.metastore = metastore
        self._sasl = sasl
        self.uris = uris
        self._transport_cls = _transport_factory(transport)
        self._connect_ms = int(connect_timeout_s * 1000)
        self._call_ms = int(call_timeout_s * 1000)
        self._proto = None
        self._recorder: RecordingSocket | None = None
        self._socket = None  # the open connection's socket: relay() reads and writes it directly
        # hit_fd (HitSocket's, -1 until open): the open connection's file descriptor when a shortcut
        # hit may use it from C (a plain socket, the buffered transport: downstream/hits.py).
        self._seqid = 0
        self.uri: str | None = None
        #: URIs to try last (Backends sets it for an HA set: the breaker's stalled URIs; in_order).
        self.avoid: Callable[[str], bool] | None = None
        #: (uri, reason) once cut(): every later use raises that.
        self._cut: tuple[str, str] | None = None
        #: cut() comes from another thread: it and close() never touch the socket at once.
        self._closing = threading.Lock()

    @property
    def is_open(self) -> bool:
        return self._proto is not None

    def open(self) -> None:
        if self._cut is not None:
            raise self._cut_error()
        errors = []
        for uri in in_order(self.uris, self.avoid):
            host, port = parse_uri(uri)
            sock = TSocket(host, port, socket_timeout=self._call_ms, connect_timeout=self._connect_ms)
            # Under SASL the frame layer sits between the socket and Thrift's transport.
            if self._sasl is None:
                base = sock
            else:  # negotiated within the connect timeout; the call timeout applies after
                base = SaslTransport(sock, self._sasl.mechanism_for(host), self._sasl.describe(host), self._connect_ms / 1000)
            recorder = RecordingSocket(base, framed=self._transport_cls is TCyFramedTransport)
            trans = self._transport_cls(recorder)
            try:
                trans.open()
            except (TTransportException, OSError, SaslError) as e:
                errors.append(f"{uri}: {_reason(e, self._connect_ms / 1000)}")
                continue
            _kernel_timeouts(sock.sock, self._call_ms / 1000)
            with self._closing:
                if self._cut is None:
                    self._proto = TCyBinaryProtocol(trans, strict_read=False)
                    self._recorder = recorder
                    self._socket = base.sock  # the raw socket, or the SASL frame layer over it
                    plain = self._sasl is None and self._transport_cls is TCyBufferedTransport
                    self.hit_fd = sock.sock.fileno() if plain else -1
                    self.uri = uri
                    return
            trans.close()  # cut while it connected
            raise self._cut_error()
        raise BackendUnavailable(self.metastore, ", ".join(self.uris), "; ".join(errors))

    def close(self) -> None:
        with self._closing:
            proto, self._proto, self._socket, self.hit_fd = self._proto, None, None, -1
            if proto is not None:
                try:
                    proto.trans.close()
                except Exception:  # closing a broken socket may fail; it is gone either way
                    pass

    def closed_by_peer(self) -> bool:
        """Connection.closed_by_peer: one poll of the socket. Hive closes a connection after answering
        a protocol error on it, and restarts leave kept connections dead. Under SASL (a frame layer
        over the socket) nothing is asked: False."""
        sock = self._socket
        if sock.__class__ is not socket.socket:
            return False
        try:
            if not select.select([sock], [], [], 0)[0]:
                return False  # nothing to read: open (the usual case)
            return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
        except BlockingIOError:
            return False
        except OSError:  # reset by the peer
            return True

    def cut(self, uri: str, reason: str) -> None:
        """End the call waiting on this connection now (Connection.cut). Called from another thread:
        it only shuts the socket down, so the owner's blocked read returns; the owner closes it."""
        with self._closing:
            if self._cut is None:
                self._cut = (uri, reason)
            if self._socket is not None:
                try:
                    self._socket.shutdown(socket.SHUT_RDWR)
                except OSError:  # not connected any more: nothing waits on it
                    pass

    def _cut_error(self) -> BackendUnavailable:
        uri, reason = self._cut
        return BackendUnavailable(self.metastore, uri, reason, cut=True)

    def abort(self) -> None:
        """From another thread: shut the socket down, so a call blocked on it fails at once (the
        calling thread then closes the connection). A hedged read's loser (hedging.py) ends so."""
        sock = self._socket
        if sock is not None and self._proto is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:  # already closed or never connected: nothing waits on it
                pass

    def call(self, method: str, args):
        """Send `args` (a `<method>_args` struct); return the `<method>_result` struct.

        Raises TApplicationException when the server answers with one and
        BackendUnavailable when the connection fails (the connection is closed).
        """
        if self._proto is None:
            self.open()
        result_cls = getattr(idl.HmsProxy, method + "_result")
        oneway = getattr(result_cls, "oneway", False)
        proto = self._proto
        self._seqid += 1
        answering = False
        try:
            proto.write_message_begin(method, TMessageType.ONEWAY if oneway else TMessageType.CALL, self._seqid)
            args.write(proto)
            proto.write_message_end()
            proto.trans.flush()
            if oneway:
                return result_cls()
            self._recorder.start()  # the answer's bytes, should it need codec.redecode
            _, mtype, _ = proto.read_message_begin()
            answering = True
            if mtype == TMessageType.EXCEPTION:
                exc = TApplicationException()
                exc.read(proto)
                proto.read_message_end()
                if exc.type == TApplicationException.PROTOCOL_ERROR:
                    self.close()  # Hive drops the connection after it: the next call would read 0 bytes
                raise exc
            result = result_cls()
            try:
                result.read(proto)
                proto.read_message_end()
            except TypeError:  # a map keyed by lists (SkewedInfo's location map): see codec.py
                result = redecode(self._recorder, proto.trans, result_cls)[3]
            self._recorder.take()
            return result
        except TApplicationException:
            raise
        except Exception as e:  # socket, transport or decode error: the stream is unusable now
            raise self._broken(e, answering) from e

    def _broken(self, e: Exception, answering: bool) -> BackendUnavailable:
        """The connection after a socket, transport or decode error: closed (its stream is unusable).
        An error that cut() caused is reported as the cut's reason, not as the closed socket it saw."""
        uri = self.uri or ", ".join(self.uris)
        self.close()
        if self._cut is not None:
            return self._cut_error()
        return BackendUnavailable(
            self.metastore, uri, _reason(e, self._call_ms / 1000), gone_before_answer=not answering and _closed_by_peer(e)
        )

    def relay(self, method: str, args, sink, catalog_field: CatalogFill | None = None, exchanged=None) -> tuple[int, bytes]:
        """_relay(), and the connection closed after a protocol error as call() does (and after an
        application error whose type the part in hand does not show: relay.ends_connection)."""
        answer = self._relay(method, args, sink, catalog_field, exchanged)
        if answer[0] == TMessageType.EXCEPTION and ends_connection(answer[1]):
            self.close()
        return answer

    def _relay(self, method: str, args, sink, catalog_field: CatalogFill | None = None, exchanged=None) -> tuple[int, bytes]:
        """Send `args` (a `<method>_args` struct, or a whole call message as bytes: shortcuts.py);
        copy the answer's body to `sink` undecoded, with the catalog inserted where `catalog_field`
        says if given (relay.py). Returns (message type, the body's first bytes).
        BackendUnavailable before anything reached `sink`; RelayBroken after.
        `exchanged`: the C exchange of `args` already made on this connection by the hit loop
        (downstream/hits.py), which did not end in a whole answer: finished here as if made here.

        The answer is read from the socket itself, not through the Thrift transport (whose buffer is
        empty between calls): the relay is every forwarded call's path, and Python layers cost there.
        Buffered transport only (a framed answer would need its frame read first).
        """
        if self._transport_cls is not TCyBufferedTransport:
            raise ValueError("the relay needs the buffered transport")
        if self._proto is None:
            self.open()
        sock = self._socket
        head = None
        if args.__class__ is bytes and sock.__class__ is socket.socket and exchange is not None:
            kind = 0 if catalog_field is None else catalog_field.in_c
            if catalog_field is None or kind:
                head = self._exchanged(sock, args, sink, catalog_field, kind, exchanged)
                if head.__class__ is tuple:  # the whole answer, held in the sink
                    return head
        try:
            if head is None:  # else: longer than WHOLE_IN_C, streamed on from what the exchange read
                if isinstance(args, bytes):
                    sock.sendall(args)
                else:
                    proto = self._proto
                    self._seqid += 1
                    proto.write_message_begin(method, TMessageType.CALL, self._seqid)
                    args.write(proto)
                    proto.write_message_end()
                    proto.trans.flush()
                head = received(sock.recv)
            while (bounds := message_bounds(head)) is None:
                head += received(sock.recv)
        except Exception as e:
            raise self._broken(e, answering=False) from e
        _, mtype, _, header_length, end = bounds
        body_start = head[header_length:]
        sink.begin(mtype, head[:header_length] if isinstance(args, bytes) else None)
        try:
            copy_body(body_start, sock.recv, sink, catalog_field if mtype == TMessageType.REPLY else None, complete=end == len(head))
        except Exception as e:
            raise self._broken_midway(e) from e
        return mtype, body_start

    def _exchanged(self, sock, request: bytes, sink, catalog_field: CatalogFill | None, kind: int, exchanged=None):
        """relay() of a request as the client sent it, on a plain socket, by the C exchange
        (_thriftwalk.c: sent, the answer read whole and the catalog filled in with the GIL released,
        no Python frame per piece): (message type, body) with the answer held in `sink`; or the
        bytes read so far of an answer longer than WHOLE_IN_C, which relay() streams on from.
        Each failure raises what relay()'s Python path raises at the same point."""
        field, fid = (b"", 0) if catalog_field is None else catalog_field.c_field
        try:
            if exchanged is None:
                exchanged = exchange(sock.fileno(), request, WHOLE_IN_C, kind, field, fid)
            elif isinstance(exchanged, Exception):  # the hit loop's exchange raised it
                raise exchanged
            status, code, header_length, data = exchanged
        except ValueError as e:  # not Thrift: message_bounds' error on the Python path
            raise self._broken(e, answering=False) from e
        if status == DONE:
            sink.hold(data)
            return code, data[header_length:]
        if status == OVER:
            return data
        if status == CLOSED:
            e = TTransportException(type=TTransportException.END_OF_FILE, message="TSocket read 0 bytes")  # received()'s
        else:
            e = OSError(code, os.strerror(code))  # BlockingIOError for the kernel's timeout, as from sock.recv
        if header_length < 0:  # before the answer began: relay()'s head loop
            raise self._broken(e, answering=False)
        raise self._broken_midway(EOFError("the metastore closed the connection inside an answer") if status == CLOSED else e)

    def _broken_midway(self, e: Exception) -> RelayBroken:
        """The connection after it failed in the middle of a relayed answer: closed; the error to raise."""
        self.close()
        why = self._cut[1] if self._cut is not None else _reason(e, self._call_ms / 1000)
        return RelayBroken(f"metastore '{self.metastore}' failed in the middle of an answer: {why}")


def _kernel_timeouts(sock: socket.socket, seconds: float) -> None:
    """Make `sock` blocking and leave its timeout to the kernel (SO_RCVTIMEO, SO_SNDTIMEO): Python polls
    a socket that has a timeout before each send and receive, two more system calls on every call.
    A timeout then surfaces as BlockingIOError (`_reason` says "no answer within N s")."""
    sock.settimeout(None)
    whole = int(seconds)
    timeval = struct.pack("ll", whole, int((seconds - whole) * 1_000_000))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, timeval)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, timeval)


def _closed_by_peer(e: Exception) -> bool:
    """The other end closed or reset the connection (not a timeout, not a garbled answer)."""
    if isinstance(e, TTransportException):
        return e.type == TTransportException.END_OF_FILE
    return isinstance(e, (ConnectionResetError, BrokenPipeError))


def _reason(e: Exception, timeout_s: float) -> str:
    if isinstance(e, BlockingIOError):  # a blocking socket's kernel timeout ran out (_kernel_timeouts)
        return f"no answer within {timeout_s:g} s"
    text = getattr(e, "message", None) or str(e) or type(e).__name__
    cause = e.__cause__ or e.__context__
    if cause is not None and str(cause) and str(cause) not in text:
        text = f"{text} ({cause})"
    return text

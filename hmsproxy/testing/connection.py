"""FakeConnection: the Connection protocol (hmsproxy.upstream.wire) over a FakeMetastore, in memory.

Every call goes through the same bytes a socket would carry: the args struct
is written as a Thrift binary message, the fake metastore reads it, and its
reply (a `<method>_result` struct or a TApplicationException message) is
read back as ThriftConnection reads it. So a struct that can't be encoded, or
a result that decodes differently, fails here as it would in production. `relay`
copies the encoded reply to a reply sink as a metastore's socket would feed it, so
the relayed path and its shortcuts run over the fakes as in production.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from thriftpy2.protocol import TCyBinaryProtocol
from thriftpy2.thrift import TApplicationException, TMessageType, TType
from thriftpy2.transport import TCyMemoryBuffer

from hmsproxy.protocol import codec, idl
from hmsproxy.protocol.framing import message_header
from hmsproxy.protocol.relay import CatalogFill, copy_body
from hmsproxy.testing.metastore import ClientState, FakeMetastore
from hmsproxy.upstream.wire import BackendUnavailable, in_order


def _protocol(data: bytes = b"") -> TCyBinaryProtocol:
    return TCyBinaryProtocol(TCyMemoryBuffer(data), strict_read=False)  # as wire.ThriftConnection


def _bytes(proto: TCyBinaryProtocol) -> bytes:
    proto.trans.flush()
    return proto.trans.getvalue()


def serve_message(metastore: FakeMetastore, client: ClientState, request: bytes) -> bytes | None:
    """The server's side of one message: decode, answer, encode (None for a one-way call)."""
    proto = _protocol(request)
    method, mtype, seqid = proto.read_message_begin()
    args_cls = getattr(idl.HmsProxy, method + "_args", None)
    out = _protocol()
    try:
        if args_cls is None:
            proto.skip(TType.STRUCT)
            raise TApplicationException(TApplicationException.UNKNOWN_METHOD, f"Invalid method name: '{method}'")
        args = _read(proto, request, args_cls)
        result = metastore.handle(method, args, client)
    except TApplicationException as e:
        out.write_message_begin(method, TMessageType.EXCEPTION, seqid)
        e.write(out)
    else:
        if mtype == TMessageType.ONEWAY:
            return None
        out.write_message_begin(method, TMessageType.REPLY, seqid)
        result.write(out)
    out.write_message_end()
    return _bytes(out)


class FakeConnection:
    """A connection to a FakeMetastore; opening or calling while it is down raises BackendUnavailable."""

    def __init__(self, fake: FakeMetastore, metastore: str | None = None, uris: tuple[str, ...] = ()):
        self.fake = fake
        self.metastore = metastore or fake.name  # the config's name, as ThriftConnection.metastore
        self.uris = tuple(uris) or (f"thrift://{fake.name}.fake:9083",)
        self.uri: str | None = None
        #: As wire.ThriftConnection.avoid: URIs opened last.
        self.avoid = None
        self._client: ClientState | None = None  # the server's memory of this connection
        self._seqid = 0
        #: (uri, reason) once cut(): as wire.ThriftConnection, it never carries another call.
        self.cut_as: tuple[str, str] | None = None

    def __repr__(self) -> str:
        return f"<FakeConnection {self.metastore} -> {self.fake!r}{' open' if self.is_open else ''}>"

    @property
    def is_open(self) -> bool:
        return self._client is not None

    def open(self) -> None:
        if self.cut_as is not None:
            raise BackendUnavailable(self.metastore, *self.cut_as, cut=True)
        if not self.fake.up:
            raise BackendUnavailable(self.metastore, ", ".join(self.uris), self.fake.down_reason)
        self._client, self.uri = ClientState(), in_order(self.uris, self.avoid)[0]

    def close(self) -> None:
        self._client = None  # a new connection is a new session: set_ugi must be sent again

    def closed_by_peer(self) -> bool:
        return False  # a fake's connection dies only by close() or cut()

    def cut(self, uri: str, reason: str) -> None:
        """As wire.ThriftConnection.cut: every later use raises BackendUnavailable(cut=True). (A fake's
        call never waits, so there is no call in flight to end; tests that hang one wrap it.)"""
        if self.cut_as is None:
            self.cut_as = (uri, reason)

    def call(self, method: str, args):
        result_cls = getattr(idl.HmsProxy, method + "_result")
        oneway = getattr(result_cls, "oneway", False)
        request = self._request(method, args, oneway)
        reply = serve_message(self.fake, self._client, request)  # the fake's own errors propagate as they are
        if oneway:
            return result_cls()
        proto = _protocol(reply)
        _, mtype, _ = proto.read_message_begin()
        if mtype == TMessageType.EXCEPTION:
            exc = TApplicationException()
            exc.read(proto)
            raise exc
        return _read(proto, reply, result_cls)

    def relay(self, method: str, args, sink, catalog_field: CatalogFill | None = None, exchanged=None) -> tuple[int, bytes]:
        """As wire.ThriftConnection.relay: the fake's answer, encoded, goes through the same copy_body
        (protocol/relay.py) a metastore's socket feeds, so the relayed path runs over the fake too.
        (`exchanged` is never given: a fake has no socket for the hit loop.)"""
        as_sent = isinstance(args, bytes)  # a call message as the client sent it (a relay shortcut)
        request = self._request(method, args, False)
        reply = serve_message(self.fake, self._client, request)
        _, mtype, _, header_length = message_header(reply)
        body = reply[header_length:]
        sink.begin(mtype, reply[:header_length] if as_sent else None)  # the client's own sequence id came back
        copy_body(body, _nothing_more, sink, catalog_field if mtype == TMessageType.REPLY else None, complete=True)
        return mtype, body

    def _request(self, method: str, args, oneway: bool) -> bytes:
        """The call message for `args` (as it is when already bytes), on an open connection to an up metastore."""
        if self.cut_as is not None:
            self.close()
            raise BackendUnavailable(self.metastore, *self.cut_as, cut=True)
        if self._client is None:
            self.open()
        if not self.fake.up:  # the metastore went away under an open connection
            uri = self.uri or ", ".join(self.uris)
            self.close()
            raise BackendUnavailable(self.metastore, uri, self.fake.down_reason)
        if isinstance(args, bytes):
            return args
        self._seqid += 1
        try:
            request = _protocol()
            request.write_message_begin(method, TMessageType.ONEWAY if oneway else TMessageType.CALL, self._seqid)
            args.write(request)
            request.write_message_end()
            return _bytes(request)
        except Exception as e:  # as on the wire: an unencodable struct breaks the connection
            self.close()
            raise BackendUnavailable(self.metastore, self.uri or "", f"can't encode {method}: {e!r}") from e


def _nothing_more(_n: int) -> bytes:
    return b""  # the fake's answer is whole before it is copied


def _read(proto, message: bytes, struct_cls):
    """The message's struct, read as the proxy's wire layer reads it (codec.py for list-keyed maps)."""
    value = struct_cls()
    try:
        value.read(proto)
    except TypeError:
        return codec.decode(message, struct_cls)[3]
    return value


@dataclass(frozen=True)
class ConnectRequest:
    metastore: str
    uris: tuple[str, ...]
    connect_timeout_s: float
    call_timeout_s: float


@dataclass
class FakeConnector:
    """A ConnectionFactory (hmsproxy.upstream.backends) over fakes, found by metastore name or by one of its URIs.

    A metastore with no fake gets a connection that is down, saying so.
    """

    metastores: dict[str, FakeMetastore]
    #: Every connection made, in order (to check timeouts and read-only URIs).
    requests: list[ConnectRequest] = field(default_factory=list)

    def __call__(self, metastore_name: str, uris: tuple[str, ...], *, connect_timeout_s: float, call_timeout_s: float) -> FakeConnection:
        self.requests.append(ConnectRequest(metastore_name, tuple(uris), connect_timeout_s, call_timeout_s))
        fake = self.metastores.get(metastore_name) or next((self.metastores[u] for u in uris if u in self.metastores), None)
        if fake is None:
            fake = FakeMetastore(metastore_name, databases=())
            fake.go_down(f"no FakeMetastore named '{metastore_name}' or with URI {', '.join(uris)} in fake_connect()")
        return FakeConnection(fake, metastore_name, uris)


def fake_connect(metastores: dict[str, FakeMetastore]) -> FakeConnector:
    """The factory to pass as `Backends(config, connect=...)`: metastore name (or URI) -> fake."""
    return FakeConnector(metastores)  # the same dict: metastores added later are found too

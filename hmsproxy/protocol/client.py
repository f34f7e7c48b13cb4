"""A Thrift client of the proxy's service, connected and introduced as a user: what the SQL client,
the streaming API and the jobs each open to talk to a proxy (or a metastore)."""

from __future__ import annotations

from typing import Any

from thriftpy2.protocol import TBinaryProtocolFactory
from thriftpy2.thrift import TApplicationException, TClient, TMessageType
from thriftpy2.transport import TBufferedTransportFactory, TFramedTransportFactory, TSocket

from hmsproxy.protocol import idl
from hmsproxy.protocol.codec import RecordingSocket, redecode


class MapSafeClient(TClient):
    """thriftpy2's client, reading answers that hold maps keyed by lists (SkewedInfo's location map of
    a table or partition laid out in Hive's directories) as the proxy's own connections do (codec.py),
    where thriftpy2 alone fails with "unhashable type: 'list'" and leaves the connection unusable."""

    def __init__(self, service: Any, iprot: Any, recorder: RecordingSocket):
        super().__init__(service, iprot)
        self._recorder = recorder

    def _recv(self, _api: str) -> Any:
        result_cls = getattr(self._service, _api + "_result")
        self._recorder.start()
        try:
            _, mtype, _ = self._iprot.read_message_begin()
            if mtype == TMessageType.EXCEPTION:
                failure = TApplicationException()
                failure.read(self._iprot)
                self._iprot.read_message_end()
                raise failure
            result = result_cls()
            try:
                result.read(self._iprot)
                self._iprot.read_message_end()
            except TypeError:  # a map keyed by lists: the whole answer read again by codec.py
                result = redecode(self._recorder, self._iprot.trans, result_cls)[3]
        finally:
            self._recorder.take()
        return _answer(result)


def _answer(result: Any) -> Any:
    """The call's value, or the exception the service declared and sent."""
    for fid, (_, name, *_) in sorted(result.thrift_spec.items()):
        if fid != 0 and getattr(result, name, None) is not None:
            raise getattr(result, name)
    if 0 in result.thrift_spec and result.success is None:
        raise TApplicationException(TApplicationException.MISSING_RESULT)
    return getattr(result, "success", None)


def open_client(
    host: str, port: int, *, user: str, timeout_s: float, framed: bool = False, sasl_principal: str | None = None
) -> MapSafeClient:
    """Connected, then `set_ugi(user)`: who the proxy's write rules and the metastore see as the
    caller, as Hive's clients do. (thriftpy2.rpc.make_client's plain TCP case, without importing
    thriftpy2.rpc: it loads asyncio for its async clients, a tenth of a second of every `hmsproxy sql`.)

    With `sasl_principal` (the server's, e.g. hive/_HOST@EXAMPLE.COM) the connection is SASL GSSAPI
    as the caller's Kerberos ticket says (kinit / KRB5CCNAME); a Kerberized server then takes the
    caller from the ticket, not from set_ugi. Raises SaslError when that fails (no ticket, ...)."""
    factory = TFramedTransportFactory() if framed else TBufferedTransportFactory()
    base = TSocket(host, port, socket_timeout=int(timeout_s * 1000))
    if sasl_principal:
        from hmsproxy.protocol.kerberos_client import caller_mechanism
        from hmsproxy.protocol.sasl import SERVER, SaslTransport

        target, mechanism_for = caller_mechanism(sasl_principal, host, SERVER)  # a proxy's port or a metastore's
        base = SaslTransport(base, mechanism_for, f"GSSAPI to {target}", timeout_s)
    recorder = RecordingSocket(base, framed=framed)
    transport = factory.get_transport(recorder)
    transport.open()
    client = MapSafeClient(idl.HmsProxy, TBinaryProtocolFactory().get_protocol(transport), recorder)
    try:
        client.set_ugi(user, [])
    except BaseException:
        client.close()
        raise
    return client

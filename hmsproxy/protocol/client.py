"""A Thrift client of the proxy's service, connected and introduced as a user: what the SQL client,
the streaming API and the jobs each open to talk to a proxy (or a metastore)."""

from __future__ import annotations

from thriftpy2.protocol import TBinaryProtocolFactory
from thriftpy2.thrift import TClient
from thriftpy2.transport import TBufferedTransportFactory, TFramedTransportFactory, TSocket

from hmsproxy.protocol import idl


def open_client(host: str, port: int, *, user: str, timeout_s: float, framed: bool = False, sasl_principal: str | None = None) -> TClient:
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
    transport = factory.get_transport(base)
    transport.open()
    client = TClient(idl.HmsProxy, TBinaryProtocolFactory().get_protocol(transport))
    try:
        client.set_ugi(user, [])
    except BaseException:
        client.close()
        raise
    return client

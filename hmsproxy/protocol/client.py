"""A Thrift client of the proxy's service, connected and introduced as a user: what the SQL client,
the streaming API and the jobs each open to talk to a proxy (or a metastore)."""

from __future__ import annotations

from thriftpy2.protocol import TBinaryProtocolFactory
from thriftpy2.thrift import TClient
from thriftpy2.transport import TBufferedTransportFactory, TFramedTransportFactory, TSocket

from hmsproxy.protocol import idl


def open_client(host: str, port: int, *, user: str, timeout_s: float, framed: bool = False) -> TClient:
    """Connected, then `set_ugi(user)`: who the proxy's write rules and the metastore see as the
    caller, as Hive's clients do. (thriftpy2.rpc.make_client's plain TCP case, without importing
    thriftpy2.rpc: it loads asyncio for its async clients, a tenth of a second of every `hmsproxy sql`.)"""
    factory = TFramedTransportFactory() if framed else TBufferedTransportFactory()
    transport = factory.get_transport(TSocket(host, port, socket_timeout=int(timeout_s * 1000)))
    transport.open()
    client = TClient(idl.HmsProxy, TBinaryProtocolFactory().get_protocol(transport))
    try:
        client.set_ugi(user, [])
    except BaseException:
        client.close()
        raise
    return client

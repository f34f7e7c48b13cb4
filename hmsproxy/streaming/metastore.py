"""One connection to a metastore (or the proxy) for the streaming API: thread-safe, errors in words.

A batch and its heartbeats use separate connections (Hive's heartbeat thread does too), so a long
write never delays a heartbeat.
"""

from __future__ import annotations

import getpass
import threading

from thriftpy2.protocol import TBinaryProtocolFactory
from thriftpy2.thrift import TClient, TException
from thriftpy2.transport import TBufferedTransportFactory, TSocket

from hmsproxy.protocol import idl
from hmsproxy.streaming.errors import StreamingError
from hmsproxy.upstream.wire import parse_uri

hive = idl.hive


class Metastore:
    """Calls by name (`ms.call("lock", rqst)`); one at a time, so threads may share it."""

    def __init__(self, uri: str, user: str | None = None, *, timeout_s: float = 120.0):
        self.uri = uri
        self.user = user or getpass.getuser()
        host, port = parse_uri(uri)
        transport = TBufferedTransportFactory().get_transport(TSocket(host, port, socket_timeout=int(timeout_s * 1000)))
        try:
            transport.open()
        except (TException, OSError) as e:
            raise StreamingError(f"can't reach the metastore at {uri}: {e}") from None
        self._client = TClient(idl.HmsProxy, TBinaryProtocolFactory().get_protocol(transport))
        self._lock = threading.Lock()
        try:
            self._client.set_ugi(self.user, [])  # who the proxy's write rules and the metastore see
        except BaseException:
            self.close()
            raise

    def call(self, method: str, *args):
        with self._lock:
            return getattr(self._client, method)(*args)

    def close(self) -> None:
        with self._lock:
            self._client.close()

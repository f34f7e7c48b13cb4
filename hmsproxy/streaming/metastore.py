"""One connection to a metastore (or the proxy) for the streaming API: thread-safe, errors in words.

A batch and its heartbeats use separate connections (Hive's heartbeat thread does too), so a long
write never delays a heartbeat.
"""

from __future__ import annotations

import getpass
import threading

from thriftpy2.thrift import TException

from hmsproxy.protocol import idl
from hmsproxy.protocol.client import open_client
from hmsproxy.protocol.sasl import SaslError
from hmsproxy.streaming.errors import StreamingError
from hmsproxy.upstream.wire import parse_uri

hive = idl.hive


class Metastore:
    """Calls by name (`ms.call("lock", rqst)`); one at a time, so threads may share it."""

    def __init__(self, uri: str, user: str | None = None, *, timeout_s: float = 120.0, sasl_principal: str | None = None):
        self.uri = uri
        self.user = user or getpass.getuser()
        host, port = parse_uri(uri)
        try:
            self._client = open_client(host, port, user=self.user, timeout_s=timeout_s, sasl_principal=sasl_principal)
        except (TException, OSError, SaslError) as e:
            raise StreamingError(f"can't reach the metastore at {uri}: {e}") from None
        self._lock = threading.Lock()

    def call(self, method: str, *args):
        with self._lock:
            return getattr(self._client, method)(*args)

    def close(self) -> None:
        with self._lock:
            self._client.close()

"""A plain thriftpy2 client of a test's proxy server, as one user."""

from __future__ import annotations

from contextlib import closing

import thriftpy2.rpc

from hmsproxy.protocol import idl


def client_as(server, user: str):
    """`with client_as(server, "alice") as client:` a client that sent set_ugi(user) (closed after)."""
    client = thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", server.port, timeout=60_000)
    client.set_ugi(user, [])
    return closing(client)

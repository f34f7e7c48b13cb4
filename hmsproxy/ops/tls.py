"""TLS on the Thrift port, as Hive clients with hive.metastore.use.SSL=true expect it."""

from __future__ import annotations

import ssl

from hmsproxy.config.model import TlsConfig


def server_context(tls: TlsConfig) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(tls.cert_file, tls.key_file)
    if tls.client_ca_file:
        ctx.load_verify_locations(tls.client_ca_file)
        ctx.verify_mode = ssl.CERT_REQUIRED  # mutual TLS: only clients with a certificate from this CA
    return ctx


def handshake(ctx: ssl.SSLContext, conn, timeout_s: float):
    """Wrap an accepted socket and finish the handshake (in the connection's own thread) within
    `timeout_s` in all: CPython's do_handshake counts its timeout for the whole handshake, not per read."""
    tls_conn = ctx.wrap_socket(conn, server_side=True, do_handshake_on_connect=False)
    try:
        tls_conn.settimeout(timeout_s)
        tls_conn.do_handshake()
        tls_conn.settimeout(None)
    except BaseException:
        tls_conn.close()  # it owns the file descriptor now
        raise
    return tls_conn

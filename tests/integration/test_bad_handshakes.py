"""Bad handshakes on a Kerberized (SASL GSSAPI) and a TLS port hold no thread past the bound.

Each proxy runs in this process with server.handshake-timeout-s = BOUND_S, in front of the shared
Hive 2.3 metastore. Malformed frames (a wrong SASL status byte, a huge length, a garbage GSSAPI
token, a garbage TLS ClientHello) are refused at once, for the reason the proxy logs; a client that
stops mid-handshake, or sends its handshake a byte at a time (each byte inside any per-read
timeout), is closed once the bound is spent. A storm of handshakes that never finish (STORM
connections; HMSPROXY_HANDSHAKE_STORM=1000 for the long version) leaves no client thread, no
tracked socket and no memory the proxy allocated behind, and a normal client's call succeeds while it lasts.
"""

from __future__ import annotations

import dataclasses
import gc
import logging
import os
import socket
import ssl
import struct
import time
import tracemalloc

import pytest

from hmsproxy.config.model import ServerSaslConfig, TlsConfig
from hmsproxy.protocol import idl
from hmsproxy.protocol.sasl import BAD, MAX_CLIENT_TOKEN, OK, START, frame
from tests.integration.test_kerberos_inbound import own_client
from tests.integration.test_operations import client_for
from tests.support.client_holds import held, settled
from tests.support.federation import prefixed_config
from tests.support.ops import make_test_certs
from tests.support.served import served

#: server.handshake-timeout-s of the proxies here.
BOUND_S = 3.0
#: How long past the bound a connection may take to be seen closed (a busy 2-core machine).
SLACK_S = 30.0
#: Handshakes that never finish, per port.
STORM = int(os.environ.get("HMSPROXY_HANDSHAKE_STORM", "200"))
#: The proxy's allocations a storm may leave, per connection: far below one connection's state (its
#: thread's ClientState, socket wrappers and buffers are kilobytes), so a connection held is caught.
LEFT_PER_CONNECTION = 256
PROXY = "hmsproxy/localhost"
SERVER_LOG = "hmsproxy.downstream.server"


def _config(metastores, **server):
    base = prefixed_config(metastores[0].uri, metastores[1].uri)
    return dataclasses.replace(base, server=dataclasses.replace(base.server, handshake_timeout_s=BOUND_S, **server))


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return make_test_certs(tmp_path_factory.mktemp("certs"))


@pytest.fixture(scope="module")
def tls_proxy(metastores, certs):
    tls = TlsConfig(str(certs.cert), str(certs.key))
    with served(_config(metastores, tls=tls)) as server:
        yield server


@pytest.fixture(scope="module")
def realm(kdc):
    for name in (PROXY, "alice"):
        kdc.add_principal(name)
    return kdc


@pytest.fixture(scope="module")
def sasl_proxy(metastores, realm):
    sasl = ServerSaslConfig(enabled=True, principal=realm.principal(PROXY), keytab=str(realm.principals[PROXY]))
    with served(_config(metastores, sasl=sasl)) as server:
        yield server


def _connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=BOUND_S + SLACK_S)


def _closed_after(sock: socket.socket) -> float:
    """Seconds until the proxy closes `sock` (what it sent before is read and dropped)."""
    started = time.monotonic()
    try:
        while sock.recv(65536):
            pass
    except ConnectionResetError:
        pass
    return time.monotonic() - started


def _client_hello() -> bytes:
    """The first flight of a real TLS client: its ClientHello record(s)."""
    ctx = ssl.create_default_context()
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    client = ctx.wrap_bio(incoming, outgoing, server_side=False)
    with pytest.raises(ssl.SSLWantReadError):
        client.do_handshake()
    return outgoing.read()


def _sasl_start() -> bytes:
    return frame(START, b"GSSAPI")


def _logged(caplog, text: str) -> bool:
    """Whether the server logs `text` (soon: a TLS socket is closed before its thread logs why)."""
    deadline = time.monotonic() + SLACK_S
    while not any(text in r.getMessage() for r in caplog.records if r.name == SERVER_LOG):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _refused(caplog, sock, reason: str) -> None:
    assert _closed_after(sock) < SLACK_S
    assert _logged(caplog, reason), [r.getMessage() for r in caplog.records]


# -- SASL ---------------------------------------------------------------------------------------


def test_a_wrong_sasl_status_byte_is_refused_at_once(sasl_proxy, caplog):
    caplog.set_level(logging.INFO, logger=SERVER_LOG)
    with _connect(sasl_proxy.port) as sock:
        sock.sendall(struct.pack(">BI", 9, 6) + b"GSSAPI")
        _refused(caplog, sock, "status byte 9")


@pytest.mark.parametrize("length", [MAX_CLIENT_TOKEN + 1, 0xFFFFFFFF])
def test_a_huge_sasl_frame_length_is_refused_before_it_is_read(sasl_proxy, caplog, length):
    caplog.set_level(logging.INFO, logger=SERVER_LOG)
    with _connect(sasl_proxy.port) as sock:
        sock.sendall(struct.pack(">BI", START, length) + b"GSS")
        _refused(caplog, sock, f"SASL frame of {length} bytes refused")


def test_a_garbage_gssapi_token_gets_bad_with_the_reason(sasl_proxy, caplog):
    caplog.set_level(logging.INFO, logger=SERVER_LOG)
    with _connect(sasl_proxy.port) as sock:
        sock.sendall(_sasl_start() + frame(OK, b"\x60\x82not a kerberos token at all"))
        status, length = struct.unpack(">BI", sock.recv(5))
        assert status == BAD
        reason = sock.recv(length).decode()
        assert "Kerberos authentication" in reason, reason
        _refused(caplog, sock, "Kerberos authentication")


def test_a_sasl_client_that_stops_mid_frame_is_closed_at_the_bound(sasl_proxy, caplog):
    caplog.set_level(logging.INFO, logger=SERVER_LOG)
    with _connect(sasl_proxy.port) as sock:
        sock.sendall(_sasl_start()[:3])
        waited = _closed_after(sock)
    assert BOUND_S * 0.9 <= waited < BOUND_S + SLACK_S
    assert _logged(caplog, "handshake not finished within 3 s")


def test_a_sasl_client_trickling_bytes_is_closed_at_the_bound(sasl_proxy):
    """A byte every BOUND_S / 6: every read returns well inside a per-read timeout, the sum does not."""
    message = _sasl_start() + frame(OK, b"x" * 64)
    with _connect(sasl_proxy.port) as sock:
        started = time.monotonic()
        with pytest.raises((BrokenPipeError, ConnectionResetError)):
            for byte in message:
                sock.sendall(bytes([byte]))
                time.sleep(BOUND_S / 6)
        assert time.monotonic() - started < BOUND_S + SLACK_S


def test_a_storm_of_unfinished_sasl_handshakes_leaves_nothing_and_blocks_no_one(sasl_proxy, realm):
    _storm(sasl_proxy, _sasl_start()[:3], lambda: _sasl_call(sasl_proxy, realm))


def _sasl_call(proxy, realm) -> list[str]:
    conn = own_client(proxy.port, realm, "alice", str(realm.principals["alice"]))
    try:
        return conn.call("get_all_databases", idl.HmsProxy.get_all_databases_args()).success
    finally:
        conn.close()


# -- TLS ----------------------------------------------------------------------------------------


def test_a_malformed_client_hello_is_refused_at_once(tls_proxy, caplog):
    caplog.set_level(logging.INFO, logger=SERVER_LOG)
    with _connect(tls_proxy.port) as sock:
        sock.sendall(b"\x16\x03\x01\x00\x20" + b"\xff" * 32)  # a handshake record of 32 bytes of nothing
        _refused(caplog, sock, "TLS handshake failed")


def test_a_tls_client_that_stops_mid_hello_is_closed_at_the_bound(tls_proxy, caplog):
    caplog.set_level(logging.INFO, logger=SERVER_LOG)
    hello = _client_hello()
    with _connect(tls_proxy.port) as sock:
        sock.sendall(hello[: len(hello) // 2])
        waited = _closed_after(sock)
    assert BOUND_S * 0.9 <= waited < BOUND_S + SLACK_S
    assert _logged(caplog, "handshake not finished within 3 s")


def test_a_tls_client_trickling_its_hello_is_closed_at_the_bound(tls_proxy):
    hello = _client_hello()
    step = max(1, len(hello) // 12)  # twelve pieces, BOUND_S / 6 apart: twice the bound in all
    with _connect(tls_proxy.port) as sock:
        started = time.monotonic()
        with pytest.raises((BrokenPipeError, ConnectionResetError)):
            for at in range(0, len(hello), step):
                sock.sendall(hello[at : at + step])
                time.sleep(BOUND_S / 6)
            sock.sendall(b"\x00" * 64)  # the whole hello sent: the proxy closed it long before
        assert time.monotonic() - started < BOUND_S + SLACK_S


def test_a_storm_of_unfinished_tls_handshakes_leaves_nothing_and_blocks_no_one(tls_proxy, certs):
    hello = _client_hello()

    def call():
        client = client_for(tls_proxy.port, cafile=str(certs.cert))
        try:
            return client.get_all_databases()
        finally:
            client.close()

    _storm(tls_proxy, hello[: len(hello) // 2], call)


# -- the storm ----------------------------------------------------------------------------------


def _storm(proxy, opening: bytes, normal_call) -> None:
    """STORM connections that send `opening` and stall; `normal_call()` answers while they are
    held; each is closed by the proxy within the bound (plus slack); no client thread, tracked
    socket or memory of theirs is left: what the proxy's own code allocated and still holds after
    the storm (tracemalloc, hmsproxy's files) grows by less than LEFT_PER_CONNECTION a connection."""
    before = held(proxy)
    assert "default" in normal_call()  # the normal client's first call fills what any first call fills
    assert settled(proxy, before, SLACK_S) == before  # and its connection has ended
    tracemalloc.start()
    try:
        memory_before = _hmsproxy_bytes()
        socks = []
        try:
            for _ in range(STORM):
                sock = _connect(proxy.port)
                sock.sendall(opening)
                socks.append(sock)
            opened = time.monotonic()
            assert "default" in normal_call()
            stalled = held(proxy)[1] - before[1]  # unfinished handshakes the proxy still held as it answered
            assert stalled > 0, "the normal call must be answered while the storm is held"
            for sock in socks:
                _closed_after(sock)
            assert time.monotonic() - opened < BOUND_S + SLACK_S
        finally:
            for sock in socks:
                sock.close()
        assert settled(proxy, before, SLACK_S) == before
        gc.collect()
        left = _hmsproxy_bytes() - memory_before
    finally:
        tracemalloc.stop()
    print(f"\n{STORM} unfinished handshakes: {left} bytes of the proxy's allocations left ({left / STORM:.0f} a connection)")
    assert left < LEFT_PER_CONNECTION * STORM, f"{left} bytes left after {STORM} connections"


def _hmsproxy_bytes() -> int:
    """Bytes allocated by hmsproxy's own code and still held (tracemalloc must be tracing)."""
    snapshot = tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(True, "*/hmsproxy/*")])
    return sum(stat.size for stat in snapshot.statistics("filename"))

"""The Thrift listener: one thread and one Session per client connection.

Reads each message whole, hands it to the handler (which decodes its `<method>_args`
when it needs them) and writes the `<method>_result` back, unless the handler relayed it. Unknown methods and internal errors are
answered with TApplicationException; the connection stays open through any
error except the client closing it.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from functools import partial

from thriftpy2.protocol import TCyBinaryProtocol
from thriftpy2.thrift import TApplicationException, TMessageType
from thriftpy2.transport import TCyBufferedTransport, TCyFramedTransport, TCyMemoryBuffer, TSocket, TTransportException

from hmsproxy.config.auth_to_local import user_short_name
from hmsproxy.config.model import ServerSaslConfig, TlsConfig, proxy_users
from hmsproxy.downstream.deadline import Deadline, HandshakeTimeout
from hmsproxy.downstream.hits import Hits
from hmsproxy.downstream.idle_upstream import IdleUpstream
from hmsproxy.downstream.kerberos import KerberosService
from hmsproxy.downstream.reply_sink import ReplySink
from hmsproxy.ops.sockets import shut_down
from hmsproxy.ops.tls import handshake, server_context
from hmsproxy.pipeline.errors import internal_error, unknown_method
from hmsproxy.pipeline.fastpath import RELAYED
from hmsproxy.pipeline.handler import Handler
from hmsproxy.protocol.framing import MessageReader, readable_now
from hmsproxy.protocol.relay import RelayBroken
from hmsproxy.protocol.sasl import SaslError
from hmsproxy.routing.methods import METHOD_SPECS
from hmsproxy.upstream.session import Session

log = logging.getLogger(__name__)


class ProxyServer:
    def __init__(
        self,
        handler: Handler,
        host: str,
        port: int,
        *,
        transport: str = "buffered",
        tls: TlsConfig | None = None,
        sasl: ServerSaslConfig | None = None,
        reuse_port: bool = False,
    ):
        self.handler = handler
        #: With sasl.enabled, clients must authenticate with Kerberos (SASL GSSAPI) before any call.
        self._kerberos = KerberosService(sasl.principal, sasl.keytab, host, sasl.qop) if sasl is not None and sasl.enabled else None
        self._impersonators = proxy_users(sasl.impersonation) if sasl is not None else {}
        self._sasl = sasl
        self.host = host
        self.transport_cls = TCyFramedTransport if transport == "framed" else TCyBufferedTransport
        self._tls = server_context(tls) if tls is not None else None
        # reuse_port: several worker processes bind the same port; the kernel spreads connections.
        self._listener = socket.create_server((host, port), reuse_port=reuse_port, backlog=128)
        self.port = self._listener.getsockname()[1]
        self._stopping = threading.Event()
        #: Each client's socket (the TLS one once its handshake is done) and its drain bookkeeping.
        self._clients: dict[socket.socket, ClientState] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        #: Shortcut hits served in C for clients on plain sockets (hits.py).
        self._hits = Hits(handler)
        handler.serving_path = self.serving_path  # `hmsproxy status` and /readyz say it

    @property
    def serving_path(self) -> str:
        """Which code answers repeated reads here: the C hit loop, or Python and why."""
        if self._tls is not None or self._kerberos is not None:
            return "Python (TLS or SASL: the socket's bytes are not the calls; the hit loop in C needs a plain socket)"
        if self.transport_cls is not TCyBufferedTransport:
            return "Python (framed transport; the hit loop in C reads the buffered transport)"
        return "C hit loop (plain sockets, buffered transport; other calls in Python)"

    @property
    def uri(self) -> str:
        return f"thrift://{self.host}:{self.port}"

    def serve_forever(self) -> None:
        log.info("hmsproxy listening on %s", self.uri)
        while not self._stopping.is_set():
            try:
                conn, addr = self._listener.accept()
            except OSError:
                if self._stopping.is_set():
                    return
                raise
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            state = ClientState()
            with self._lock:
                self._clients[conn] = state
            threading.Thread(target=self._serve_client, args=(conn, addr, state), daemon=True, name=f"client-{addr[0]}:{addr[1]}").start()

    def start(self) -> ProxyServer:
        """Serve in a background thread (tests, dev stack)."""
        self._thread = threading.Thread(target=self.serve_forever, daemon=True, name="hmsproxy-accept")
        self._thread.start()
        return self

    def stop(self) -> None:
        self.close_listener()
        with self._lock:
            clients, self._clients = list(self._clients), {}
        for c in clients:
            shut_down(c)
        if self._thread is not None:
            self._thread.join(timeout=5)

    def close_listener(self) -> None:
        """Accept no more connections; calls on open ones go on until drain() or stop()."""
        self._stopping.set()
        shut_down(self._listener)  # wakes the thread blocked in accept()
        self._listener.close()

    def drain(self, timeout_s: float, poll_s: float = 0.05) -> int:
        """Close the idle client connections now and each busy one as soon as its call is answered;
        wait up to `timeout_s` for them all. Returns how many were still open then (stop() cuts them).
        A client sees its connection closed between calls, never a call of its run and unanswered."""
        self.close_listener()
        deadline = time.monotonic() + timeout_s
        while True:
            with self._lock:
                for c, state in self._clients.items():
                    if not state.busy and not state.let_go:
                        state.let_go = True
                        _stop_reading(c)
                left = len(self._clients)
            if left == 0:
                return 0
            if time.monotonic() >= deadline:
                self._log_cut_calls()
                return left
            time.sleep(poll_s)

    def _log_cut_calls(self) -> None:
        """Name each call still running when the drain gives up: stop() cuts it, so it may have been
        applied with its answer lost (a client that retries a write may then meet "exists already")."""
        with self._lock:
            busy = [(c, state.method) for c, state in self._clients.items() if state.busy]
        for c, method in busy:
            log.warning("drain: the call %s of client %s was still running at the drain's bound; it is cut", method, _peer(c))

    @property
    def open_connections(self) -> int:
        with self._lock:
            return len(self._clients)

    def _serve_client(self, conn: socket.socket, addr, state: ClientState) -> None:
        session = Session(self.handler.backends, f"{addr[0]}:{addr[1]}")
        self.handler.session_opened(session)
        try:
            if self._tls is not None or self._kerberos is not None:
                conn = self._handshake(conn, session)
            # Calls are read whole as bytes (framing.py) and decoded from memory; answers are written
            # through thriftpy2's transport, or straight to the socket when relayed (reply_sink.ReplySink).
            messages = MessageReader(conn.recv, framed=self.transport_cls is TCyFramedTransport, more_waiting=readable_now(conn))
            proto = TCyBinaryProtocol(self.transport_cls(TSocket(sock=conn)))
            hits = self._hits if self._hits.serves(conn, self.transport_cls) else None
            idle = IdleUpstream(session, conn, self.handler.config.server.upstream_idle_s)
            while not self._stopping.is_set():
                if not messages.holds:
                    idle.wait()
                replay = hits.serve(session, conn, messages, idle.wait) if hits is not None and not messages.holds else None
                self._process_one(session, proto, messages, conn.sendall, replay, state)
        except HandshakeTimeout as e:
            log.info("client %s: %s; closing its connection (server.handshake-timeout-s)", session.client_address, e)
        except (TTransportException, ConnectionError, OSError) as e:
            log.debug("client %s left: %s", session.client_address, e)
        except RelayBroken as e:
            log.warning("client %s: %s; closing its connection (its stream cannot be resumed)", session.client_address, e)
        except Exception:
            log.exception("client %s: unexpected failure outside a call's error handling; closing the connection", session.client_address)
        finally:
            self.handler.session_closed(session)
            with self._lock:
                self._clients.pop(getattr(conn, "sock", conn), None)  # the socket under SASL's frames
            try:
                conn.close()
            except OSError:
                pass

    def _handshake(self, conn: socket.socket, session: Session):
        """TLS, then SASL (as Hive layers them: SASL frames inside TLS), both within one deadline
        (server.handshake-timeout-s, read per connection so a reload applies to new clients)."""
        deadline = Deadline(self.handler.config.server.handshake_timeout_s)
        if self._tls is not None:
            conn = self._start_tls(conn, session.client_address, deadline)
        if self._kerberos is not None:
            conn = self._start_sasl(conn, session, deadline)
        return conn

    def _start_tls(self, raw: socket.socket, client: str, deadline: Deadline):
        try:
            conn = handshake(self._tls, raw, deadline.left())
        except TimeoutError as e:
            raise deadline.spent() from e
        except OSError as e:  # ssl.SSLError included: a plain-text client, a wrong CA, ...
            log.warning("client %s: TLS handshake failed: %s", client, e)
            raise
        with self._lock:  # stop() must shut down the TLS socket; the raw one is detached now
            state = self._clients.pop(raw, None)
            if state is not None:  # else stop() came first: the thread ends at its next read
                self._clients[conn] = state
        return conn

    def _start_sasl(self, conn: socket.socket, session: Session, deadline: Deadline):
        """Authenticate the client (downstream/kerberos.py): its principal's short name becomes the
        session's identity. A client that does not speak SASL, or fails, is logged and closed."""
        try:
            framed, principal, via_token = self._kerberos.authenticate(conn, deadline, self._token_store())
        except SaslError as e:
            log.warning("client %s: refused: SASL is on and %s", session.client_address, _plain_hint(e))
            raise OSError(str(e)) from e
        # A token's owner is recorded as asked, alice@REALM or alice: Hive's session is its short name either way.
        short_name = partial(user_short_name, rules=self._sasl.auth_to_local, own_realm=self._kerberos.principal.partition("@")[2])
        user = short_name(principal)
        if user is None:
            log.warning("client %s: refused: no auth-to-local rule gives %s a user name", session.client_address, principal)
            raise OSError(f"no auth-to-local rule applies to {principal}")
        if via_token:
            session.authenticate(user, principal, impersonates=False, short_name=short_name)
            session.via_token = True
            log.info("client %s: authenticated with a delegation token of %s (user %s)", session.client_address, principal, user)
            return framed
        rule = self._impersonators.get(user)
        session.authenticate(user, principal, impersonates=rule is not None, proxy_user=rule, short_name=short_name)
        log.info("client %s: authenticated as %s (user %s, QOP %s)", session.client_address, principal, session.user, framed.qop)
        return framed

    def _token_store(self):
        """The proxy's own delegation tokens, which DIGEST-MD5 logins use (the `tokens` feature's
        store, features/tokens/); None when no such feature runs or it issues none."""
        feature = self.handler.features.get("tokens")
        return getattr(feature, "tokens", None)

    def _process_one(
        self, session: Session, proto, messages: MessageReader, send, replay: tuple | None = None, state: ClientState | None = None
    ) -> None:
        """Read one call and answer it; `send`: the client socket's sendall (relayed answers go there);
        `replay`: what the hit loop left of it (Call.replay); `state`: the client's, for drain()."""
        message = messages.next()
        if state is None:
            self._answer(session, proto, message, send, replay)
            return
        state.method = message.header[0]
        state.busy = True
        if state.let_go:
            raise ConnectionError("draining: the connection was let go before this call; it was not run")
        try:
            self._answer(session, proto, message, send, replay)
        finally:
            state.busy = False

    def _answer(self, session: Session, proto, message, send, replay: tuple | None) -> None:
        method, mtype, seqid, _ = message.header
        spec = METHOD_SPECS.get(method)
        if spec is None:
            self._reply_exception(proto, method, seqid, unknown_method(method))
            return
        oneway = mtype == TMessageType.ONEWAY or spec.oneway
        sink = ReplySink(send, method, seqid) if self.transport_cls is TCyBufferedTransport and not oneway else None
        try:
            result = self.handler.dispatch(session, method, None, message, replay, sink)  # decoded there if needed (call.Call.args)
        except TApplicationException as e:
            if sink is not None and sink.started:
                raise RelayBroken(f"{method}: {e}") from e  # part of the answer is out: close the connection
            if not oneway:
                self._reply_exception(proto, method, seqid, e)
            return
        if result is RELAYED:
            sink.finish()
            return
        if oneway:
            return
        try:
            body = encoded(result)
        except Exception:  # a value the IDL cannot carry (a None in a list, ...): the proxy's own defect
            log.exception("client %s: the answer to %s cannot be encoded; answering an internal error", session.client_address, method)
            self._reply_exception(proto, method, seqid, internal_error(method, "hmsproxy could not encode its answer"))
            return
        proto.write_message_begin(method, TMessageType.REPLY, seqid)
        proto.trans.write(body)
        proto.write_message_end()
        proto.trans.flush()

    @staticmethod
    def _reply_exception(proto, method: str, seqid: int, exc: TApplicationException) -> None:
        proto.write_message_begin(method, TMessageType.EXCEPTION, seqid)
        exc.write(proto)
        proto.write_message_end()
        proto.trans.flush()


def encoded(result) -> bytes:
    """A `<method>_result` as the bytes of a reply's body, encoded whole before any of it is written:
    a value that fails half-way leaves the client's stream untouched."""
    buffer = TCyMemoryBuffer()
    result.write(TCyBinaryProtocol(buffer))
    return buffer.getvalue()


class ClientState:
    """What drain() needs of one client connection, written by the client's own thread without the
    server's lock (two stores per call; the interpreter lock orders them). The thread sets `busy`, then
    looks at `let_go`; drain() (under the server's lock) looks at `busy`, then sets `let_go` and stops
    the socket's reading. So a call read after drain() let its connection go is dropped unrun, and one
    whose thread went first is answered: a connection let go in that instant has its answer written
    (SHUT_RD stops reading only) and closes at its next read, between calls either way."""

    __slots__ = ("busy", "let_go", "method")

    def __init__(self):
        #: Between reading a call whole and writing its answer.
        self.busy = False
        #: The method of the call read last (the one running while busy), named if a drain cuts it.
        self.method = ""
        #: drain() let it go while idle: a call read after that is dropped unanswered, never run.
        self.let_go = False


def _peer(sock) -> str:
    try:
        host, port = sock.getpeername()[:2]
    except OSError:
        return "(gone)"
    return f"{host}:{port}"


def _stop_reading(sock: socket.socket) -> None:
    """Wake the thread reading `sock` (it sees the client gone) while a reply it is sending still goes out."""
    try:
        sock.shutdown(socket.SHUT_RD)
    except OSError:
        pass


def _plain_hint(e: SaslError) -> str:
    text = str(e)
    # Plain Thrift opens with 0x80 (binary protocol, buffered) or 0 (a framed call's length): other bytes are just wrong.
    if "not a SASL negotiation frame (status byte 128)" in text or "not a SASL negotiation frame (status byte 0)" in text:
        return "the client spoke plain Thrift (it needs hive.metastore.sasl.enabled=true and a Kerberos ticket)"
    return text

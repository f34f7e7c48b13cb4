"""SASL GSSAPI on the proxy's own Thrift port (server.sasl.enabled): who the caller really is.

`KerberosService` holds the proxy's acceptor credentials (server.sasl's principal from its keytab).
`authenticate(sock)` runs the server's half of Thrift's SASL negotiation (protocol/sasl.accept)
with `GssapiAcceptor`, RFC 4752's server side: Kerberos tokens until the context is established,
then the security-layer offer (every QOP server.sasl.qop lists, as Hive's comma list
hive.metastore.thrift.sasl.qop offers them all) and the client's choice among them. The acceptor
credentials are taken from the keytab when the service is made, so a keytab without the
principal stops `serve` at start, naming both, rather than failing the first client. It returns the frame layer
the connection is served through and the client's principal; the session's identity is the user
that principal maps to (config/auth_to_local.py), and `set_ugi` no longer changes it
(upstream/session.py).
"""

from __future__ import annotations

import socket

from hmsproxy.config.model import qop_list
from hmsproxy.downstream.deadline import Deadline
from hmsproxy.pipeline.errors import ProxyError
from hmsproxy.protocol.digest_md5 import DigestMd5Server
from hmsproxy.protocol.sasl import SaslError, SaslSocket, accept
from hmsproxy.upstream.kerberos import MAX_RECEIVE, QOP_LAYERS, KerberosLogin, gss_reason, load_gssapi


class KerberosService:
    """The proxy as a Kerberos service: `principal` (`_HOST`: `host`, or this machine's name) from `keytab`."""

    def __init__(self, principal: str, keytab: str, host: str | None = None, qop: str | tuple[str, ...] = "auth"):
        self._login = KerberosLogin(principal, keytab, host, usage="accept")
        self.principal = self._login.principal
        self.qops = qop_list(qop)  # the security layers offered; the client picks one
        self._login.credentials()  # raises SaslError now (naming principal and keytab), not at the first client

    def authenticate(self, sock: socket.socket, deadline: Deadline, tokens=None) -> tuple[SaslSocket, str, bool]:
        """Negotiate on a client's socket, finished before `deadline`: (the frame layer to serve it
        through, its principal, whether it logged in with a delegation token). With `tokens`
        (features/tokens/store.DelegationTokens) DIGEST-MD5 is accepted too, and the principal is the
        token's owner. Raises SaslError (the client has been sent BAD with the reason where it could
        be), or HandshakeTimeout."""

        def named(name: str):
            if name == GssapiAcceptor.name:
                return GssapiAcceptor(self._login.credentials(), self.qops, self.principal)
            if name == DigestMd5Server.name and tokens is not None:
                return DigestMd5Server(_token_password(tokens))
            return None

        acceptor = accept(deadline.bound(sock), named)
        sock.settimeout(None)
        if isinstance(acceptor, DigestMd5Server):
            return SaslSocket(sock, acceptor), tokens.sasl_login(acceptor.username).identifier.owner, True
        return SaslSocket(sock, acceptor), acceptor.principal, False


def _token_password(tokens):
    """DIGEST-MD5's password lookup: a refused token (unknown, expired, cancelled) is a SASL refusal with its reason."""

    def lookup(username: str) -> str:
        try:
            return tokens.digest_password(username)
        except ProxyError as e:
            raise SaslError(str(e)) from e

    return lookup


class GssapiAcceptor:
    """SASL GSSAPI, the server's side, for one client connection, offering the QOPs `qops`."""

    name = "GSSAPI"

    def __init__(self, creds, qops: str | tuple[str, ...] = "auth", service: str = "this proxy"):
        self._gssapi = load_gssapi()
        self._context = self._gssapi.SecurityContext(creds=creds, usage="accept")
        self.qops = qop_list(qops)
        self.qop = self.qops[0]  # the client's choice once it has made it
        self._service = service  # the proxy's principal, named when a client's ticket is not for it
        self._offered = False
        self._complete = False
        self.principal: str | None = None

    @property
    def complete(self) -> bool:
        return self._complete

    @property
    def wraps(self) -> bool:
        return self.qop != "auth"

    @property
    def _offered_layers(self) -> int:
        mask = 0
        for name in self.qops:
            mask |= QOP_LAYERS[name]
        return mask

    def step(self, token: bytes) -> bytes:
        errors = self._gssapi.exceptions.GSSError
        try:
            if not self._context.complete:
                reply = self._context.step(token)
                if not self._context.complete or reply:
                    return reply or b""  # more tokens; or the last one (mutual auth), which the client acknowledges empty
            if not self._offered:
                return self._offer()
            return self._choice(token)
        except errors as e:
            raise SaslError(f"Kerberos authentication to {self._service} failed: {gss_reason(e)}") from e

    def _offer(self) -> bytes:
        """The layers the proxy offers (RFC 4752: one bit each) and the largest frame it takes, wrapped."""
        self._offered = True
        return self._context.wrap(bytes([self._offered_layers]) + MAX_RECEIVE.to_bytes(3, "big"), encrypt=False).message

    def _choice(self, token: bytes) -> bytes:
        """The client's answer: exactly one of the offered layers (its bit), its buffer size, an authzid."""
        answer = self._context.unwrap(token).message
        chosen = [name for name, bit in QOP_LAYERS.items() if len(answer) >= 4 and answer[0] == bit and name in self.qops]
        if not chosen:
            raise SaslError(f"the client chose a security layer the proxy does not offer (it offers QOP {','.join(self.qops)})")
        self.qop = chosen[0]
        principal = str(self._context.initiator_name)
        authzid = answer[4:].decode("utf-8", "replace")
        if authzid and authzid != principal:
            raise SaslError(f"{principal} may not act as {authzid}")
        self.principal = principal
        self._complete = True
        return b""

    def wrap(self, data: bytes) -> bytes:
        return self._context.wrap(data, encrypt=self.qop == "auth-conf").message

    def unwrap(self, data: bytes) -> bytes:
        return self._context.unwrap(data).message

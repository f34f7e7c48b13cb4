"""SASL GSSAPI, the client's side, and where its Kerberos credentials come from.

`GssapiMechanism` is SASL's GSSAPI (RFC 4752) for one connection: Kerberos tokens until the
context is established, then the security-layer exchange (the server offers layers and a buffer
size, the client picks the configured QOP). Its credentials come from a login: the proxy's keytab
towards Kerberized metastores (upstream/kerberos.KerberosLogin), or `TicketCache`, the caller's
own tickets (`kinit`, KRB5CCNAME), for hmsproxy's clients towards a Kerberized proxy port
(protocol/client.py, protocol/statement_wire.py).

`service_principal` replaces `_HOST` as Hadoop's SecurityUtil.getServerPrincipal does: with the
host the client connects to, lower-cased (a wildcard or empty host: this machine's canonical name).
`own_principal` is the proxy's own principal (server.sasl.principal): `_HOST` is this machine's
canonical name, as Hive's metastore resolves it, unless server.host is a host name (docs/kerberos.md).

gssapi (the `kerberos` extra) is imported on first use: nothing without Kerberos needs it.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from typing import Protocol

from hmsproxy.protocol.sasl import METASTORE, SERVER, Peer, SaslError

#: SASL GSSAPI security layers (RFC 4752): the bit each QOP name stands for.
QOP_LAYERS = {"auth": 1, "auth-int": 2, "auth-conf": 4}
#: The largest wrapped frame a client accepts, announced to the server under auth-int/auth-conf.
MAX_RECEIVE = 0xFFFFFF


def service_principal(pattern: str, host: str | None) -> str:
    """`pattern` with `_HOST` replaced by `host` lower-cased, as Hadoop does (no DNS lookup)."""
    if "_HOST" not in pattern:
        return pattern
    if not host or host == "0.0.0.0":
        host = local_host_name()
    return pattern.replace("_HOST", host.lower())


def own_principal(pattern: str, bind_host: str | None) -> str:
    """The proxy's own principal: `_HOST` is `bind_host` when it is a host name, else (an address,
    0.0.0.0, none) this machine's canonical name. Hive's metastore always takes the canonical name
    (SecurityUtil.getServerPrincipal(principal, "0.0.0.0")), so a hive-site.xml principal names the
    same service here whichever address the proxy binds."""
    return service_principal(pattern, None if not bind_host or is_address(bind_host) else bind_host)


def is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


def local_host_name() -> str:
    """This machine's canonical name as Java's InetAddress.getLocalHost().getCanonicalHostName()
    gives it (Hadoop's SecurityUtil.getLocalHostName): the host name's address, looked up backwards,
    kept only when it resolves to that address again; else the address itself."""
    name = socket.gethostname()
    try:
        address = socket.gethostbyname(name)
    except OSError:
        return name
    try:
        canonical = socket.gethostbyaddr(address)[0]
        if address in socket.gethostbyname_ex(canonical)[2]:
            return canonical
    except OSError:
        pass
    return address


def load_gssapi():
    try:
        import gssapi
    except ImportError as e:  # config checks say so earlier; this is the last word
        raise SaslError(f"the gssapi package is not installed (pip install 'hmsproxy[kerberos]'): {e}") from e
    return gssapi


def gssapi_available() -> str | None:
    """None when gssapi imports, else why not."""
    try:
        import gssapi  # noqa: F401
    except ImportError as e:
        return str(e)
    return None


class GssapiMechanism:
    """SASL GSSAPI, the client's side, for one connection to `peer` (for error texts: a metastore,
    the proxy, or either)."""

    name = "GSSAPI"

    def __init__(self, login: Login, target: str, qop: str = "auth", peer: Peer = METASTORE):
        gssapi = load_gssapi()
        self._gssapi = gssapi
        self.target = target
        self.qop = qop
        self.peer = peer
        self._complete = False
        self._layer = QOP_LAYERS["auth"]
        flags = [gssapi.RequirementFlag.mutual_authentication, gssapi.RequirementFlag.integrity, gssapi.RequirementFlag.confidentiality]
        self._context = gssapi.SecurityContext(
            name=gssapi.Name(target, gssapi.NameType.kerberos_principal),
            creds=login.credentials(),
            usage="initiate",
            mech=gssapi.MechType.kerberos,
            flags=flags,
        )

    @property
    def complete(self) -> bool:
        return self._complete

    @property
    def wraps(self) -> bool:
        return self._layer != QOP_LAYERS["auth"]

    def initial(self) -> bytes:
        return self._token(None)

    def step(self, challenge: bytes) -> bytes:
        if not self._context.complete:
            return self._token(challenge)
        return self._security_layer(challenge)

    def _token(self, challenge: bytes | None) -> bytes:
        try:
            return self._context.step(challenge) or b""
        except self._gssapi.exceptions.GSSError as e:
            raise SaslError(f"Kerberos refused {self.target}: {gss_reason(e)}") from e

    def _security_layer(self, challenge: bytes) -> bytes:
        """The server's offer (wrapped: a layer bit mask, its largest buffer) → the client's choice."""
        try:
            offer = self._context.unwrap(challenge).message
        except self._gssapi.exceptions.GSSError as e:
            raise SaslError(f"{self.peer.name}'s security-layer offer did not unwrap: {gss_reason(e)}") from e
        if len(offer) != 4:
            raise SaslError(f"{self.peer.name}'s security-layer offer has {len(offer)} bytes, not 4")
        wanted = QOP_LAYERS[self.qop]
        if not offer[0] & wanted:
            offered = ", ".join(name for name, bit in QOP_LAYERS.items() if offer[0] & bit) or "none"
            raise SaslError(f"{self.peer.name} offers QOP {offered}, not {self.qop} ({self.peer.qop_setting})")
        self._layer = wanted
        size = 0 if wanted == QOP_LAYERS["auth"] else MAX_RECEIVE
        answer = bytes([wanted]) + size.to_bytes(3, "big")  # no authorization id: act as ourselves
        self._complete = True
        return self._context.wrap(answer, encrypt=False).message

    def wrap(self, data: bytes) -> bytes:
        return self._context.wrap(data, encrypt=self.qop == "auth-conf").message

    def unwrap(self, data: bytes) -> bytes:
        return self._context.unwrap(data).message


def gss_reason(e: Exception) -> str:
    """Kerberos' own reason (the minor status, e.g. "Server … not found in Kerberos database"), else
    GSSAPI's (the major status), without gssapi's numbers and boilerplate."""
    reasons = []
    for code, is_major in ((getattr(e, "min_code", 0), False), (getattr(e, "maj_code", 0), True)):
        if code:
            try:
                reasons += [r for r in e.get_all_statuses(code, is_major) if r and "Minor code may provide" not in r]
            except Exception:  # noqa: BLE001 - fall back to str(e)
                pass
    reasons = [r for r in reasons if r != "Success"]  # a minor code of 0 reads "Success": no reason at all
    if reasons:
        return reasons[0] if not reasons[0].startswith("Unspecified GSS failure") else "; ".join(reasons)
    return " ".join(str(e).split())


class Login(Protocol):
    """Where a connection's initiator credentials come from."""

    principal: str

    def credentials(self): ...


class TicketCache:
    """The caller's own tickets: the default ticket cache (KRB5CCNAME, else the system's), as
    Hive's and Spark's clients use after `kinit`. `principal` is who the cache holds, once asked."""

    principal = "the ticket cache's principal"

    def credentials(self):
        gssapi = load_gssapi()
        try:
            creds = gssapi.Credentials(usage="initiate")
            self.principal = str(creds.name)
            creds.lifetime  # noqa: B018 - raises when the ticket has expired
            return creds
        except gssapi.exceptions.ExpiredCredentialsError as e:  # its own reason reads "Success": say what it is
            cache = os.environ.get("KRB5CCNAME", "the default ticket cache")  # its principal is not readable either now
            raise SaslError(f"the Kerberos ticket in {cache} has expired (kinit again): {gss_reason(e)}") from e
        except gssapi.exceptions.GSSError as e:
            raise SaslError(f"no usable Kerberos ticket (kinit first, or set KRB5CCNAME): {gss_reason(e)}") from e


def caller_mechanism(principal: str, host: str, peer: Peer, qop: str = "auth"):
    """(the service principal, () -> a GssapiMechanism as the caller to it): `principal` is the
    server's, `_HOST` standing for `host` (e.g. hive/_HOST@EXAMPLE.COM); `peer`: who that is
    (sasl.PROXY, or sasl.SERVER when it may be a metastore too)."""
    target = service_principal(principal, host)
    return target, lambda: GssapiMechanism(TicketCache(), target, qop, peer)


class CallerSasl:
    """upstream/wire.SaslSettings as the caller's ticket cache: for the jobs' and lookups' connections
    (upstream/wire.ThriftConnection) to a Kerberized proxy port; `principal` is the proxy's. `peer`
    SERVER, as open_client's for the jobs: their URI may name a metastore too."""

    def __init__(self, principal: str, qop: str = "auth", peer: Peer = SERVER):
        self.principal, self.qop, self.peer = principal, qop, peer

    def mechanism_for(self, host: str):
        return caller_mechanism(self.principal, host, self.peer, self.qop)[1]

    def describe(self, host: str) -> str:
        return f"GSSAPI to {service_principal(self.principal, host)}"

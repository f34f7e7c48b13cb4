"""The proxy's Kerberos identity towards Kerberized metastores: keytab login and SASL GSSAPI.

`KerberosLogin` holds the proxy's initiator credentials from its keytab (the `server.sasl`
principal and keytab): MIT's cred store (`client_keytab`, a private MEMORY ccache) gets a ticket
from the keytab when first needed and a new one before the old expires, so no `kinit` runs and
no ticket cache of the host is touched. `GssapiSettings` gives each connection to a metastore
a GssapiMechanism (SASL GSSAPI, protocol/kerberos_client.py, shared with hmsproxy's own clients)
over that login, to the metastore's principal with `_HOST` replaced by its host.

gssapi (the `kerberos` extra) is imported on first use: a proxy without Kerberized metastores
never needs it.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass

from hmsproxy.protocol.kerberos_client import (
    MAX_RECEIVE,
    QOP_LAYERS,
    GssapiMechanism,
    gss_reason,
    load_gssapi,
    own_principal,
    service_principal,
)
from hmsproxy.protocol.sasl import SaslError

__all__ = [
    "MAX_RECEIVE",
    "QOP_LAYERS",
    "GssapiMechanism",
    "GssapiSettings",
    "KerberosLogin",
    "gss_reason",
    "load_gssapi",
    "service_principal",
]

_ccache_ids = itertools.count(1)


class KerberosLogin:
    """The proxy's credentials from `keytab` as `principal` (`_HOST`: `host` when it is a host name,
    else this machine's canonical name: protocol/kerberos_client.own_principal):
    for initiating (towards metastores) or, with usage="accept", for clients of its own port."""

    def __init__(self, principal: str, keytab: str, host: str | None = None, *, usage: str = "initiate"):
        self.principal = own_principal(principal, host)
        self.keytab = keytab
        self.usage = usage
        self._ccache = f"MEMORY:hmsproxy-{os.getpid()}-{next(_ccache_ids)}"

    def credentials(self):
        """gssapi Credentials, acquired anew for each connection: that is when MIT's cred store looks
        at the ticket in the private cache and takes a new one from the keytab once it is half-way
        through its life or gone (a handle kept from the first login would hold on to an expired
        ticket: tests/integration/test_kerberos_login.py). Cheap: the cache is in memory."""
        if not os.path.isfile(self.keytab):
            raise SaslError(f"the keytab {self.keytab} of {self.principal} does not exist")
        gssapi = load_gssapi()
        initiate = self.usage == "initiate"
        store = {"client_keytab": self.keytab, "ccache": self._ccache} if initiate else {"keytab": self.keytab}
        try:
            name = gssapi.Name(self.principal, gssapi.NameType.kerberos_principal)
            return gssapi.Credentials(name=name, usage=self.usage, store=store)
        except gssapi.exceptions.GSSError as e:
            what = "log in as" if initiate else "accept Kerberos clients as"
            raise SaslError(f"cannot {what} {self.principal} from {self.keytab}: {gss_reason(e)}") from e


@dataclass(frozen=True)
class GssapiSettings:
    """What one metastore's connections need: the login and the metastore's principal pattern."""

    login: KerberosLogin
    principal: str  # e.g. hive/_HOST@EXAMPLE.COM
    qop: str = "auth"

    def mechanism_for(self, host: str):
        """() -> a new GssapiMechanism for a connection to `host`."""
        return lambda: GssapiMechanism(self.login, service_principal(self.principal, host), self.qop)

    def describe(self, host: str) -> str:
        return f"GSSAPI as {self.login.principal} to {service_principal(self.principal, host)}"

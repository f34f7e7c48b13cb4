"""The proxy's keytab login (upstream/kerberos.KerberosLogin) outlives its tickets.

A principal whose tickets live 10 seconds logs in once; after its ticket has expired, the same
login authenticates again: MIT's credential store took a new ticket from the keytab (no kinit,
no restart). Real KDC, real tickets; one bounded wait past the ticket's end.
"""

from __future__ import annotations

import time

import pytest

from hmsproxy.protocol.sasl import SaslError
from hmsproxy.upstream.kerberos import KerberosLogin

LIFETIME_S = 10


def _authenticate(login: KerberosLogin, service: str, acceptor_keytab) -> str:
    """One GSSAPI exchange as `login` to `service`; returns the name the service saw."""
    import gssapi

    target = gssapi.Name(service, gssapi.NameType.kerberos_principal)
    client = gssapi.SecurityContext(name=target, creds=login.credentials(), usage="initiate", mech=gssapi.MechType.kerberos)
    server = gssapi.SecurityContext(creds=gssapi.Credentials(usage="accept", store={"keytab": str(acceptor_keytab)}), usage="accept")
    token = client.step()
    while not (client.complete and server.complete):
        reply = server.step(token)
        if reply is None:
            break
        token = client.step(reply)
    return str(server.initiator_name)


def test_the_login_takes_a_new_ticket_from_the_keytab_after_expiry(kdc, kerberos_env):
    keytab = kdc.add_principal("shortlived", options=f'-maxlife "{LIFETIME_S} seconds"')
    service_keytab = kdc.add_principal("svc/renewal", options=f'-maxlife "{LIFETIME_S} seconds"')
    login = KerberosLogin(kdc.principal("shortlived"), str(keytab))
    assert _authenticate(login, kdc.principal("svc/renewal"), service_keytab) == kdc.principal("shortlived")
    first = login.credentials().lifetime
    assert 0 < first <= LIFETIME_S
    time.sleep(LIFETIME_S + 2)  # past the ticket's end: one bounded wait, nothing polled
    assert _authenticate(login, kdc.principal("svc/renewal"), service_keytab) == kdc.principal("shortlived")
    assert login.credentials().lifetime > 0  # a ticket that ends later than the first did


def test_a_principal_missing_from_its_keytab_is_named(kdc, kerberos_env):
    keytab = kdc.add_principal("present")
    login = KerberosLogin(kdc.principal("absent"), str(keytab))
    with pytest.raises(SaslError) as raised:
        _authenticate(login, kdc.principal("present"), keytab)
    assert kdc.principal("absent") in str(raised.value) or "absent" in str(raised.value)

"""The test realm itself (tests/support/kdc.py): a real MIT KDC on loopback issues tickets.

A user logs in from its keytab (`kinit -kt`) and gets a service ticket for `hive/localhost`
(`kvno`); then, through the gssapi binding the proxy uses, a client context made from a keytab
alone is accepted by the service's keytab. The realm's own krb5.conf is the only one read.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest


def _klist(kdc, ccache) -> str:
    done = subprocess.run(["klist", "-c", str(ccache)], env={**os.environ, **kdc.env(ccache)}, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_kinit_from_keytab_then_a_service_ticket(kdc, kerberos_env):
    kdc.add_principal("alice")
    kdc.add_principal("hive/localhost")
    kdc.kinit("alice", kerberos_env)
    kvno = shutil.which("kvno") or "/usr/bin/kvno"
    done = subprocess.run(
        [kvno, kdc.principal("hive/localhost")], env={**os.environ, **kdc.env(kerberos_env)}, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    listed = _klist(kdc, kerberos_env)
    assert f"alice@{kdc.realm}" in listed
    assert f"krbtgt/{kdc.realm}@{kdc.realm}" in listed
    assert f"hive/localhost@{kdc.realm}" in listed


def test_a_keytab_alone_authenticates_to_a_service(kdc, kerberos_env, tmp_path):
    import gssapi

    client_keytab = kdc.add_principal("bob")
    service_keytab = kdc.add_principal("svc/localhost")
    krb5 = gssapi.MechType.kerberos
    initiator = gssapi.Credentials(
        name=gssapi.Name(kdc.principal("bob"), gssapi.NameType.kerberos_principal),
        usage="initiate",
        store={"client_keytab": str(client_keytab), "ccache": f"FILE:{tmp_path / 'bob.cc'}"},
    )
    acceptor = gssapi.Credentials(usage="accept", store={"keytab": str(service_keytab)})
    target = gssapi.Name(kdc.principal("svc/localhost"), gssapi.NameType.kerberos_principal)
    client = gssapi.SecurityContext(name=target, creds=initiator, usage="initiate", mech=krb5)
    server = gssapi.SecurityContext(creds=acceptor, usage="accept")
    token = client.step()
    for _ in range(4):
        reply = server.step(token)
        if client.complete and server.complete:
            break
        token = client.step(reply)
        if client.complete and server.complete:
            break
    assert client.complete and server.complete
    assert str(server.initiator_name) == kdc.principal("bob")
    # The wrap layer works both ways (what SASL's auth-int/auth-conf would carry).
    sealed = client.wrap(b"hello", encrypt=True)
    assert server.unwrap(sealed.message).message == b"hello"


def test_an_unknown_principal_is_refused_by_name(kdc, kerberos_env, tmp_path):
    import gssapi

    keytab = kdc.add_principal("carol")
    creds = gssapi.Credentials(
        name=gssapi.Name(kdc.principal("carol"), gssapi.NameType.kerberos_principal),
        usage="initiate",
        store={"client_keytab": str(keytab), "ccache": f"FILE:{tmp_path / 'carol.cc'}"},
    )
    target = gssapi.Name(kdc.principal("nobody/localhost"), gssapi.NameType.kerberos_principal)
    with pytest.raises(gssapi.exceptions.GSSError) as raised:
        gssapi.SecurityContext(name=target, creds=creds, usage="initiate", mech=gssapi.MechType.kerberos).step()
    assert "not found" in str(raised.value).lower()

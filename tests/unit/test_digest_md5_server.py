"""DIGEST-MD5's server side (protocol/digest_md5.py): RFC 2831's example, and pure-sasl's client against it."""

from __future__ import annotations

import pytest
from puresasl.client import SASLClient

from hmsproxy.protocol.digest_md5 import DigestMd5Server, parse_directives, response_value
from hmsproxy.protocol.sasl import SaslError

RFC = dict(
    username="chris",
    realm="elwood.innosoft.com",
    password="secret",
    nonce="OA6MG9tEQGm2hh",
    cnonce="OA6MHXh6VqTrRk",
    nc="00000001",
    qop="auth",
    digest_uri="imap/elwood.innosoft.com",
)


def test_rfc_2831_example_response_and_rspauth():
    assert response_value(**RFC) == "d388dad90d4bbd760a152321f2143af7"
    assert response_value(**RFC, server=True) == "ea40f60335c427b5527b84dbabcdfffd"


def test_directives_parse_quotes_and_escapes():
    assert parse_directives(b'a="x,\\"y",b=2, c = "" ') == {"a": 'x,"y', "b": "2", "c": ""}
    with pytest.raises(SaslError):
        parse_directives(b'a="open')


def _run(client: SASLClient, server: DigestMd5Server) -> bytes:
    """The exchange as Thrift's SASL transport carries it; returns rspauth's frame."""
    challenge = server.step(client.process(None) or b"")
    answer = client.process(challenge)
    final = server.step(answer)
    assert server.complete
    client.process(final)  # checks rspauth: raises if the server's proof is wrong
    return final


def test_pure_sasl_client_authenticates():
    passwords = {"dG9rZW4=": "c2VjcmV0"}
    server = DigestMd5Server(passwords.__getitem__)
    client = SASLClient("default", "hive", mechanism="DIGEST-MD5", username="dG9rZW4=", password="c2VjcmV0")
    _run(client, server)
    assert server.username == "dG9rZW4=" and client.complete


def test_wrong_password_is_refused():
    server = DigestMd5Server({"u": "right"}.__getitem__)
    client = SASLClient("default", "hive", mechanism="DIGEST-MD5", username="u", password="wrong")
    with pytest.raises(SaslError, match="wrong password"):
        _run(client, server)
    assert not server.complete


def test_a_refused_username_raises_the_lookups_reason():
    def lookup(name):
        raise SaslError("token expired")

    client = SASLClient("default", "hive", mechanism="DIGEST-MD5", username="u", password="p")
    with pytest.raises(SaslError, match="token expired"):
        _run(client, DigestMd5Server(lookup))


def test_another_server_name_in_digest_uri_is_refused():
    client = SASLClient("elsewhere", "hive", mechanism="DIGEST-MD5", username="u", password="p")
    with pytest.raises(SaslError, match="digest-uri"):
        _run(client, DigestMd5Server({"u": "p"}.__getitem__))


def test_a_replayed_answer_for_another_nonce_is_refused():
    first = DigestMd5Server({"u": "p"}.__getitem__)
    client = SASLClient("default", "hive", mechanism="DIGEST-MD5", username="u", password="p")
    answer = client.process(first.step(b""))
    second = DigestMd5Server({"u": "p"}.__getitem__)
    second.step(b"")
    with pytest.raises(SaslError, match="nonce"):
        second.step(answer)

"""Hadoop's token encoding (protocol/delegation_token.py): vectors written out from Hadoop's layout."""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest

from hmsproxy.protocol.delegation_token import (
    HIVE_KIND,
    Token,
    TokenFormatError,
    TokenIdentifier,
    _Reader,
    password,
    token_storage_file,
    write_vlong,
)


@pytest.mark.parametrize(
    "value, encoded",
    [
        (0, "00"),
        (127, "7f"),
        (-112, "90"),
        (128, "8f80"),  # -113: one byte follows
        (1000, "8e03e8"),  # -114: two bytes follow
        (-113, "8770"),  # negative: -121, then ~(-113) = 112
        (1_700_000_000_000, "8a018bcfe56800"),  # a millisecond date: six bytes
    ],
)
def test_vlong_matches_writable_utils(value, encoded):
    assert write_vlong(value).hex() == encoded
    assert _Reader(bytes.fromhex(encoded)).vlong() == value


def test_identifier_bytes_follow_abstract_delegation_token_identifier():
    ident = TokenIdentifier("alice", "hive", "", 1000, 2000, 1, 2)
    expected = "00" + "05" + b"alice".hex() + "04" + b"hive".hex() + "00" + "8e03e8" + "8e07d0" + "01" + "02"
    assert ident.to_bytes().hex() == expected
    assert TokenIdentifier.from_bytes(ident.to_bytes()) == ident


def test_identifier_round_trips_utf8_and_large_numbers():
    ident = TokenIdentifier("zoë", "hive/host@EXAMPLE.COM", "proxy", 1_700_000_000_000, 1_700_604_800_000, 123456, 7)
    assert TokenIdentifier.from_bytes(ident.to_bytes()) == ident


def test_token_string_form_is_url_safe_base64_of_the_token_writable():
    ident = TokenIdentifier("alice", "hive", "", 1000, 2000, 1, 2).to_bytes()
    pw = password(b"k" * 20, ident)
    assert pw == hmac.new(b"k" * 20, ident, hashlib.sha1).digest()
    token = Token(ident, pw, HIVE_KIND, "")
    text = token.encode()
    assert "=" not in text and "+" not in text and "/" not in text
    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    kind = HIVE_KIND.encode()
    assert raw == bytes([len(ident)]) + ident + bytes([20]) + pw + bytes([len(kind)]) + kind + b"\x00"
    assert Token.decode(text) == token


@pytest.mark.parametrize("bad", ["", "AAAA", "!!!", Token(b"x", b"y").encode() + "AA"])
def test_garbage_is_refused(bad):
    with pytest.raises(TokenFormatError):
        Token.decode(bad)


def test_unknown_identifier_version_is_refused():
    with pytest.raises(TokenFormatError, match="version"):
        TokenIdentifier.from_bytes(b"\x01" + TokenIdentifier("a", "b", "", 1, 2, 3, 4).to_bytes()[1:])


def test_the_token_storage_file_is_hadoops_writable_credentials():
    """Credentials.writeTokenStorageFile, format 0: "HDTS", the format byte, a vint count, per token
    its alias (Text) and Token.write, then a vint count of secret keys. (Hadoop's own reader takes it:
    the Hive CLI and Spark tests in test_kerberos_clients.py / test_kerberos_inbound.py log in with it.)"""
    token = Token(b"id", b"pw", "K", "S")
    assert token_storage_file({"a": token}) == b"HDTS\x00" + b"\x01" + b"\x01a" + b"\x02id\x02pw\x01K\x01S" + b"\x00"
    assert token_storage_file({}) == b"HDTS\x00\x00\x00"
    long_alias = "x" * 200  # a length over 127 takes Hadoop's multi-byte vint
    assert token_storage_file({long_alias: token})[6:8] == write_vlong(200)

"""Hive delegation tokens as Hadoop encodes them, so Hive's and Spark's clients take the proxy's.

* The identifier is Hadoop's `AbstractDelegationTokenIdentifier` Writable: a version byte (0),
  owner, renewer and real user as `Text` (vint length + UTF-8), issue date and max date (ms) as
  vlongs, sequence number and master key id as vints.
* The password is HMAC-SHA1(master key, identifier bytes) (Hadoop's `SecretManager.createPassword`).
* The string form a client hands back (`renew_delegation_token`, `cancel_delegation_token`, the
  `hive.metastore.token.signature` of a job) is `Token.encodeToUrlString`: the `Token` Writable
  (vint-length identifier, vint-length password, Text kind, Text service) in URL-safe base64
  without padding.
* DIGEST-MD5 authenticates with username = base64(identifier), password = base64(password)
  (Hadoop's SaslRpcServer encodeIdentifier/encodePassword), realm "default".

Only the encoding lives here; issuing, expiry and storage are features/tokens/store.py's.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from dataclasses import dataclass

#: Hive's DelegationTokenIdentifier kind.
HIVE_KIND = "HIVE_DELEGATION_TOKEN"
_VERSION = 0


class TokenFormatError(ValueError):
    """Bytes that are not a token or identifier in Hadoop's encoding."""


def write_vlong(value: int) -> bytes:
    """Hadoop's WritableUtils.writeVLong: -112..127 in one byte, else a length byte and big-endian bytes."""
    if -112 <= value <= 127:
        return (value & 0xFF).to_bytes(1, "big")
    marker = -112
    if value < 0:
        value = ~value  # the one's complement is stored; the marker says it was negative
        marker = -120
    size = (value.bit_length() + 7) // 8
    return ((marker - size) & 0xFF).to_bytes(1, "big") + value.to_bytes(size, "big")


class _Reader:
    def __init__(self, data: bytes):
        self._data = data
        self._pos = 0

    def take(self, n: int) -> bytes:
        if n < 0 or self._pos + n > len(self._data):
            raise TokenFormatError("truncated token")
        chunk = self._data[self._pos : self._pos + n]
        self._pos += n
        return chunk

    def vlong(self) -> int:
        first = int.from_bytes(self.take(1), "big", signed=True)
        if first >= -112:
            return first
        negative = first < -120
        size = (-(first + 120)) if negative else (-(first + 112))
        value = int.from_bytes(self.take(size), "big")
        return ~value if negative else value

    def text(self) -> str:
        try:
            return self.take(self.vlong()).decode("utf-8")
        except UnicodeDecodeError as e:
            raise TokenFormatError("a token's text is not UTF-8") from e

    def done(self) -> bool:
        return self._pos == len(self._data)


def _text(value: str) -> bytes:
    data = value.encode("utf-8")
    return write_vlong(len(data)) + data


def _blob(value: bytes) -> bytes:
    return write_vlong(len(value)) + value


@dataclass(frozen=True)
class TokenIdentifier:
    owner: str
    renewer: str
    real_user: str
    issue_date_ms: int
    max_date_ms: int
    sequence_number: int
    master_key_id: int

    def to_bytes(self) -> bytes:
        return b"".join(
            (
                bytes([_VERSION]),
                _text(self.owner),
                _text(self.renewer),
                _text(self.real_user),
                write_vlong(self.issue_date_ms),
                write_vlong(self.max_date_ms),
                write_vlong(self.sequence_number),
                write_vlong(self.master_key_id),
            )
        )

    @classmethod
    def from_bytes(cls, data: bytes) -> TokenIdentifier:
        r = _Reader(data)
        version = r.take(1)[0]
        if version != _VERSION:
            raise TokenFormatError(f"unknown token identifier version {version}")
        ident = cls(r.text(), r.text(), r.text(), r.vlong(), r.vlong(), r.vlong(), r.vlong())
        if not r.done():
            raise TokenFormatError("trailing bytes after the token identifier")
        return ident


def password(master_key: bytes, identifier: bytes) -> bytes:
    return hmac.new(master_key, identifier, hashlib.sha1).digest()


@dataclass(frozen=True)
class Token:
    identifier: bytes
    password: bytes
    kind: str = HIVE_KIND
    service: str = ""

    def to_bytes(self) -> bytes:
        """Hadoop's Token.write (a Writable)."""
        return _blob(self.identifier) + _blob(self.password) + _text(self.kind) + _text(self.service)

    def encode(self) -> str:
        """Hadoop's Token.encodeToUrlString."""
        return base64.urlsafe_b64encode(self.to_bytes()).rstrip(b"=").decode("ascii")

    @classmethod
    def decode(cls, text: str) -> Token:
        try:
            data = base64.urlsafe_b64decode(text.strip() + "=" * (-len(text.strip()) % 4))
        except (ValueError, TypeError) as e:
            raise TokenFormatError("not a token's string form (URL-safe base64)") from e
        r = _Reader(data)
        token = cls(r.take(r.vlong()), r.take(r.vlong()), r.text(), r.text())
        if not r.done():
            raise TokenFormatError("trailing bytes after the token")
        return token


def sasl_username(identifier: bytes) -> str:
    return base64.b64encode(identifier).decode("ascii")


def sasl_password(token_password: bytes) -> str:
    return base64.b64encode(token_password).decode("ascii")


def identifier_from_username(username: str) -> bytes:
    try:
        return base64.b64decode(username, validate=True)
    except (ValueError, TypeError) as e:
        raise TokenFormatError("the DIGEST-MD5 username is not a base64 token identifier") from e


#: Hadoop's Credentials token storage file: magic, then the format (0: Writable, 1: protobuf).
TOKEN_STORAGE_MAGIC = b"HDTS"
WRITABLE_FORMAT = 0


def token_storage_file(tokens: dict[str, Token]) -> bytes:
    """Hadoop's token storage file (Credentials.writeTokenStorageFile, Writable format) holding
    `tokens` by alias and no secret keys: what HADOOP_TOKEN_FILE_LOCATION points a Hadoop process
    (Hive's CLI, a Spark driver) at, whose UserGroupInformation then carries the tokens."""
    entries = b"".join(_text(alias) + token.to_bytes() for alias, token in tokens.items())
    return TOKEN_STORAGE_MAGIC + bytes([WRITABLE_FORMAT]) + write_vlong(len(tokens)) + entries + write_vlong(0)

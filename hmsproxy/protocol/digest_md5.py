"""SASL DIGEST-MD5 (RFC 2831), the server's side, QOP auth only: how delegation tokens log in.

The server challenges (realm, nonce, qop="auth", charset=utf-8, algorithm=md5-sess); the client
answers with username, cnonce, nc, digest-uri and `response`, computed from the password it
knows; the server recomputes it from the password it keeps and, when they match, proves that it
knows the password too (`rspauth`). For delegation tokens the username is base64(identifier) and
the password base64(HMAC password) (protocol/delegation_token.py); `password_for(username)` looks
it up and may refuse (SaslError: unknown, expired or cancelled token).

Hive's clients name the digest-uri "<protocol>/default" (Java's SASL client with server name
"default"); the proxy checks only the part after "/", the realm's server name.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable

from hmsproxy.protocol.sasl import SaslError

REALM = "default"


def _md5(data: bytes) -> bytes:
    return hashlib.md5(data).digest()


def _hex(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def response_value(
    username: str,
    realm: str,
    password: str,
    nonce: str,
    cnonce: str,
    nc: str,
    qop: str,
    digest_uri: str,
    authzid: str = "",
    *,
    server: bool = False,
) -> str:
    """RFC 2831 2.1.2.1's response-value; `server=True` gives rspauth's (A2 without "AUTHENTICATE")."""
    a1 = _md5(f"{username}:{realm}:{password}".encode()) + f":{nonce}:{cnonce}".encode()
    if authzid:
        a1 += f":{authzid}".encode()
    a2 = ("" if server else "AUTHENTICATE") + ":" + digest_uri
    return _hex(f"{_hex(a1)}:{nonce}:{nc}:{cnonce}:{qop}:{_hex(a2.encode())}".encode())


def parse_directives(data: bytes) -> dict[str, str]:
    """`key=value` or `key="quoted \\" value"` pairs separated by commas (RFC 2831 7.1's #rule)."""
    text = data.decode("utf-8")
    out: dict[str, str] = {}
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i] in " \t\r\n,":
            i += 1
        if i >= n:
            break
        eq = text.find("=", i)
        if eq < 0:
            raise SaslError("malformed DIGEST-MD5 response (a directive without '=')")
        key = text[i:eq].strip().lower()
        i = eq + 1
        while i < n and text[i] in " \t":
            i += 1
        if i < n and text[i] == '"':
            i += 1
            value = []
            while i < n and text[i] != '"':
                if text[i] == "\\" and i + 1 < n:
                    i += 1
                value.append(text[i])
                i += 1
            if i >= n:
                raise SaslError("malformed DIGEST-MD5 response (an unterminated quoted value)")
            i += 1
            val = "".join(value)
        else:
            end = text.find(",", i)
            end = n if end < 0 else end
            val, i = text[i:end].strip(), end
        if key in out:
            raise SaslError(f"malformed DIGEST-MD5 response ({key} given twice)")
        out[key] = val
    return out


class DigestMd5Server:
    """One client's DIGEST-MD5 negotiation (protocol/sasl.accept drives it)."""

    name = "DIGEST-MD5"

    def __init__(self, password_for: Callable[[str], str], realm: str = REALM, nonce: str | None = None):
        self._password_for = password_for
        self.realm = realm
        self.nonce = nonce or secrets.token_urlsafe(24)
        self._challenged = False
        self._complete = False
        self.username: str | None = None

    @property
    def complete(self) -> bool:
        return self._complete

    @property
    def wraps(self) -> bool:
        return False  # QOP auth only: no security layer

    def challenge(self) -> bytes:
        return f'realm="{self.realm}",nonce="{self.nonce}",qop="auth",charset=utf-8,algorithm=md5-sess'.encode()

    def step(self, token: bytes) -> bytes:
        if not self._challenged:  # the client's initial response is empty: DIGEST-MD5 starts with the server
            self._challenged = True
            return self.challenge()
        return self._verify(parse_directives(token))

    def _verify(self, d: dict[str, str]) -> bytes:
        for key in ("username", "nonce", "cnonce", "nc", "digest-uri", "response"):
            if key not in d:
                raise SaslError(f"DIGEST-MD5 response without {key}")
        qop = d.get("qop", "auth")
        if qop != "auth":
            raise SaslError(f"DIGEST-MD5 QOP {qop} is not offered (the proxy offers auth)")
        if d["nonce"] != self.nonce:
            raise SaslError("DIGEST-MD5 response for another nonce")
        if d.get("realm", self.realm) != self.realm:
            raise SaslError(f"DIGEST-MD5 realm {d['realm']!r} is not {self.realm!r}")
        if d["nc"] != "00000001":
            raise SaslError("DIGEST-MD5 nonce count must be 00000001 (no reauthentication)")
        server_name = d["digest-uri"].split("/")[1:2]
        if server_name != [self.realm]:
            raise SaslError(f"DIGEST-MD5 digest-uri {d['digest-uri']!r} does not name server {self.realm!r}")
        authzid = d.get("authzid", "")
        if authzid and authzid != d["username"]:
            raise SaslError("a token may not act as another user (authzid)")
        password = self._password_for(d["username"])  # raises SaslError: unknown/expired/cancelled
        args = (d["username"], self.realm, password, self.nonce, d["cnonce"], d["nc"], qop, d["digest-uri"], authzid)
        if not hmac.compare_digest(response_value(*args), d["response"].lower()):
            raise SaslError("DIGEST-MD5 authentication failed: wrong password for the token")
        self.username = d["username"]
        self._complete = True
        return f"rspauth={response_value(*args, server=True)}".encode()

    def wrap(self, data: bytes) -> bytes:
        return data

    def unwrap(self, data: bytes) -> bytes:
        return data

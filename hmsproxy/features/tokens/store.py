"""The proxy's own Hive delegation tokens, kept in the store: the `delegation_tokens` component.

Every proxy and worker on one store accepts the tokens any of them issued: master keys and live
tokens are rows, so a token's password is recomputed from its master key wherever it comes back.
Expiry follows Hive (`hive.cluster.delegation.token.renew-interval`, 1 day;
`max-lifetime`, 7 days): a token lives one renew interval, each renewal by its renewer extends it
by another, never past its max date. Its owner or renewer may cancel it (the row goes).
The encoding is Hadoop's (protocol/delegation_token.py).
"""

from __future__ import annotations

import base64
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import BigInteger, Column, Connection, Integer, LargeBinary, MetaData, String, Table, delete, func, select, text, update
from sqlalchemy.exc import IntegrityError

from hmsproxy.pipeline.errors import ProxyError
from hmsproxy.protocol.delegation_token import Token, TokenFormatError, TokenIdentifier, identifier_from_username, password
from hmsproxy.store.schema import StoreSchema

if TYPE_CHECKING:
    from hmsproxy.store.db import Store

COMPONENT = "delegation_tokens"
DAY_MS = 24 * 3600 * 1000
DEFAULT_RENEW_INTERVAL_MS = DAY_MS
DEFAULT_MAX_LIFETIME_MS = 7 * DAY_MS

metadata = MetaData()

#: HMAC keys; a new one each renew interval (Hive rolls its keys daily), kept while a token may use it.
master_keys = Table(
    "hmsproxy_dt_master_keys",
    metadata,
    Column("key_id", Integer, primary_key=True, autoincrement=False),
    Column("secret", LargeBinary, nullable=False),
    Column("created_ms", BigInteger, nullable=False),
    Column("expires_ms", BigInteger, nullable=False),
)

#: Live tokens by sequence number: the identifier as issued and when it stops being accepted.
tokens = Table(
    "hmsproxy_dt_tokens",
    metadata,
    Column("sequence_number", Integer, primary_key=True, autoincrement=False),
    Column("identifier", LargeBinary, nullable=False),
    Column("owner", String(256), nullable=False),
    Column("renewer", String(256), nullable=False),
    Column("expires_ms", BigInteger, nullable=False),
    Column("max_date_ms", BigInteger, nullable=False),
)


def _m001_tokens(conn: Connection) -> None:
    master_keys.create(conn)
    tokens.create(conn)


#: Append-only: never edit or reorder a released migration.
DELEGATION_TOKENS_SCHEMA = StoreSchema(COMPONENT, (_m001_tokens,))

#: On PostgreSQL issuers take turns (held until commit): each picks the next sequence number and key
#: id as max + 1, which concurrent transactions would pick alike, and retrying that under load from
#: several proxies ran out of tries. SQLite's writers queue already (BEGIN IMMEDIATE).
_ISSUERS_TAKE_TURNS = text("SELECT pg_advisory_xact_lock(hashtext('hmsproxy.delegation_tokens.issue'))")


class TokenRefused(ProxyError):
    """A token that is unknown, forged, expired or cancelled, or an operation its caller may not do."""


@dataclass(frozen=True)
class Verified:
    identifier: TokenIdentifier
    password: bytes


class DelegationTokens:
    def __init__(
        self,
        store: Store,
        renew_interval_ms: int = DEFAULT_RENEW_INTERVAL_MS,
        max_lifetime_ms: int = DEFAULT_MAX_LIFETIME_MS,
        clock: Callable[[], float] = time.time,
    ):
        if COMPONENT not in store.components:
            raise ValueError(f"{store!r} was opened without DELEGATION_TOKENS_SCHEMA")
        self._store = store
        self.renew_interval_ms = renew_interval_ms
        self.max_lifetime_ms = max_lifetime_ms
        self._clock = clock

    def _now_ms(self) -> int:
        return int(self._clock() * 1000)

    def issue(self, owner: str, renewer: str, real_user: str = "") -> str:
        """A new token for `owner`, renewable by `renewer`: its string form (encodeToUrlString).
        The caller gives the renewer's short name, which Hadoop's identifier keeps (feature.py)."""
        for _ in range(20):  # another process may take the same key id or sequence number: try again
            now = self._now_ms()
            try:
                with self._store.writing() as conn:
                    if self._store.dialect == "postgresql":
                        conn.execute(_ISSUERS_TAKE_TURNS)
                    key_id, secret = self._current_key(conn, now)
                    seq = (conn.execute(select(func.max(tokens.c.sequence_number))).scalar() or 0) + 1
                    ident = TokenIdentifier(owner, renewer, real_user, now, now + self.max_lifetime_ms, seq, key_id)
                    raw = ident.to_bytes()
                    conn.execute(
                        tokens.insert().values(
                            sequence_number=seq,
                            identifier=raw,
                            owner=owner,
                            renewer=renewer,
                            expires_ms=min(now + self.renew_interval_ms, ident.max_date_ms),
                            max_date_ms=ident.max_date_ms,
                        )
                    )
                    conn.execute(delete(tokens).where(tokens.c.expires_ms < now))  # expired ones are refused anyway
                    conn.execute(delete(master_keys).where(master_keys.c.expires_ms < now))
                return Token(raw, password(secret, raw)).encode()
            except IntegrityError:
                continue
        raise TokenRefused("could not issue a delegation token: the store stayed busy")

    def _current_key(self, conn: Connection, now: int) -> tuple[int, bytes]:
        row = conn.execute(select(master_keys).order_by(master_keys.c.key_id.desc()).limit(1)).first()
        if row is not None and row.created_ms + self.renew_interval_ms > now:
            return row.key_id, row.secret
        key_id = (row.key_id if row is not None else 0) + 1
        secret = secrets.token_bytes(20)
        conn.execute(
            master_keys.insert().values(
                key_id=key_id, secret=secret, created_ms=now, expires_ms=now + self.max_lifetime_ms + self.renew_interval_ms
            )
        )
        return key_id, secret

    def _verify(self, conn: Connection, raw: bytes, given_password: bytes | None) -> Verified:
        try:
            ident = TokenIdentifier.from_bytes(raw)
        except TokenFormatError as e:
            raise TokenRefused(f"not a delegation token: {e}") from e
        row = conn.execute(select(tokens).where(tokens.c.sequence_number == ident.sequence_number)).first()
        if row is None or row.identifier != raw:
            raise TokenRefused(f"delegation token {ident.sequence_number} of {ident.owner} is unknown or cancelled")
        key = conn.execute(select(master_keys.c.secret).where(master_keys.c.key_id == ident.master_key_id)).scalar()
        if key is None:
            raise TokenRefused(f"delegation token {ident.sequence_number} of {ident.owner}: its master key is gone")
        expected = password(key, raw)
        if given_password is not None and not secrets.compare_digest(expected, given_password):
            raise TokenRefused(f"delegation token {ident.sequence_number} of {ident.owner}: wrong password")
        now = self._now_ms()
        if row.expires_ms < now:
            raise TokenRefused(
                f"delegation token {ident.sequence_number} of {ident.owner} expired at {_iso(row.expires_ms)} (renew before then; max date {_iso(row.max_date_ms)})"
            )
        return Verified(ident, expected)

    def _decoded(self, token_str: str) -> Token:
        try:
            return Token.decode(token_str)
        except TokenFormatError as e:
            raise TokenRefused(f"not a delegation token: {e}") from e

    def renew(self, token_str: str, caller: str) -> int:
        """The new expiry (ms since the epoch); only the renewer named in the token, `caller` being
        the caller's short name, may renew it (Hive 3's rule; Hive 2.3 compared the full name)."""
        token = self._decoded(token_str)
        with self._store.writing() as conn:
            ident = self._verify(conn, token.identifier, token.password).identifier
            if not ident.renewer:
                raise TokenRefused(f"{caller} tried to renew a token of {ident.owner} without a renewer")
            if caller != ident.renewer:
                raise TokenRefused(f"{caller} tried to renew a token of {ident.owner} without being its renewer ({ident.renewer})")
            expires = min(self._now_ms() + self.renew_interval_ms, ident.max_date_ms)
            conn.execute(update(tokens).where(tokens.c.sequence_number == ident.sequence_number).values(expires_ms=expires))
        return expires

    def cancel(self, token_str: str, caller: str, short_name: Callable[[str], str | None] | None = None) -> None:
        """Only the token's owner or renewer may cancel it, on short names: `caller` is the caller's,
        `short_name` gives the owner's as recorded (alice@REALM or alice; default: as it is). Hive's
        metastore lets anyone cancel any token; the proxy keeps Hadoop's owner-or-renewer rule."""
        token = self._decoded(token_str)
        with self._store.writing() as conn:
            ident = self._verify(conn, token.identifier, token.password).identifier
            owner = short_name(ident.owner) if short_name is not None else ident.owner
            if caller not in (owner, ident.renewer):
                raise TokenRefused(f"{caller} is not allowed to cancel a token of {ident.owner} (renewer {ident.renewer or 'none'})")
            conn.execute(delete(tokens).where(tokens.c.sequence_number == ident.sequence_number))

    def sasl_login(self, username: str) -> Verified:
        """DIGEST-MD5's lookup: the token behind a username (base64 identifier), if it is live."""
        try:
            raw = identifier_from_username(username)
        except TokenFormatError as e:
            raise TokenRefused(str(e)) from e
        with self._store.reading() as conn:
            return self._verify(conn, raw, None)

    def digest_password(self, username: str) -> str:
        """The DIGEST-MD5 password for a token's username: base64 of its HMAC password."""
        return base64.b64encode(self.sasl_login(username).password).decode("ascii")


def _iso(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ms / 1000))

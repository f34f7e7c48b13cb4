"""Delegation tokens in the store (features/tokens/store.py), on real SQLite store files."""

from __future__ import annotations

import pytest

from hmsproxy.features.tokens.store import DAY_MS, DELEGATION_TOKENS_SCHEMA, DelegationTokens, TokenRefused
from hmsproxy.protocol.delegation_token import Token, TokenIdentifier, sasl_password, sasl_username
from hmsproxy.store.db import Store


class Clock:
    def __init__(self):
        self.now = 1_800_000_000.0

    def __call__(self):
        return self.now


@pytest.fixture
def store_url(tmp_path):
    return f"sqlite:///{tmp_path / 'store.db'}"


def _open(url, clock):
    store = Store(url, [DELEGATION_TOKENS_SCHEMA])
    store.migrate()
    return store, DelegationTokens(store, clock=clock)


@pytest.fixture
def tokens(store_url):
    store, dt = _open(store_url, Clock())
    yield dt
    store.close()


def _ident(token_str) -> TokenIdentifier:
    return TokenIdentifier.from_bytes(Token.decode(token_str).identifier)


def test_issued_token_carries_owner_renewer_and_hive_limits(tokens):
    text = tokens.issue("alice@EXAMPLE.COM", "hive", "svc@EXAMPLE.COM")
    ident = _ident(text)
    assert (ident.owner, ident.renewer, ident.real_user) == (
        "alice@EXAMPLE.COM",
        "hive",
        "svc@EXAMPLE.COM",
    )  # as given (feature.py shortens)
    assert ident.max_date_ms - ident.issue_date_ms == 7 * DAY_MS
    assert Token.decode(text).kind == "HIVE_DELEGATION_TOKEN"
    assert _ident(tokens.issue("alice", "hive")).sequence_number == ident.sequence_number + 1


def test_digest_password_is_the_tokens_password(tokens):
    token = Token.decode(tokens.issue("alice", "hive"))
    assert tokens.digest_password(sasl_username(token.identifier)) == sasl_password(token.password)
    assert tokens.sasl_login(sasl_username(token.identifier)).identifier.owner == "alice"


def test_only_the_renewer_renews_and_expiry_moves_but_not_past_max_date(store_url):
    clock = Clock()
    store, dt = _open(store_url, clock)
    text = dt.issue("alice", "hive")
    with pytest.raises(TokenRefused, match="renewer"):
        dt.renew(text, "mallory")
    clock.now += 3600
    assert dt.renew(text, "hive") == int(clock.now * 1000) + DAY_MS
    for _ in range(7):  # renewed within each day, it lives until its max date and no longer
        clock.now += 23 * 3600
        last = dt.renew(text, "hive")
    assert last == _ident(text).max_date_ms
    clock.now += 86400
    with pytest.raises(TokenRefused, match="expired"):
        dt.renew(text, "hive")
    store.close()


def test_expired_token_is_refused_with_when(store_url):
    clock = Clock()
    store, dt = _open(store_url, clock)
    text = dt.issue("alice", "hive")
    clock.now += 86400 + 1
    with pytest.raises(TokenRefused, match="of alice expired at 20"):
        dt.sasl_login(sasl_username(Token.decode(text).identifier))
    with pytest.raises(TokenRefused, match="expired"):
        dt.renew(text, "hive")
    store.close()


def test_cancel_by_owner_or_renewer_only_then_refused(tokens):
    text = tokens.issue("alice", "hive")
    with pytest.raises(TokenRefused, match="not allowed"):
        tokens.cancel(text, "mallory")
    tokens.cancel(text, "alice")
    with pytest.raises(TokenRefused, match="unknown or cancelled"):
        tokens.sasl_login(sasl_username(Token.decode(text).identifier))
    other = tokens.issue("bob", "hive")
    tokens.cancel(other, "hive")
    with pytest.raises(TokenRefused, match="cancelled"):
        tokens.renew(other, "hive")


def test_cancel_by_owner_or_renewer_on_short_names(tokens):
    """The caller's short name is the owner's, as recorded (full or short), or the renewer."""
    short = {"alice@EXAMPLE.COM": "alice", "alice": "alice"}.get
    full = tokens.issue("alice@EXAMPLE.COM", "hive")
    with pytest.raises(TokenRefused, match="mallory is not allowed to cancel a token of alice@EXAMPLE.COM"):
        tokens.cancel(full, "mallory", short)
    tokens.cancel(full, "alice", short)
    tokens.cancel(tokens.issue("alice", "hive"), "alice", short)
    tokens.cancel(tokens.issue("alice@EXAMPLE.COM", "hive"), "hive", short)  # the renewer
    nobody = tokens.issue("alice", "")
    with pytest.raises(TokenRefused, match="without a renewer"):
        tokens.renew(nobody, "alice")


def test_forged_password_or_identifier_is_refused(tokens):
    token = Token.decode(tokens.issue("alice", "hive"))
    with pytest.raises(TokenRefused, match="wrong password"):
        tokens.renew(Token(token.identifier, b"x" * 20).encode(), "hive")
    ident = TokenIdentifier.from_bytes(token.identifier)
    forged = TokenIdentifier(
        "root", ident.renewer, "", ident.issue_date_ms, ident.max_date_ms, ident.sequence_number, ident.master_key_id
    ).to_bytes()
    with pytest.raises(TokenRefused, match="unknown"):
        tokens.sasl_login(sasl_username(forged))
    with pytest.raises(TokenRefused, match="not a delegation token"):
        tokens.cancel("not-a-token", "alice")


def test_two_proxies_on_one_store_accept_each_others_tokens(store_url):
    clock = Clock()
    store_a, a = _open(store_url, clock)
    store_b, b = _open(store_url, clock)
    text = a.issue("alice", "hive")
    assert b.sasl_login(sasl_username(Token.decode(text).identifier)).identifier.owner == "alice"
    assert b.renew(text, "hive") > 0
    second = b.issue("bob", "hive")
    assert _ident(second).sequence_number == _ident(text).sequence_number + 1
    b.cancel(text, "alice")
    with pytest.raises(TokenRefused):
        a.renew(text, "hive")
    store_a.close()
    store_b.close()

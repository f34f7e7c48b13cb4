"""Several proxies issuing delegation tokens at once on one store (features/tokens/store.py): on a
SQLite file and on a self-started PostgreSQL, every token gets its own sequence number and every one
logs in. (On PostgreSQL, issuers racing for max + 1 used to run out of retries: "the store stayed busy".)"""

from __future__ import annotations

import threading

import pytest

from hmsproxy.features.tokens.store import DELEGATION_TOKENS_SCHEMA, DelegationTokens
from hmsproxy.protocol.delegation_token import Token, TokenIdentifier, sasl_username
from hmsproxy.store.db import Store

PROXIES, THREADS_EACH, TOKENS_EACH = 4, 2, 25


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path):
    return f"sqlite:///{tmp_path / 'store.db'}" if request.param == "sqlite" else request.getfixturevalue("pg_url")


def test_issuers_on_one_store_never_collide(url):
    stores = [Store(url, [DELEGATION_TOKENS_SCHEMA]) for _ in range(PROXIES)]
    try:
        for store in stores:
            store.migrate()
        issued, errors = [], []

        def issue(tokens: DelegationTokens) -> None:
            try:
                for _ in range(TOKENS_EACH):
                    issued.append(tokens.issue("alice", "alice"))
            except Exception as e:  # noqa: BLE001 - reported by the test
                errors.append(e)

        threads = [threading.Thread(target=issue, args=(DelegationTokens(s),)) for s in stores for _ in range(THREADS_EACH)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert not any(t.is_alive() for t in threads)
        assert not errors, errors[:3]
        numbers = {TokenIdentifier.from_bytes(Token.decode(t).identifier).sequence_number for t in issued}
        assert len(issued) == len(numbers) == PROXIES * THREADS_EACH * TOKENS_EACH
        other = DelegationTokens(stores[-1])
        for token in issued:  # each one is live, whichever proxy issued it
            assert other.sasl_login(sasl_username(Token.decode(token).identifier)).identifier.owner == "alice"
    finally:
        for store in stores:
            store.close()

"""Fixtures shared by unit test modules.

`handler`: a real handler (every feature) over fake metastores, tests/support/fake_handlers.py's
fake_federation, whose primary is the test module's own `primary` fixture (a FakeMetastore holding
what the module's tests need). A module that needs another handler defines its own `handler`,
which pytest takes instead of this one.

`remotes_repo`: the remotes' records (RemoteRepository) on a real SQLite store at
`tmp_path / "store.db"` (a test may open a second store on that file, as another proxy would).
"""

from __future__ import annotations

import pytest

from hmsproxy.features.remotes.store import REMOTES_SCHEMA, RemoteRepository
from hmsproxy.store import Store
from tests.support.fake_handlers import fake_federation


@pytest.fixture
def handler(tmp_path, primary):
    h = fake_federation(tmp_path, primary)
    yield h
    h.close()


@pytest.fixture
def remotes_repo(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'store.db'}", [REMOTES_SCHEMA])
    yield RemoteRepository(store)
    store.close()

"""Fixtures shared by unit test modules.

`handler`: a real handler (every feature) over fake metastores, tests/support/fake_handlers.py's
fake_federation, whose primary is the test module's own `primary` fixture (a FakeMetastore holding
what the module's tests need). A module that needs another handler defines its own `handler`,
which pytest takes instead of this one.
"""

from __future__ import annotations

import pytest

from tests.support.fake_handlers import fake_federation


@pytest.fixture
def handler(tmp_path, primary):
    h = fake_federation(tmp_path, primary)
    yield h
    h.close()

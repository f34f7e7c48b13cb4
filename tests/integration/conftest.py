"""Fixtures of the integration tests that run hmsproxy's statements."""

from __future__ import annotations

import uuid

import pytest

from hmsproxy.clients.proxy import HmsProxyClient


@pytest.fixture
def tag():
    """A fresh suffix for names, so tests on the session's shared metastores never meet."""
    return uuid.uuid4().hex[:8]


@pytest.fixture
def run(proxy):
    """run(sql) -> the last statement's rows as dicts (the Python client, as user alice, in `default`)."""
    client = HmsProxyClient(proxy.uri, user="alice")
    yield lambda sql: client.execute(sql, database="default")[-1].as_dicts()
    client.close()

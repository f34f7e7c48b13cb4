"""A feature whose verdict depends on who asks, through a real proxy in front of a real Hive metastore with
relay shortcuts on (hmsproxy/pipeline/fastpath.py): a decision remembered for one caller is never another's.

Before shortcuts were keyed by the caller, bob's get_table within TTL_S of alice's was relayed on
alice's remembered decision without asking the feature."""

from __future__ import annotations

import uuid
from contextlib import closing

import pytest

from hmsproxy.app import FEATURES, build_handler
from hmsproxy.pipeline import shortcuts
from hmsproxy.protocol import idl
from hmsproxy.testing import table
from tests.support.proxy_clients import client_as
from tests.support.refusing_feature import NoBob
from tests.support.served import served

hive = idl.hive


@pytest.fixture(autouse=True)
def long_lived(monkeypatch):
    """Remembered decisions outlive a slow machine's pauses: every repeat could take a shortcut."""
    monkeypatch.setattr(shortcuts, "TTL_S", 60.0)


@pytest.fixture
def guarded_proxy(default_config):
    with served(build_handler(default_config, (*FEATURES, NoBob))) as server:
        yield server


@pytest.fixture
def a_table(metastores):
    name = f"vpc_{uuid.uuid4().hex[:8]}"
    with closing(metastores[0].client()) as direct:
        direct.create_table(table("default", name))
        yield name
        direct.drop_table("default", name, True)


def test_alternating_callers_are_each_refused_or_served_with_shortcuts_on(guarded_proxy, a_table):
    handler = guarded_proxy.handler
    rule = handler.features.get("no_bob")
    with client_as(guarded_proxy, "alice") as alice, client_as(guarded_proxy, "bob") as bob:
        for _ in range(5):
            assert alice.get_table("default", a_table).tableName == a_table
            with pytest.raises(hive.MetaException, match="bob may not read tables"):
                bob.get_table("default", a_table)
    assert rule.asked.count("bob") == 5  # asked on every one of bob's calls
    # alice's repeats took her own shortcut: the path that bob's calls would have taken on her decision
    assert handler.shortcuts.used >= 1 and rule.asked.count("alice") == 5 - handler.shortcuts.used

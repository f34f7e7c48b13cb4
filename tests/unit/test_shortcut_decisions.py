"""Relay shortcuts (hmsproxy/shortcuts.py): what is kept, for how long, and what drops it."""

from __future__ import annotations

from hmsproxy import shortcuts
from hmsproxy.config_model import MetastoreConfig
from hmsproxy.shortcuts import Shortcuts, changes_nothing, is_read

PRIMARY = MetastoreConfig(name="primary", uris=("thrift://127.0.0.1:1",))
ROUTER, OTHER_ROUTER = object(), object()
KEY = ("get_table", "db", "t")


def test_a_decision_is_found_for_the_same_call_on_the_same_config():
    cuts = Shortcuts()
    cuts.remember(KEY, PRIMARY, None, ROUTER, cuts.generation)
    found = cuts.find(KEY, ROUTER)
    assert found is not None and found.metastore is PRIMARY and cuts.used == 1
    assert cuts.find(("get_table", "db", "u"), ROUTER) is None
    assert cuts.find(KEY, OTHER_ROUTER) is None  # a reload made another router


def test_a_decision_made_while_everything_was_dropped_is_not_kept():
    cuts = Shortcuts()
    began = cuts.generation
    cuts.forget_all()  # a write between the read's start and its decision
    cuts.remember(KEY, PRIMARY, None, ROUTER, began)
    assert cuts.find(KEY, ROUTER) is None and len(cuts) == 0


def test_decisions_expire(monkeypatch):
    clock = [100.0]
    monkeypatch.setattr(shortcuts.time, "monotonic", lambda: clock[0])
    cuts = Shortcuts()
    cuts.remember(KEY, PRIMARY, b"catalog", ROUTER, cuts.generation)
    clock[0] += shortcuts.TTL_S
    assert cuts.find(KEY, ROUTER).catalog_field == b"catalog"
    clock[0] += 0.001
    assert cuts.find(KEY, ROUTER) is None


def test_the_number_kept_is_bounded(monkeypatch):
    monkeypatch.setattr(shortcuts, "MAX_SHORTCUTS", 3)
    cuts = Shortcuts()
    for i in range(7):
        cuts.remember(("get_table", "db", f"t{i}"), PRIMARY, None, ROUTER, cuts.generation)
        assert len(cuts) <= 3


def test_which_calls_take_or_keep_shortcuts():
    assert is_read("get_table") and is_read("get_partitions_by_filter")
    assert not is_read("get_all_databases")  # a fan-out: merged, never relayed
    assert not is_read("alter_table") and not is_read("getStatus")
    assert changes_nothing("get_table") and changes_nothing("set_ugi")
    assert not changes_nothing("create_table") and not changes_nothing("hmsproxy_execute")

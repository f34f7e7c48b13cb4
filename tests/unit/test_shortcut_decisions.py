"""Relay shortcuts (hmsproxy/pipeline/shortcuts.py): what is kept, for how long, and what drops it."""

from __future__ import annotations

from types import SimpleNamespace

from thriftpy2.protocol import TBinaryProtocolFactory
from thriftpy2.thrift import TMessageType
from thriftpy2.utils import serialize

from hmsproxy.config.model import MetastoreConfig
from hmsproxy.pipeline import shortcuts
from hmsproxy.pipeline.plan import Plan
from hmsproxy.pipeline.plan import relayed as relayed_plan
from hmsproxy.pipeline.shortcuts import Shortcuts, changes_nothing, is_read, shortcut_key
from hmsproxy.protocol import idl
from hmsproxy.protocol.framing import Message, header_bytes, message_header
from hmsproxy.protocol.relay import CatalogFill, RelayPlan

PRIMARY = MetastoreConfig(name="primary", uris=("thrift://127.0.0.1:1",))
ROUTER, OTHER_ROUTER = object(), object()


def get_table(db: str, table: str, seqid: int = 1) -> Message:
    data = header_bytes("get_table", TMessageType.CALL, seqid) + serialize(idl.HmsProxy.get_table_args(db, table), TBinaryProtocolFactory())
    return Message(data, message_header(data))


KEY = shortcut_key(get_table("db", "t"))


def relayed(router=ROUTER):
    """A call as the handler has it once relayed (what remember() reads of it)."""
    return SimpleNamespace(router=router, client_db="db", table="t")


def plan(catalog_field=None, metastore=PRIMARY) -> Plan:
    """A relay Plan to `metastore`, as FastPath.plan makes one for a call it may remember."""
    return relayed_plan(metastore, RelayPlan(catalog_field), remembered=True)


def test_the_key_is_the_method_and_the_arguments_bytes():
    assert shortcut_key(get_table("db", "t", seqid=7)) == KEY  # whatever the sequence id
    assert shortcut_key(get_table("db", "u")) != KEY and shortcut_key(get_table("dbx", "t")) != KEY
    assert shortcut_key(get_table("db", "t" * (shortcuts.MAX_KEY_BYTES + 1))) is None  # too long to keep


def test_a_decision_is_found_for_the_same_call_on_the_same_config():
    cuts = Shortcuts()
    kept = plan()
    cuts.remember(KEY, relayed(), kept, cuts.generation)
    found = cuts.find(KEY, ROUTER)
    assert found is not None and found.plan is kept and found.plan.metastore is PRIMARY and cuts.used == 1
    assert (found.client_db, found.table) == ("db", "t")  # for the call's audit line
    assert cuts.find(shortcut_key(get_table("db", "u")), ROUTER) is None
    assert cuts.find(KEY, OTHER_ROUTER) is None  # a reload made another router


def test_a_decision_made_while_everything_was_dropped_is_not_kept():
    cuts = Shortcuts()
    began = cuts.generation
    cuts.forget_all()  # a write between the read's start and its decision
    cuts.remember(KEY, relayed(), plan(), began)
    assert cuts.find(KEY, ROUTER) is None and len(cuts) == 0


def test_decisions_expire(monkeypatch):
    clock = [100.0]
    monkeypatch.setattr(shortcuts.time, "monotonic", lambda: clock[0])
    cuts = Shortcuts()
    fill = CatalogFill(field=b"catalog", fid=6)
    cuts.remember(KEY, relayed(), plan(fill), cuts.generation)
    clock[0] += shortcuts.TTL_S
    assert cuts.find(KEY, ROUTER).plan.relay.catalog_field is fill
    clock[0] += 0.001
    assert cuts.find(KEY, ROUTER) is None


def test_the_number_kept_is_bounded(monkeypatch):
    monkeypatch.setattr(shortcuts, "MAX_SHORTCUTS", 3)
    cuts = Shortcuts()
    for i in range(7):
        cuts.remember(shortcut_key(get_table("db", f"t{i}")), relayed(), plan(), cuts.generation)
        assert len(cuts) <= 3


def test_which_calls_take_or_keep_shortcuts():
    assert is_read("get_table") and is_read("get_partitions_by_filter")
    assert not is_read("get_all_databases")  # a fan-out: merged, never relayed
    assert not is_read("alter_table") and not is_read("getStatus")
    assert changes_nothing("get_table") and changes_nothing("set_ugi")
    assert not changes_nothing("create_table") and not changes_nothing("hmsproxy_execute")
    assert not changes_nothing("get_index_by_name")  # a read, but the next get_table must reach the indexes feature

"""Each metastore's stack (upstream/stack.py) is built once and rebuilt when what it holds changes:
a reload that adds a cache, the limits feature's caps, a remote target outside the config. Real
Backends and Session over fake metastores (hmsproxy.testing: no socket)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from hmsproxy.config.model import CacheConfig, Config, DatabaseResolution, MetastoreConfig, ServerConfig
from hmsproxy.protocol import idl
from hmsproxy.testing import FakeMetastore, database, fake_connect, table
from hmsproxy.upstream.backends import Backends
from hmsproxy.upstream.session import Session
from hmsproxy.upstream.slots import BackendBusy, SlotRule

PRIMARY = MetastoreConfig("primary", ("thrift://primary:9083",), primary=True)
CONFIG = Config(ServerConfig(), DatabaseResolution.PREFIXED, PRIMARY)
GET_TABLE = idl.HmsProxy.get_table_args(dbname="sales", tbl_name="orders")


@pytest.fixture
def rig():
    fake = FakeMetastore("primary")
    fake.create_database(database("sales"))
    fake.create_table(table("sales", "orders"))
    backends = Backends(CONFIG, connect=fake_connect({"primary": fake, "remote": fake}))
    yield backends, fake
    backends.close()


def _get_tables(fake: FakeMetastore) -> int:
    return sum(1 for c in fake.calls if c.method == "get_table")


def test_the_same_stack_serves_every_call_until_the_config_changes(rig):
    backends, fake = rig
    built = backends.stacks["primary"]  # built with the config, before any call
    session = Session(backends)
    for _ in range(2):
        assert session.call(PRIMARY, "get_table", GET_TABLE, read_only=True).success.tableName == "orders"
    assert backends.stack(PRIMARY) is built and _get_tables(fake) == 2  # no cache: both asked

    cached = replace(PRIMARY, cache=CacheConfig(follow_notifications=False))
    backends.reconfigure(replace(CONFIG, primary=cached))  # a reload: the cache is in the new stack
    assert backends.stacks["primary"].metastore is cached  # built by the reload, before any call
    for _ in range(2):
        assert session.call(cached, "get_table", GET_TABLE, read_only=True).success.tableName == "orders"
    assert _get_tables(fake) == 3  # the second answered from the cache


def test_a_cap_set_after_start_holds_the_calls_of_the_stack_rebuilt_for_it(rig):
    backends, _ = rig
    session = Session(backends)
    backends.slots.configure({"primary": SlotRule(cap=1, queue_s=0.0)})
    with backends.slots.capped["primary"]:  # the one slot taken
        with pytest.raises(BackendBusy):
            session.call(PRIMARY, "get_table", GET_TABLE, read_only=True)
    backends.slots.configure({})
    with backends.slots.taken("primary"):  # no cap any more: nothing to wait for
        assert session.call(PRIMARY, "get_table", GET_TABLE, read_only=True).success.tableName == "orders"


def test_a_metastore_outside_the_config_gets_one_stack_for_equal_configs(rig):
    backends, _ = rig
    remote = MetastoreConfig("remote", ("thrift://remote:9083",))
    backends.extra["remote"] = remote
    session = Session(backends)
    assert session.call(remote, "get_table", GET_TABLE, read_only=True).success.tableName == "orders"
    built = backends.stack(remote)
    assert backends.stack(replace(remote)) is built  # an equal copy: the same policies
    assert backends.stack(replace(remote, uris=("thrift://elsewhere:9083",))) is not built


def test_two_renamed_copies_of_one_metastore_keep_a_stack_each(rig):
    """Two links renaming databases of one target (or of a configured metastore) hold a copy each of
    its config: each copy's stack is built once, not rebuilt whenever the other link was used last."""
    backends, _ = rig
    sales = replace(PRIMARY, database_name_mapping={"sales": "fed_sales"})
    ops = replace(PRIMARY, database_name_mapping={"ops": "fed_ops"})
    for_sales, for_ops = backends.stack(sales), backends.stack(ops)
    assert for_sales is not for_ops and for_sales.metastore is sales and for_ops.metastore is ops
    assert backends.stack(sales) is for_sales and backends.stack(ops) is for_ops
    assert backends.stack(PRIMARY) is backends.stacks["primary"]
    backends.rebuild_stacks()  # a reload, or new caps: the copies' stacks are built again with them
    assert backends.stack(sales) is not for_sales

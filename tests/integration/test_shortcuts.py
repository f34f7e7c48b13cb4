"""Relay shortcuts (hmsproxy/pipeline/shortcuts.py) through the session's proxy and a real Hive 2.3 metastore:
a repeated read is relayed again as the client sent it, answers stay those of the full path, and
writes, statements, reloads and time drop what was decided."""

from __future__ import annotations

import json
import uuid
from dataclasses import replace

import pytest
import thriftpy2.rpc

from hmsproxy.config.model import AuditConfig
from hmsproxy.pipeline import fastpath, shortcuts
from hmsproxy.protocol import idl
from hmsproxy.testing import partition, table

hive = idl.hive


@pytest.fixture(autouse=True)
def long_lived(monkeypatch):
    """Decisions outlive a slow CI machine's pauses (the expiry has its own test)."""
    monkeypatch.setattr(shortcuts, "TTL_S", 60.0)


@pytest.fixture
def client(proxy):
    c = thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", proxy.port, timeout=60_000)
    yield c
    c.close()


@pytest.fixture
def daily(metastores):
    """default.sc_<id> on the primary with partitions ds=1..4."""
    name = f"sc_{uuid.uuid4().hex[:8]}"
    direct = metastores[0].client()
    direct.create_table(table("default", name, partition_keys=(("ds", "string"),)))
    direct.add_partitions([partition("default", name, [d]) for d in "1234"])
    yield name
    direct.drop_table("default", name, True)
    direct.close()


def used(proxy) -> int:
    return proxy.handler.shortcuts.used


def test_a_repeated_read_is_relayed_as_sent_and_answers_as_the_full_path(proxy, client, daily, metastores):
    direct = metastores[0].client()
    try:
        client.get_table("default", daily)  # Hive 4 lacks get_table: relayed once the backend has answered it
        first = client.get_table("default", daily)  # relayed, and so decided
        before = used(proxy)
        assert client.get_table("default", daily) == first
        assert used(proxy) == before + 1
        assert first.catNameHive3 == "hive"  # the catalog a Hive 2.3 metastore leaves out is still added
        # One decision per method and arguments: each filter is decided once, then its request goes as the client sent it.
        for ds in "1234":
            for _ in range(2):
                got = client.get_partitions_by_filter("default", daily, f"ds = '{ds}'", -1)
                assert [p.values for p in got] == [[ds]] and got[0].catName == "hive"
                assert got == [replace_catalog(p) for p in direct.get_partitions_by_filter("default", daily, f"ds = '{ds}'", -1)]
        assert used(proxy) == before + 1 + 4
        # A declared exception comes back the same way.
        for _ in range(3):
            with pytest.raises(hive.NoSuchObjectException):
                client.get_table("default", f"{daily}_missing")
        assert used(proxy) == before + 5 + 2  # the first decides
    finally:
        direct.close()


def replace_catalog(partition_):
    partition_.catName = "hive"
    return partition_


def test_repeated_reads_are_answered_by_the_hit_loop_without_python(proxy, client, daily, monkeypatch):
    """downstream/hits.py: once decided, a read is served in C call after call (FastPath.shortcut,
    the Python hit, is not reached), answering as the full path does."""
    through_python = []
    python_hit = fastpath.FastPath.shortcut
    monkeypatch.setattr(fastpath.FastPath, "shortcut", lambda self, call: through_python.append(call) or python_hit(self, call))
    first = [client.get_table("default", daily) for _ in range(2)][-1]  # the full path, then the relay decides
    before, python_before = used(proxy), len(through_python)
    for _ in range(10):
        assert client.get_table("default", daily) == first
        assert client.get_partitions_by_filter("default", daily, "ds = '2'", -1)[0].catName == "hive"
    assert used(proxy) >= before + 19  # each get_table, and every get_partitions_by_filter after its first
    assert len(through_python) <= python_before + 1  # that first one alone


def test_writes_and_statements_drop_every_decision(proxy, client, daily):
    client.get_partition_names("default", daily, -1)
    assert len(proxy.handler.shortcuts) >= 1
    client.add_partitions([partition("default", daily, ["5"])])
    assert len(proxy.handler.shortcuts) == 0
    before = used(proxy)
    assert len(client.get_partition_names("default", daily, -1)) == 5  # decided again: the full path
    assert used(proxy) == before
    assert len(proxy.handler.shortcuts) >= 1
    client.hmsproxy_execute("SHOW REMOTE DATABASES", "default")  # the proxy's own statements may change what features answer
    assert len(proxy.handler.shortcuts) == 0


def test_a_reload_drops_every_decision(proxy, proxy_config, client, daily):
    client.get_partition_names("default", daily, -1)
    before = used(proxy)
    with proxy_config(lambda base: replace(base, server=replace(base.server, fanout_timeout_ms=base.server.fanout_timeout_ms + 1))):
        client.get_partition_names("default", daily, -1)
        assert used(proxy) == before  # another config snapshot: decided again
        client.get_partition_names("default", daily, -1)
        assert used(proxy) == before + 1


def test_decisions_expire(proxy, client, daily, monkeypatch):
    monkeypatch.setattr(shortcuts, "TTL_S", 0.0)
    client.get_partition_names("default", daily, -1)
    before = used(proxy)
    client.get_partition_names("default", daily, -1)
    assert used(proxy) == before


def test_shortcut_calls_are_audited_like_the_others(proxy, proxy_config, client, daily, tmp_path):
    log_file = tmp_path / "audit.jsonl"
    with proxy_config(lambda base: replace(base, audit=AuditConfig(enabled=True, file=str(log_file)))):
        for _ in range(2):
            client.get_partition_names("default", daily, -1)
        for _ in range(2):
            with pytest.raises(hive.NoSuchObjectException):
                client.get_partitions("default", f"{daily}_missing", -1)
        assert used(proxy) >= 2  # the second of each
    lines = [json.loads(line) for line in log_file.read_text().splitlines()]
    seen = [(r["method"], r["db"], r["table"], r["backend"], r["outcome"]) for r in lines]
    assert (
        seen
        == [("get_partition_names", "default", daily, "primary", "ok")] * 2
        + [("get_partitions", "default", f"{daily}_missing", "primary", "NoSuchObjectException")] * 2
    )

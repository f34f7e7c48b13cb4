"""Hedged reads on a real HA pair: two Hive 2.3 metastores over one PostgreSQL database behind the proxy.

The instance the proxy connects to first is SIGSTOPped (a hung metastore: its sockets stay open,
nothing answers). Reads keep being answered by the other instance through the hedge; a write is
never hedged (it waits on the stopped instance and fails by the breaker's rules); after SIGCONT
everything is answered again.
"""

from __future__ import annotations

import threading
import time

import pytest
import thriftpy2.rpc

from hmsproxy.config.model import HedgeConfig
from hmsproxy.protocol import idl
from tests.support.ha_pair import ha_config, plain_table, stalled
from tests.support.served import served

#: Long enough for any hedged read on a loaded 2-core machine; a read without the hedge waits for
#: the stopped instance until BACKEND_TIMEOUT_S and more.
READ_WAIT_S = 30
#: The proxy's backend call timeout here: how long a write to the stopped instance may wait.
BACKEND_TIMEOUT_S = 15
HEDGE = HedgeConfig(percentile=95, min_ms=100, max_ms=500)


@pytest.fixture(scope="module")
def proxy(ha_pair):
    with served(ha_config(ha_pair, HEDGE, backend_timeout_s=BACKEND_TIMEOUT_S)) as server:
        client = _client(server)
        try:
            location = (ha_pair.first.state_dir.parent / "warehouse" / "hedged.db").as_uri()
            client.create_database(idl.hive.Database(name="hedged", locationUri=location, parameters={}))
            client.create_table(plain_table("hedged", "t"))
        finally:
            client.close()
        yield server


def _client(server, timeout_s: float = READ_WAIT_S + BACKEND_TIMEOUT_S + 30):
    return thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", server.port, timeout=int(timeout_s * 1000))


def _read_answers(server, deadline_s: float) -> str:
    """get_table on a new client connection (the proxy then connects to the first instance first)."""
    client = _client(server, deadline_s)
    try:
        return client.get_table("hedged", "t").tableName
    finally:
        client.close()


def test_reads_are_hedged_to_the_other_instance_while_one_is_stopped(ha_pair, proxy):
    stats = proxy.handler.backends.hedging.stats
    assert _read_answers(proxy, READ_WAIT_S) == "t"  # both instances answer: nothing to hedge
    hedged_before = stats["primary"].hedged if "primary" in stats else 0
    with stalled(ha_pair.first):
        for _ in range(5):  # each a new client: each a new proxy session whose first connection is the stopped one's
            assert _read_answers(proxy, READ_WAIT_S) == "t"
        kept = _client(proxy)
        try:
            for _ in range(20):  # one session: after its first hedge, its connection is the answering instance's
                assert kept.get_table("hedged", "t").tableName == "t"
        finally:
            kept.close()
    st = stats["primary"]
    assert st.hedged - hedged_before >= 5
    assert st.hedge_wins >= 5
    # After SIGCONT the stopped instance takes calls again: a write, answered by it (the first URI).
    client = _client(proxy)
    try:
        client.create_table(plain_table("hedged", "after_resume"))
        assert client.get_table("hedged", "after_resume").tableName == "after_resume"
    finally:
        client.close()


def test_a_write_to_the_stopped_instance_is_never_hedged(ha_pair, proxy):
    stats = proxy.handler.backends.hedging.stats
    outcome: dict[str, object] = {}

    def write() -> None:
        client = _client(proxy)
        try:
            client.create_table(plain_table("hedged", "while_stopped"))
            outcome["answer"] = "created"
        except Exception as e:  # the stopped instance never answers it: a timeout or the breaker's error
            outcome["answer"] = e
        finally:
            client.close()

    hedged_before = stats["primary"].hedged if "primary" in stats else 0
    with stalled(ha_pair.first):
        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        writer.join(BACKEND_TIMEOUT_S + 30)
        assert not writer.is_alive(), "the write did not end within the backend timeout"
    # Sent to the other instance (a hedge), it would have been created at once; it waited for the stopped one.
    assert isinstance(outcome["answer"], Exception), outcome
    assert (stats["primary"].hedged if "primary" in stats else 0) == hedged_before
    # After SIGCONT: reads and writes answered again within a bounded wait (the breaker lets calls through
    # once a probe is answered). The stopped instance may still carry out the write it had been sent.
    deadline = time.monotonic() + READ_WAIT_S
    while True:
        try:
            assert _read_answers(proxy, READ_WAIT_S) == "t"
            break
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)
    client = _client(proxy)
    try:
        client.create_table(plain_table("hedged", "after_write"))
        names = client.get_all_tables("hedged")
    finally:
        client.close()
    assert "after_write" in names

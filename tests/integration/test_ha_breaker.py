"""The circuit breaker on a real HA pair (two Hive 2.3 metastores over one PostgreSQL database,
tests/support/ha_pair.py), default breaker settings: the first instance SIGSTOPped (its sockets stay
open, nothing answers) stalls only its URI, since the second answers the breaker's probe.

A write waiting on the stopped instance gets an error naming its URI (it is not sent again); a new
write goes to the second instance; reads are answered with and without `hedge:` (a read without it,
cut on the stopped URI, goes again on the other); the metastore stays up; after SIGCONT the first
URI is used again.
"""

from __future__ import annotations

import time

import pytest
import thriftpy2.rpc

from hmsproxy.config.model import HedgeConfig, ServerConfig
from hmsproxy.downstream.server import ProxyServer
from hmsproxy.protocol import idl
from tests.support.ha_pair import ha_config, plain_table
from tests.support.ops import handler_metric
from tests.support.served import served
from tests.support.stopped import Stopper, in_flight

#: The issue asks for about 10 s on default settings (probe-after-s 3: a probe of the stopped URI
#: for 3 s, one of the other); bounded generously for a loaded 2-core machine.
FAIL_WITHIN_S = 15.0
#: A bound only a broken breaker reaches (a wait for another thread, a recovery after SIGCONT).
PATIENCE_S = 60.0
DB = "ha_breaker"


def _config(pair, hedge):
    config = ha_config(pair, hedge, backend_timeout_s=ServerConfig().backend_timeout_s)
    assert config.server.probe_after_s == ServerConfig().probe_after_s == 3.0  # the defaults
    return config


@pytest.fixture(scope="module")
def proxies(ha_pair):
    """(a proxy without hedging, one with `hedge:`), both over the pair; the database and a table made."""
    with served(_config(ha_pair, None)) as plain, served(_config(ha_pair, HedgeConfig())) as hedged:
        client = _client(plain)
        try:
            location = (ha_pair.first.state_dir.parent / "warehouse" / f"{DB}.db").as_uri()
            client.create_database(idl.hive.Database(name=DB, locationUri=location, parameters={}))
            client.create_table(plain_table(DB, "t"))
        finally:
            client.close()
        yield plain, hedged


def _client(server: ProxyServer):
    return thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", server.port, timeout=int((PATIENCE_S + 30) * 1000))


def _wait_until(fn, what: str) -> float:
    started = time.monotonic()
    while not fn():
        assert time.monotonic() - started < PATIENCE_S, f"{what}: not within {PATIENCE_S} s"
        time.sleep(0.05)
    return time.monotonic() - started


def test_a_stopped_first_instance_stalls_its_uri_only_and_is_used_again_after_sigcont(ha_pair, proxies):
    plain, hedged = proxies
    first, second = ha_pair.first.uri, ha_pair.second.uri
    writer, plain_reader, hedged_reader = _client(plain), _client(plain), _client(hedged)
    with Stopper(ha_pair.first.pid) as stopper:
        try:
            for client in (writer, plain_reader, hedged_reader):  # each proxy session now holds a connection to the first URI
                assert client.get_table(DB, "t").tableName == "t"

            hung_at = time.monotonic()
            stopper.stop()
            write = in_flight(lambda: writer.create_table(plain_table(DB, "while_stopped")), hung_at)
            read = in_flight(lambda: plain_reader.get_table(DB, "t").tableName, hung_at)
            hedged_reads = 0
            while write[0].is_alive() or read[0].is_alive():  # hedged reads answered throughout
                assert time.monotonic() - hung_at < PATIENCE_S, "the calls waiting on the stopped instance never ended"
                assert hedged_reader.get_table(DB, "t").tableName == "t"
                hedged_reads += 1
                time.sleep(0.1)

            # The write: the stall's error, naming the stopped URI, not the metastore as down.
            error = write[1].get("error")
            message = getattr(error, "message", None) or str(error)
            assert "result" not in write[1], write[1]
            assert f"({first})" in message and f"{first} not answering since" in message and second in message, message
            assert write[1]["at"] < FAIL_WITHIN_S, write[1]
            # The read without hedging: cut on the stopped URI, answered by the other.
            assert read[1].get("result") == "t", read[1]
            backends = plain.handler.backends
            assert backends.breaker.stalled("primary", first) and backends.breaker.trip("primary") is None
            assert handler_metric(plain.handler, "hmsproxy_backend_up", backend="primary") == 1

            # A new write goes to the second instance and succeeds; reads go on, on both proxies.
            writer.create_table(plain_table(DB, "after_stall"))
            assert plain_reader.get_table(DB, "after_stall").tableName == "after_stall"
            fresh = _client(plain)
            try:
                assert fresh.get_table(DB, "t").tableName == "t"  # a new session connects to the second URI first
            finally:
                fresh.close()
            assert hedged_reader.get_table(DB, "after_stall").tableName == "after_stall"

            assert backends.breaker.stalled("primary", first)  # still, up to SIGCONT: probed again and again
            stopper.resume()
            back_s = _wait_until(lambda: not backends.breaker.stalled("primary", first), "the first URI taken back")
            conn = backends.new_connection(backends.metastore("primary"))
            try:
                conn.open()
                assert conn.uri == first  # new connections open on the first URI again
            finally:
                conn.close()
            fresh = _client(plain)
            try:
                fresh.create_table(plain_table(DB, "after_resume"))
                assert fresh.get_table(DB, "after_resume").tableName == "after_resume"
            finally:
                fresh.close()
            print(
                f"\nHA breaker (defaults): the write waiting on the stopped first instance failed {write[1]['at']:.1f} s "
                f"after the hang, the unhedged read was answered {read[1]['at']:.1f} s after it, {hedged_reads} hedged "
                f"reads answered meanwhile; the first URI taken back {back_s * 1000:.0f} ms after SIGCONT"
            )
        finally:
            for client in (writer, plain_reader, hedged_reader):
                client.close()

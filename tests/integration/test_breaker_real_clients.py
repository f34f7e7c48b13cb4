"""The circuit breaker through real Thrift clients: a real Hive metastore stopped with SIGSTOP
trips and recovers; a backend that is only slow (a real Thrift server over a fake metastore,
answering probes) is never tripped.

Timing bounds come from the scenario, never from how fast this machine is: "fails at once" means
before the timeout a call sent to the stopped metastore would wait for (backend-timeout-s, the
fan-out deadline), with room to spare either way. How soon the breaker probes and trips is shown
on a fake clock in tests/unit/test_breaker.py.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from dataclasses import replace

import pytest
import thriftpy2.rpc

from hmsproxy.app import build_handler
from hmsproxy.config.model import Config, DatabaseResolution, MetastoreConfig, ServerConfig
from hmsproxy.downstream.server import ProxyServer
from hmsproxy.protocol import idl
from hmsproxy.testing import FakeMetastore, fake_connect
from tests.support.federation import prefixed_config, temp_store
from tests.support.ops import handler_metric

hive = idl.hive

#: probe-after-s of the SIGSTOP test: short for the test, long enough for a real metastore on a busy machine.
PROBE_AFTER_S = 2.0
#: How long to wait for something that takes well under a second when it works (a resumed
#: metastore answering again, a call in flight ending): reached only when it never happens.
PATIENCE_S = 60.0
#: How long the slow backend takes for one call, and probe-after-s in front of it. The issue's
#: 20-second call behaves the same: HMSPROXY_TEST_SLOW_CALL_S=20.
SLOW_CALL_S = float(os.environ.get("HMSPROXY_TEST_SLOW_CALL_S", "8"))
SLOW_PROBE_AFTER_S = 1.0


def client_for(port: int):
    # Longer than the proxy's backend-timeout-s (120 s in prefixed_config): the proxy's timeouts,
    # not the client's, end calls.
    return thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", port, timeout=180_000)


def serve(config: Config, **handler_kwargs) -> ProxyServer:
    return ProxyServer(build_handler(config, **handler_kwargs), "127.0.0.1", 0).start()


def shut(server: ProxyServer) -> None:
    server.stop()
    server.handler.close()


def poll(fn, timeout_s: float, interval_s: float = 0.1):
    """Seconds until fn() first answers truthy (bounded by timeout_s); fails the test otherwise."""
    started = time.monotonic()
    while not fn():
        assert time.monotonic() - started < timeout_s, f"not reached within {timeout_s} s"
        time.sleep(interval_s)
    return time.monotonic() - started


def test_a_stopped_metastore_fails_new_calls_fast_and_is_used_again_after_sigcont(metastores, private_metastore):
    ms = private_metastore
    base = prefixed_config(metastores[0].uri, metastores[1].uri)
    frozen = MetastoreConfig("frozen", (ms.uri,), database_prefix="frozen_")
    # Fan-outs keep the 60 s deadline of prefixed_config: only the breaker can make them quick.
    config = replace(base, federated=(*base.federated, frozen), server=replace(base.server, probe_after_s=PROBE_AFTER_S))
    # What a call sent to the stopped metastore waits for: its backend timeout, or a fan-out's deadline.
    backend_timeout_s = config.server.backend_timeout_s
    fanout_deadline_s = config.server.fanout_timeout_ms / 1000
    server = serve(config)
    client, stuck_client = client_for(server.port), client_for(server.port)
    stopped = False
    try:
        assert client.get_database("frozen_default").name == "frozen_default"
        assert stuck_client.get_database("frozen_default").name == "frozen_default"
        probe_started = time.monotonic()
        server.handler.backends.probe("frozen", PROBE_AFTER_S)  # what a probe costs on a live metastore
        probe_s = time.monotonic() - probe_started

        os.kill(ms.pid, signal.SIGSTOP)  # TCP stays open, nothing answers
        stopped, stopped_at = True, time.monotonic()
        in_flight: dict = {}

        def call_in_flight():
            started = time.monotonic()
            in_flight["name"] = stuck_client.get_database("frozen_default").name
            in_flight["s"] = time.monotonic() - started

        stuck = threading.Thread(target=call_in_flight, daemon=True)
        stuck.start()

        # The in-flight call gets no answer, the probe neither: the metastore is marked down (after
        # probe-after-s and the probe's own probe-after-s), before the call in flight would end by
        # its backend timeout, which is what the breaker is for.
        poll(lambda: handler_metric(server.handler, "hmsproxy_backend_up", backend="frozen") == 0, backend_timeout_s / 2)
        started = time.monotonic()
        with pytest.raises(hive.MetaException) as err:
            client.get_database("frozen_default")
        failed_at = time.monotonic()
        message = err.value.message
        assert "metastore 'frozen'" in message and ms.uri in message and "not answering since" in message, message
        # Sent to the stopped metastore, it would have failed after backend-timeout-s ("timed out").
        assert failed_at - started < backend_timeout_s / 2
        fail_fast_s = failed_at - stopped_at

        # Other metastores and fan-outs don't wait for it.
        assert client.get_database("default").name == "default"
        assert client.get_database("waggle_default").name == "waggle_default"
        started = time.monotonic()
        names = client.get_all_databases()
        fanout_s = time.monotonic() - started
        assert "default" in names and "waggle_default" in names and "frozen_default" not in names
        # Waiting for the stopped metastore, the fan-out would have left it out only at its deadline.
        assert fanout_s < fanout_deadline_s / 2, fanout_s
        assert stuck.is_alive()  # calls in flight keep waiting

        os.kill(ms.pid, signal.SIGCONT)
        stopped, resumed_at = False, time.monotonic()

        def frozen_answers() -> bool:
            try:
                return client.get_database("frozen_default").name == "frozen_default"
            except hive.MetaException:
                return False

        poll(frozen_answers, PATIENCE_S, 0.2)  # the half-open probe (or the call in flight) answers
        recover_s = time.monotonic() - resumed_at
        assert "frozen_default" in client.get_all_databases()
        assert handler_metric(server.handler, "hmsproxy_backend_up", backend="frozen") == 1
        stuck.join(PATIENCE_S)
        assert in_flight["name"] == "frozen_default"  # the call in flight got its answer after SIGCONT
        print(
            f"\nbreaker: probe on a live metastore {probe_s * 1000:.0f} ms; a new call failed {fail_fast_s:.1f} s after SIGSTOP "
            f"(probe-after-s {PROBE_AFTER_S:g}); fan-out without it {fanout_s:.2f} s; used again {recover_s:.2f} s after SIGCONT; "
            f"the call in flight waited {in_flight['s']:.1f} s"
        )
    finally:
        if stopped:
            os.kill(ms.pid, signal.SIGCONT)
        client.close()
        stuck_client.close()
        shut(server)


class SlowMetastore(FakeMetastore):
    """A fake metastore that takes `delays[method]` seconds to answer that method, and answers everything else at once."""

    def __init__(self, name: str, delays: dict[str, float]):
        super().__init__(name)
        self.delays = delays

    def handle(self, method, args, client):
        time.sleep(self.delays.get(method, 0))
        return super().handle(method, args, client)


def test_a_slow_metastore_that_answers_probes_is_never_tripped():
    # The slow backend: a real Thrift server (an hmsproxy over the fake, answering getVersion itself).
    slow = SlowMetastore("slow", {"get_all_tables": SLOW_CALL_S})
    slow_ms = MetastoreConfig("slow", ("thrift://slow.fake:1",), primary=True)
    backend = serve(Config(ServerConfig(), DatabaseResolution.PREFIXED, slow_ms, store=temp_store()), connect=fake_connect({"slow": slow}))
    front_ms = MetastoreConfig("slow", (backend.uri,), primary=True)
    front = serve(Config(ServerConfig(probe_after_s=SLOW_PROBE_AFTER_S), DatabaseResolution.PREFIXED, front_ms, store=temp_store()))
    slow_client, other = client_for(front.port), client_for(front.port)
    try:
        assert other.get_database("default").name == "default"
        probes_before = handler_metric(backend.handler, "hmsproxy_requests_total", method="getVersion")
        answer: dict = {}

        def slow_call():
            started = time.monotonic()
            answer["tables"] = slow_client.get_all_tables("default")
            answer["s"] = time.monotonic() - started

        thread = threading.Thread(target=slow_call, daemon=True)
        thread.start()
        deadline = time.monotonic() + SLOW_CALL_S + 60
        while thread.is_alive():
            assert time.monotonic() < deadline, "the slow call never ended"
            assert front.handler.backends.breaker.trip("slow") is None
            assert other.get_database("default").name == "default"  # other calls go through meanwhile
            time.sleep(0.5)
        assert answer["tables"] == [] and answer["s"] >= SLOW_CALL_S
        probes = handler_metric(backend.handler, "hmsproxy_requests_total", method="getVersion") - probes_before
        # A probe falls due every probe-after-s of the call; two show that probing goes on while it
        # stays unanswered, and even a busy machine has made two long before the call ends (the
        # pace itself is tested on a fake clock).
        assert probes >= 2, probes
        assert handler_metric(front.handler, "hmsproxy_backend_up", backend="slow") == 1
        print(f"\nslow metastore: a {answer['s']:.1f} s call, {probes:g} probes answered, never tripped")
    finally:
        slow_client.close()
        other.close()
        shut(front)
        shut(backend)

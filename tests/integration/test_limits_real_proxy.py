"""Limits (hmsproxy/features/limits/, upstream/slots.py) through a real proxy server in front of the real
Hive metastores, configured from a YAML file and changed by the reload machinery (ops/reload.py) as
SIGHUP would: a client looping get_partitions is held to its rate while another user goes on, a
reload reaches connections already open, and a metastore's concurrency cap refuses or queues calls.

Counts are over bounded windows with generous margins: the machine may be slow, never faster than a
token bucket allows."""

from __future__ import annotations

import threading
import time
import uuid
from contextlib import closing

import pytest

from hmsproxy.app import load_config
from hmsproxy.ops.reload import reload_config
from hmsproxy.protocol import idl
from hmsproxy.testing import partition, table
from tests.support.federation import federation_yaml
from tests.support.proxy_clients import client_as
from tests.support.served import served

hive = idl.hive

#: How long a client loops; its calls are bounded in number too.
WINDOW_S = 3.0
MAX_WINDOW_S = 30.0
MAX_CALLS = 5000


@pytest.fixture(scope="module")
def config_file(metastores, tmp_path_factory):
    state = tmp_path_factory.mktemp("limits-state")
    path = state / "hmsproxy.yml"
    base = federation_yaml(metastores[0].uri, metastores[1].uri, state_dir=state)
    path.write_text(base)
    return path, base


@pytest.fixture(scope="module")
def server(config_file):
    with served(load_config(config_file[0])) as proxy:
        yield proxy


@pytest.fixture
def limits(server, config_file):
    """limits(yaml_text): write the `limits` section into the config file and reload it, as SIGHUP does."""
    path, base = config_file

    def apply(section: str) -> None:
        path.write_text(base + section)
        assert reload_config(server.handler, lambda: load_config(path))

    yield apply
    apply("")


@pytest.fixture(scope="module")
def daily(metastores):
    name = f"lim_{uuid.uuid4().hex[:8]}"
    with closing(metastores[0].client()) as direct:
        direct.create_table(table("default", name, partition_keys=(("ds", "string"),)))
        direct.add_partitions([partition("default", name, [f"2026-11-{d:02d}"]) for d in range(1, 21)])
        yield name
        direct.drop_table("default", name, True)


def loop(call, window_s: float = WINDOW_S, *, refusals_wanted: int = 0) -> tuple[int, list[str], float]:
    """Call `call()` for `window_s`, and on until `refusals_wanted` refusals came (a slow machine may
    call slower than a limit), at most MAX_WINDOW_S and MAX_CALLS calls: (answers, refusal messages,
    seconds taken)."""
    answers, refusals = 0, []
    start = time.monotonic()
    while answers + len(refusals) < MAX_CALLS:
        elapsed = time.monotonic() - start
        if elapsed >= MAX_WINDOW_S or (elapsed >= window_s and len(refusals) >= refusals_wanted):
            break
        try:
            call()
            answers += 1
        except hive.MetaException as e:
            refusals.append(e.message)
    return answers, refusals, time.monotonic() - start


def metric(server, name: str) -> float:
    text = server.handler.features.get("metrics").render()[0].decode()
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(name))


def test_a_client_looping_get_partitions_is_held_to_its_rate_while_another_user_goes_on(server, limits, daily):
    limits("limits:\n  users:\n    alice: {rate: 5, burst: 5}\n")
    with client_as(server, "alice") as alice, client_as(server, "bob") as bob:
        noisy: list = []
        loud = threading.Thread(target=lambda: noisy.append(loop(lambda: alice.get_partitions("default", daily, -1), refusals_wanted=3)))
        loud.start()
        bob_answers, bob_refusals, _ = loop(lambda: (bob.get_table("default", daily), time.sleep(0.02)))
        loud.join(60)
    answers, refusals, took = noisy[0]
    assert refusals, "alice was never refused"
    assert set(m.split(" reached;")[0] for m in refusals) == {"hmsproxy: limit 'user alice: 5 calls/s'"}
    assert all(" reached; retry in " in m for m in refusals)
    # the bucket's bound: its burst plus its rate over the window (the loop may overrun it by one call)
    assert 5 <= answers <= 5 + 5 * (took + 1)
    assert bob_answers >= 5 and bob_refusals == []
    assert metric(server, 'hmsproxy_limited_total{limit="user:alice"}') >= len(refusals)


def test_a_reload_changes_the_limit_of_connections_already_open(server, limits, daily):
    with client_as(server, "alice") as alice:
        answers, refusals, _ = loop(lambda: alice.get_partitions("default", daily, -1), 1.0)
        assert answers >= 1 and refusals == []  # no limits yet
        limits("limits:\n  users:\n    '*': {rate: 2, burst: 2}\n")
        answers, refusals, took = loop(lambda: alice.get_partitions("default", daily, -1), 2.0, refusals_wanted=1)
        assert refusals and 2 <= answers <= 2 + 2 * (took + 1)
        assert "limit 'user alice: 2 calls/s'" in refusals[0]
        limits("limits:\n  users:\n    '*': {rate: 1000, burst: 1000}\n")
        answers, refusals, _ = loop(lambda: alice.get_partitions("default", daily, -1), 1.0)
        assert answers >= 1 and refusals == []  # raised on the same connection


def test_a_waiting_client_is_slowed_to_its_rate_not_refused(server, limits, daily):
    limits("limits:\n  queue-s: 30\n  users:\n    alice: {rate: 4, burst: 1}\n")
    with client_as(server, "alice") as alice:
        start = time.monotonic()
        for _ in range(9):
            alice.get_partitions("default", daily, -1)  # none refused
        took = time.monotonic() - start
    assert took >= 1.9  # 1 at once, then one every 0.25 s (what the proxy waits for, not a speed)
    assert metric(server, 'hmsproxy_limit_waits_total{limit="user:alice"}') >= 1


def test_a_metastores_concurrency_cap_refuses_or_queues_calls_beyond_it(server, limits, daily):
    def crowd(threads: int = 6) -> list[tuple[int, list[str], float]]:
        results: list = []
        clients = [client_as(server, f"user{i}") for i in range(threads)]

        def run(c):
            with c as client:
                results.append(loop(lambda: client.get_partitions("default", daily, -1), 2.0))

        workers = [threading.Thread(target=run, args=(c,)) for c in clients]
        for w in workers:
            w.start()
        for w in workers:
            w.join(60)
        return results

    limits("limits:\n  metastore-concurrency:\n    primary: 1\n")
    results = crowd()
    refusals = [m for _, ms, _ in results for m in ms]
    assert sum(a for a, _, _ in results) >= 1
    assert refusals, "six clients never met on a cap of one"
    assert set(refusals) == {"hmsproxy: limit 'metastore primary: 1 concurrent calls' reached; retry in 0.1 s"}
    assert metric(server, 'hmsproxy_limited_total{limit="metastore:primary"}') >= len(refusals)

    limits("limits:\n  queue-s: 30\n  metastore-concurrency:\n    primary: 1\n")
    results = crowd()
    assert [ms for _, ms, _ in results] == [[]] * 6  # every call waited its turn
    assert metric(server, 'hmsproxy_limit_waits_total{limit="metastore:primary"}') >= 1
    assert metric(server, 'hmsproxy_metastore_calls_in_flight{backend="primary"}') == 0

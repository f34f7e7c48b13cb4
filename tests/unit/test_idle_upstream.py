"""A quiet client's metastore connections are closed by its own thread before it reads its next call
(downstream/idle_upstream.py), and `server.upstream-idle-s` configures when. A socket pair stands for
the client; a small session double records what was closed (the integration test,
tests/integration/test_idle_connections.py, counts real metastore connections)."""

from __future__ import annotations

import socket
import time

import pytest

from hmsproxy.config import ConfigError
from hmsproxy.config.description import describe
from hmsproxy.config.own_format import load_config
from hmsproxy.downstream.idle_upstream import IdleUpstream


class Session:
    client_address = "127.0.0.1:1"

    def __init__(self, open_connections: int):
        self.connections = {("primary", False): object()} if open_connections else {}
        self.closed = 0

    def close_connections(self) -> int:
        self.closed += len(self.connections)
        self.connections = {}
        return self.closed


@pytest.fixture
def pair():
    ours, client = socket.socketpair()
    yield ours, client
    ours.close()
    client.close()


def test_a_client_quiet_past_the_idle_time_loses_its_connections(pair):
    ours, _ = pair
    session = Session(1)
    started = time.monotonic()
    IdleUpstream(session, ours, 0.2).wait()
    assert session.closed == 1 and 0.15 <= time.monotonic() - started < 5


def test_a_client_whose_next_call_is_there_keeps_them_at_once(pair):
    ours, client = pair
    client.sendall(b"\x80\x01")
    session = Session(1)
    started = time.monotonic()
    IdleUpstream(session, ours, 5).wait()
    assert session.closed == 0 and time.monotonic() - started < 1


def test_without_connections_or_with_0_there_is_no_wait(pair):
    ours, _ = pair
    for session, idle_s in ((Session(0), 5), (Session(1), 0)):
        started = time.monotonic()
        IdleUpstream(session, ours, idle_s).wait()
        assert session.closed == 0 and time.monotonic() - started < 1


def test_upstream_idle_s_is_read_from_the_server_section(tmp_path):
    base = "primary-meta-store: {name: p, remote-meta-store-uris: 'thrift://127.0.0.1:9'}\n"
    path = tmp_path / "hmsproxy.yml"
    path.write_text(base)
    assert load_config(path).server.upstream_idle_s == 300.0
    assert "a quiet client's metastore connections closed after 300 s" in describe(load_config(path))  # check-config, status
    path.write_text("server: {upstream-idle-s: 0}\n" + base)
    assert load_config(path).server.upstream_idle_s == 0.0
    assert "a quiet client's metastore connections kept" in describe(load_config(path))
    path.write_text("server: {upstream-idle-s: -1}\n" + base)
    with pytest.raises(ConfigError, match=r"server\.upstream-idle-s.*0 or more"):
        load_config(path)

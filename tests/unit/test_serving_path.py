"""`hmsproxy status` and /readyz say which code serves repeated reads: the C hit loop on plain
sockets with the buffered transport, Python on the framed transport (and under TLS or SASL)."""

from __future__ import annotations

from contextlib import contextmanager

import pytest

from hmsproxy.config.model import Config, DatabaseResolution, MetastoreConfig, ServerConfig
from hmsproxy.downstream.server import ProxyServer
from hmsproxy.ops.readiness import serving_path_check
from hmsproxy.pipeline.handler import Handler


@pytest.fixture
def handler():
    # Nothing listens at this URI: describing the handler never calls the metastore.
    made = Handler(Config(ServerConfig(), DatabaseResolution.PREFIXED, MetastoreConfig("primary", ("thrift://127.0.0.1:9",), primary=True)))
    yield made
    made.close()


@contextmanager
def server_of(handler, **kwargs):
    server = ProxyServer(handler, "127.0.0.1", 0, **kwargs)  # bound to a free port, never started
    try:
        yield server
    finally:
        server.stop()


def test_without_a_server_the_handler_says_python(handler):
    assert "repeated reads: Python (no server attached)" in handler.describe()


def test_buffered_plain_sockets_are_served_by_the_c_hit_loop(handler):
    with server_of(handler):
        assert "repeated reads: C hit loop (plain sockets, buffered transport" in handler.describe()
        check = serving_path_check(handler)()
        assert check.ok and check.name == "serving-path" and check.detail.startswith("C hit loop")


def test_the_framed_transport_is_served_by_python(handler):
    with server_of(handler, transport="framed"):
        assert "repeated reads: Python (framed transport" in handler.describe()
        assert serving_path_check(handler)().detail.startswith("Python (framed transport")

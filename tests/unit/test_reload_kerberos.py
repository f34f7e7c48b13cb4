"""Reloading a config whose Kerberos settings changed: the proxy's port needs a restart, the
identity it uses towards metastores does not (ops/reload.py)."""

from __future__ import annotations

import dataclasses
import logging

from hmsproxy.config.model import ServerSaslConfig
from hmsproxy.ops.reload import reload_config
from hmsproxy.pipeline.handler import Handler
from hmsproxy.testing import FakeMetastore, fake_connect
from tests.support.federation import primary_only_config


def _with_sasl(config, sasl):
    return dataclasses.replace(config, server=dataclasses.replace(config.server, sasl=sasl))


def test_kerberos_on_the_port_needs_a_restart_the_outbound_identity_does_not(caplog):
    base = primary_only_config("thrift://primary:9083")
    handler = Handler(base, connect=fake_connect({"primary": FakeMetastore("primary")}))
    caplog.set_level(logging.WARNING, logger="hmsproxy.ops.reload")
    try:
        outbound = _with_sasl(base, ServerSaslConfig(False, "hmsproxy/h@R", "/etc/a.keytab"))
        assert reload_config(handler, lambda: outbound)
        assert reload_config(handler, lambda: _with_sasl(base, ServerSaslConfig(False, "hmsproxy/h@R", "/etc/b.keytab")))
        assert not [r for r in caplog.records if "restart" in r.getMessage()]
        assert handler.config.server.sasl.keytab == "/etc/b.keytab"  # used for the next connections
        assert reload_config(handler, lambda: _with_sasl(base, ServerSaslConfig(True, "hmsproxy/h@R", "/etc/b.keytab")))
        assert any("server.sasl (the proxy's port) changed" in r.getMessage() for r in caplog.records), caplog.text
    finally:
        handler.close()

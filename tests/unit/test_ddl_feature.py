"""The composition root opens one store per handler; the DDL feature answers only hmsproxy_execute."""

from __future__ import annotations

import dataclasses

import pytest

from hmsproxy import idl
from hmsproxy.app import build_handler
from hmsproxy.config_model import RemotesConfig, StoreConfig
from hmsproxy.errors import ProxyError
from hmsproxy.session import Session
from hmsproxy.store import StoreError
from tests.support.federation import prefixed_config


@pytest.fixture
def config(tmp_path):
    base = prefixed_config("thrift://127.0.0.1:1", "thrift://127.0.0.1:2")
    return dataclasses.replace(base, store=StoreConfig(f"sqlite:///{tmp_path / 'st' / 'hmsproxy.db'}"))


def test_build_handler_opens_the_store_and_close_closes_it(config, tmp_path):
    handler = build_handler(config)
    try:
        assert (tmp_path / "st" / "hmsproxy.db").is_file()
        handler.store.ping()
        checks = {c.__name__: c for c in handler.readiness.checks if hasattr(c, "__name__")}
        result = checks["store_reachable"]()
        assert result.ok and result.name == "store"
    finally:
        handler.close()
    assert handler.store.engine.pool.checkedout() == 0


def test_build_handler_refuses_a_bad_store_url(config):
    with pytest.raises(StoreError, match="not a database URL"):
        build_handler(dataclasses.replace(config, store=StoreConfig("nonsense")))


def test_hmsproxy_execute_is_answered_locally_as_the_session_user(config):
    handler = build_handler(config)
    session = Session(handler.backends, "test")
    session.set_ugi("erin", [])
    try:
        args = idl.HmsProxy.hmsproxy_execute_args(
            statements="CREATE REMOTE DATABASE x WITH DBPROPERTIES ('hive.metastore.uris'='thrift://h:1'); SHOW REMOTE DATABASES",
            current_database="default",
        )
        # The remotes feature would ask the (unreachable) backends whether 'x' exists; not this test's subject.
        handler.ddl.exists_locally = None
        result = handler.dispatch(session, "hmsproxy_execute", args)
        assert result.success.columns[0] == "database_name"
        assert [r[0] for r in result.success.rows] == ["x"] and result.success.rows[0][3] == "erin"
        bad = handler.dispatch(session, "hmsproxy_execute", idl.HmsProxy.hmsproxy_execute_args("DROP REMOTE TABLE", "default"))
        assert "syntax error at line 1, column 18" in bad.o1.message
        # other local calls are still the handler's own
        assert handler.dispatch(session, "getName", idl.HmsProxy.getName_args()).success == "hmsproxy"
    finally:
        session.close()
        handler.close()


def test_creators_follow_config_reloads(config):
    handler = build_handler(config)
    try:
        handler.ddl.exists_locally = None
        handler.apply_config(dataclasses.replace(config, remotes=RemotesConfig(creators=("root",))))
        with pytest.raises(ProxyError, match="user 'erin' may not create remote database 'y'.*remotes.creators"):
            handler.ddl.run("CREATE REMOTE DATABASE y WITH DBPROPERTIES ('hive.metastore.uris'='thrift://h:1')", "erin", None)
        handler.ddl.run("CREATE REMOTE DATABASE y WITH DBPROPERTIES ('hive.metastore.uris'='thrift://h:1')", "root", None)
    finally:
        handler.close()

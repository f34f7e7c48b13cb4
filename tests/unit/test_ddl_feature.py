"""The composition root opens one store per handler; the statements feature answers hmsproxy_execute(_script).

The backends are hmsproxy.testing fakes, so a statement's checks (does the name exist
in the federation?) really go through the proxy's routing as the user.
"""

from __future__ import annotations

import dataclasses

import pytest

from hmsproxy.app import build_handler
from hmsproxy.config.model import StoreConfig
from hmsproxy.features.remotes.config import RemotesConfig
from hmsproxy.ops.readiness import readiness_of
from hmsproxy.pipeline.errors import AccessDenied, Conflict
from hmsproxy.protocol import idl
from hmsproxy.store import StoreError
from hmsproxy.testing import FakeMetastore, database, fake_connect
from hmsproxy.upstream.session import Session
from tests.support.federation import prefixed_config

# Made unchecked: no metastore answers at thrift://h:1, and these tests are about running statements.
LINK = "WITH DBPROPERTIES ('hive.metastore.uris'='thrift://h:1', 'hmsproxy.remote.check'='false')"


@pytest.fixture
def config(tmp_path):
    base = prefixed_config("thrift://127.0.0.1:1", "thrift://127.0.0.1:2")
    return dataclasses.replace(base, store=StoreConfig(f"sqlite:///{tmp_path / 'st' / 'hmsproxy.db'}"))


@pytest.fixture
def primary():
    m = FakeMetastore("primary")
    m.create_database(database("shop"))
    return m


@pytest.fixture
def handler(config, primary):
    h = build_handler(config, connect=fake_connect({"primary": primary, "waggle": FakeMetastore("waggle")}))
    yield h
    h.close()


@pytest.fixture
def session(handler):
    s = Session(handler.backends, "test")
    s.set_ugi("erin", [])
    yield s
    s.close()


def test_build_handler_opens_the_store_and_close_closes_it(config, tmp_path):
    handler = build_handler(config)
    try:
        assert (tmp_path / "st" / "hmsproxy.db").is_file()
        handler.store.ping()
        (store_check,) = [c for c in readiness_of(handler).checks if getattr(c, "__name__", "") == "store_reachable"]
        result = store_check()
        assert result.ok and result.name == "store"
    finally:
        handler.close()
    assert handler.store.engine.pool.checkedout() == 0


def test_build_handler_refuses_a_bad_store_url(config):
    with pytest.raises(StoreError, match="not a database URL"):
        build_handler(dataclasses.replace(config, store=StoreConfig("nonsense")))


def test_hmsproxy_execute_is_answered_locally_as_the_session_user(handler, session, primary):
    args = idl.HmsProxy.hmsproxy_execute_args(
        statements=f"CREATE REMOTE DATABASE x {LINK}; SHOW REMOTE DATABASES", current_database="default"
    )
    result = handler.dispatch(session, "hmsproxy_execute", args)
    assert result.success.columns[0] == "database_name"
    assert [r[0] for r in result.success.rows] == ["x"] and result.success.rows[0][3] == "erin"
    # The name check went through the proxy's routing to the primary, as erin.
    (asked,) = primary.calls_to("get_database")
    assert asked.args.name == "x" and asked.user == "erin"
    bad = handler.dispatch(session, "hmsproxy_execute", idl.HmsProxy.hmsproxy_execute_args("DROP REMOTE TABLE", "default"))
    assert "syntax error at line 1, column 18" in bad.o1.message
    # other local calls are still the handler's own
    assert handler.dispatch(session, "getName", idl.HmsProxy.getName_args()).success == "hmsproxy"


def test_hmsproxy_execute_script_answers_each_statement(handler, session):
    script = f"CREATE REMOTE DATABASE x {LINK}; SHOW REMOTE DATABASES; DESCRIBE REMOTE DATABASE x"
    result = handler.dispatch(session, "hmsproxy_execute_script", idl.HmsProxy.hmsproxy_execute_script_args(script, "default"))
    created, shown, described = result.success
    assert "created remote database 'x'" in created.rows[0][0]
    assert [r[0] for r in shown.rows] == ["x"]
    assert dict(map(tuple, described.rows))["remote_database"] == "x"
    # A failing statement names its place and stops the script.
    failed = handler.dispatch(
        session,
        "hmsproxy_execute_script",
        idl.HmsProxy.hmsproxy_execute_script_args(f"DROP REMOTE DATABASE x; CREATE REMOTE DATABASE shop {LINK}", "default"),
    )
    message = failed.o1.message
    assert "a database 'shop' already exists in the federation" in message and message.endswith("(statement 2 of 2)")


def test_creators_follow_config_reloads(handler, config):
    statements = handler.features.get("statements")
    handler.apply_config(config.with_section("remotes", RemotesConfig(creators=("root",))))
    with pytest.raises(AccessDenied, match="user 'erin' may not create remote database 'y'.*remotes.creators"):
        statements.run_script(f"CREATE REMOTE DATABASE y {LINK}", "erin", None)
    statements.run_script(f"CREATE REMOTE DATABASE y {LINK}", "root", None)
    with pytest.raises(Conflict, match="remote database 'y' already exists"):
        statements.run_script(f"CREATE REMOTE DATABASE y {LINK}", "root", None)

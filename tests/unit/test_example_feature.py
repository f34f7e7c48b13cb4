"""The worked example of docs/architecture.md: a feature added with no edit outside its package.

tests/example_feature/ is installed next to the real features the way app.py lists them;
its statement, store table, config section, hook and virtual table all work end to end
through a real Handler over fake metastores.
"""

from __future__ import annotations

import dataclasses

import pytest

from hmsproxy.app import FEATURES, config_sections
from hmsproxy.config import ConfigError, load_config
from hmsproxy.protocol import idl
from hmsproxy.upstream.session import Session
from tests.example_feature.feature import Notes, NotesConfig
from tests.support.fake_handlers import fake_federation, shop_metastore

WITH_NOTES = (*FEATURES, Notes)  # what the composition root's one new line would make FEATURES


@pytest.fixture
def primary():
    return shop_metastore()


@pytest.fixture
def handler(tmp_path, primary):
    h = fake_federation(tmp_path, primary, features=WITH_NOTES)
    yield h
    h.close()


def call(handler, method, user="alice", **kwargs):
    session = Session(handler.backends, "test")
    session.set_ugi(user, [])
    try:
        return handler.dispatch(session, method, getattr(idl.HmsProxy, method + "_args")(**kwargs))
    finally:
        session.close()


def test_the_statement_the_store_the_hook_and_the_virtual_table(handler, primary):
    answer = call(handler, "hmsproxy_execute_script", statements="NOTE ON TABLE shop.orders IS 'sales owns it'", current_database="default")
    assert answer.success[0].rows == [["noted shop.orders"]]
    # its own store component, migrated and counted apart from the others
    assert handler.store.schema_versions()["notes"] == 1 and handler.store.generation("notes") == 1
    # the hook
    orders = call(handler, "get_table", dbname="shop", tbl_name="orders").success
    assert orders.parameters["example.note"] == "sales owns it"
    # the virtual table, listed and answered by the catalog without the metastore knowing it
    assert call(handler, "get_all_tables", db_name="shop").success == ["orders", "notes"]
    assert call(handler, "get_tables_by_type", db_name="shop", pattern="*", tableType="VIRTUAL_VIEW").success == ["notes"]
    notes = call(handler, "get_table", dbname="shop", tbl_name="notes").success
    assert [(c.name, c.comment) for c in notes.sd.cols] == [("orders", "sales owns it")]
    assert primary.calls_to("get_table")[-1].args.tbl_name == "orders"  # "notes" never reached the metastore


def test_its_statement_runs_as_the_user_through_the_proxys_routing(handler, primary):
    answer = call(handler, "hmsproxy_execute", statements="NOTE ON TABLE shop.nope IS 'x'", current_database="default")
    assert isinstance(answer.o1, idl.hive.MetaException) and "nope" in answer.o1.message
    asked = primary.calls_to("get_table")[-1]
    assert (asked.args.tbl_name, asked.user) == ("nope", "alice")


def test_its_config_section_is_read_validated_and_applied(handler, tmp_path):
    path = tmp_path / "hmsproxy.yml"
    path.write_text("primary-meta-store: {name: primary, remote-meta-store-uris: 'thrift://h:1'}\nnotes: {max-length: 5}\n")
    config = load_config(path, config_sections(WITH_NOTES))
    assert config.sections["notes"] == NotesConfig(max_length=5)
    handler.apply_config(dataclasses.replace(handler.config, sections=config.sections))
    answer = call(handler, "hmsproxy_execute", statements="NOTE ON TABLE shop.orders IS 'too long'", current_database="default")
    assert "at most 5 characters" in answer.o1.message
    path.write_text("primary-meta-store: {name: primary, remote-meta-store-uris: 'thrift://h:1'}\nnotes: {max-length: 0}\n")
    with pytest.raises(ConfigError, match="notes.max-length"):
        load_config(path, config_sections(WITH_NOTES))
    with pytest.raises(ConfigError, match="notes"):  # without the feature, the key is unknown
        load_config(path)

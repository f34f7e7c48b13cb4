"""One definition per configuration key (issue 38): a key's name, reader, default and description are
its settings field (config/keys.py `key`); what a section allows, how it is read and what the key
table says all come from there, so adding a key is one field."""

from __future__ import annotations

import ast
import dataclasses
import logging
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from hmsproxy.app import config_sections
from hmsproxy.config import readers as r
from hmsproxy.config.errors import ConfigError, Ctx
from hmsproxy.config.key_table import keyed_sections, markdown, rows
from hmsproxy.config.keys import KeyRow, build, key, key_rows, keys_of, yaml_names
from hmsproxy.config.model import Config, ServerConfig
from hmsproxy.config.own_format import load_config
from hmsproxy.config.sections import keyed_section

ROOT = Path(__file__).resolve().parents[2]
CONFIG_PACKAGE = ROOT / "hmsproxy" / "config"


def _sections_with_keys() -> list[type]:
    """Every settings dataclass reachable from Config and the keyed feature sections."""
    found: list[type] = []

    def visit(cls: type) -> None:
        if cls in found:
            return
        found.append(cls)
        for _, definition in keys_of(cls):
            if definition.nested is not None:
                visit(definition.nested)

    visit(Config)
    for section in config_sections():
        if section.key in keyed_sections(config_sections()):
            visit(type(section.default))
    return found


def test_every_key_has_a_name_a_reader_and_a_one_line_description():
    classes = _sections_with_keys()
    assert len(classes) >= 12, [c.__name__ for c in classes]  # Config, server, tls, sasl, metastore, cache, ...
    for cls in classes:
        names = yaml_names(cls)
        assert len(set(names)) == len(names), f"{cls.__name__} names a key twice"
        for field, definition in keys_of(cls):
            where = f"{cls.__name__}.{field.name}"
            assert definition.yaml == definition.yaml.lower() and "_" not in definition.yaml, f"{where}: keys are kebab-case"
            assert definition.description.strip() and "\n" not in definition.description, f"{where}: one-line description"
            assert definition.read is not None or cls is Config, f"{where}: only the metastore keys are read by their loader"


def test_every_feature_section_defines_its_keys():
    """A feature's section is a keyed settings dataclass (sections.keyed_section), so its keys are in
    the table and read by their definitions, not by a parser of its own."""
    assert keyed_sections(config_sections()) == [s.key for s in config_sections()]


def test_the_key_table_is_exactly_the_definitions():
    """Each table row is one definition's path, default and description; every key defined has one."""
    table = rows(config_sections())
    defined = {definition.yaml for cls in _sections_with_keys() for _, definition in keys_of(cls)}
    assert {row.path.rsplit(".", 1)[-1].removesuffix("[]") for row in table} >= defined
    by_path = {row.path: row for row in table}
    assert len(by_path) == len(table), "a key path twice"
    server_keys = {field.name: definition for field, definition in keys_of(ServerConfig)}
    assert by_path["server.handshake-timeout-s"] == KeyRow(
        "server.handshake-timeout-s", "30", server_keys["handshake_timeout_s"].description
    )
    assert by_path["server.sasl.impersonation[].user"].default == "required"
    assert by_path["primary-meta-store.mapped-tables[].mapped-tables"].default == "required"
    assert by_path["primary-meta-store.hedge"].description.endswith("(`true`: all defaults; `false` or `enabled: false`: off)")
    assert by_path["notifications.federate"].description.startswith("answer the notification calls")


def test_docs_configuration_keys_is_the_generated_table():
    shown = (ROOT / "docs" / "configuration-keys.md").read_text()
    assert shown == markdown(config_sections()), "regenerate: hmsproxy check-config --keys > docs/configuration-keys.md"


def test_check_config_keys_prints_the_table():
    out = subprocess.run(
        [sys.executable, "-m", "hmsproxy.cli", "check-config", "--keys"], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == markdown(config_sections())


def test_no_config_module_lists_keys_by_hand():
    """The key tuples the parsers used to keep beside the dataclasses are gone, in config/ and in the
    features' config.py: a section's allowed keys are yaml_names(settings). (Waggle Dance's keys hmsproxy ignores are no settings: they stay.)"""
    for path in sorted([*CONFIG_PACKAGE.glob("*.py"), *(ROOT / "hmsproxy" / "features").glob("*/config.py")]):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Assign):
                names = [t.id for t in node.targets if isinstance(t, ast.Name)]
                assert not any(n.endswith("_KEYS") for n in names), f"{path.name}: {names} lists keys by hand"


# A settings class a test defines: adding a key is adding a field, and the reader, the allowed
# keys and the table follow.


@dataclass(frozen=True)
class _Widgets:
    label: str = key("label", r.text(), "what they are called", required="is required (a name for them)")
    count: int = key("count", r.whole(1, 9), "how many widgets", default=3)


def test_a_new_key_is_allowed_read_and_described_from_its_field_alone(tmp_path):
    ctx = Ctx("widgets.yml", strict=True)
    assert build(ctx, "widgets", {"label": "w", "count": 5}, _Widgets) == _Widgets(count=5, label="w")
    assert build(ctx, "widgets", {"label": "w"}, _Widgets).count == 3
    with pytest.raises(ConfigError, match=r"widgets.colour: unknown key"):
        build(ctx, "widgets", {"label": "w", "colour": "red"}, _Widgets)
    with pytest.raises(ConfigError, match=r"widgets.label: is required \(a name for them\)"):
        build(ctx, "widgets", {"count": 2}, _Widgets)
    with pytest.raises(ConfigError, match=r"widgets.count: 12 is out of range \(must be 1..9\)"):
        build(ctx, "widgets", {"label": "w", "count": 12}, _Widgets)
    assert [(row.path, row.default, row.description) for row in key_rows(_Widgets, "widgets")] == [
        ("widgets.label", "required", "what they are called"),
        ("widgets.count", "3", "how many widgets"),
    ]
    # As a feature's section, loaded from hmsproxy's own file.
    section = keyed_section("widgets", _Widgets, lambda settings: [], default=_Widgets(label="none"))
    config_file = tmp_path / "hmsproxy.yml"
    config_file.write_text(
        "primary-meta-store: {name: p, remote-meta-store-uris: thrift://127.0.0.1:9083}\nwidgets: {label: cogs, count: 2}\n"
    )
    assert load_config(config_file, [section]).sections["widgets"] == _Widgets(count=2, label="cogs")
    assert "| `widgets.count` | 3 | how many widgets |" in markdown([section])


def test_server_errors_name_file_key_and_reason(tmp_path):
    config_file = tmp_path / "hmsproxy.yml"
    config_file.write_text(
        "server: {handshake-timeout-s: x}\nprimary-meta-store: {name: p, remote-meta-store-uris: thrift://127.0.0.1:9083}\n"
    )
    with pytest.raises(ConfigError) as caught:
        load_config(config_file)
    assert str(caught.value) == f"{config_file}: server.handshake-timeout-s: must be a number, got a string ('x')"


def test_waggle_dance_metastore_entries_read_the_same_definitions(tmp_path, caplog):
    """A federation file's metastore keys are MetastoreConfig's, spelt as Spring allows."""
    from hmsproxy.config.waggle_dance import load_waggle_dance

    federation = tmp_path / "waggle-dance-federation.yml"
    federation.write_text(
        "primary-meta-store:\n  name: p\n  remoteMetaStoreUris: thrift://127.0.0.1:9083\n  cache: {ttl-s: 5}\n"
        "federated-meta-stores:\n  - name: dw\n    remote-meta-store-uris: thrift://127.0.0.1:9084\n    latency: 7\n    colour: red\n"
    )
    with caplog.at_level(logging.WARNING, logger="hmsproxy.config"):
        config = load_waggle_dance(None, federation)
    assert config.primary.cache is not None and config.primary.cache.ttl_s == 5.0
    assert config.federated[0].latency_ms == 7
    assert any("federated-meta-stores[0].colour: unknown key, ignored" in m for m in caplog.messages)
    dataclasses.replace(config.primary)  # still a plain frozen dataclass

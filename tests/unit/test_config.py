"""Tests for hmsproxy.config: both file formats, defaults, every validation error."""

from __future__ import annotations

import argparse
import logging
import textwrap
from pathlib import Path

import pytest

from hmsproxy.app import load_config
from hmsproxy.config import ConfigError, describe, load, load_from_paths, load_waggle_dance
from hmsproxy.config.model import (
    AccessControlType,
    DatabaseResolution,
    MappedTables,
    ServerConfig,
)

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "config"

MINIMAL_PRIMARY = """\
primary-meta-store:
  name: primary
  remote-meta-store-uris: thrift://localhost:9084
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def own(tmp_path: Path, text: str):
    return load_config(write(tmp_path, "hmsproxy.yml", text))


def own_error(tmp_path: Path, text: str) -> ConfigError:
    path = write(tmp_path, "hmsproxy.yml", text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.file == str(path)
    assert str(info.value).startswith(f"{path}: ")
    return info.value


def wd(tmp_path: Path, federation: str, server: str | None = None):
    server_path = write(tmp_path, "waggle-dance-server.yml", server) if server is not None else None
    return load_waggle_dance(server_path, write(tmp_path, "waggle-dance-federation.yml", federation))


def wd_error(tmp_path: Path, federation: str, server: str | None = None) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        wd(tmp_path, federation, server)
    return info.value


def assert_error(error: ConfigError, file: str, key_path: str, *reason_parts: str) -> None:
    assert error.file.endswith(file), error
    assert error.key_path == key_path, error
    for part in reason_parts:
        assert part in error.reason, error
    assert f"{file}: {key_path}: " in str(error) if key_path else f"{file}: " in str(error)


# --------------------------------------------------------------------------------------
# Samples


def test_own_example_loads():
    config = load_config(SAMPLES / "hmsproxy.example.yml")
    assert config.database_resolution is DatabaseResolution.PREFIXED
    assert config.server == ServerConfig(
        host="127.0.0.1",
        port=9083,
        transport="buffered",
        fanout_timeout_ms=2000,
        connect_timeout_s=5.0,
        backend_timeout_s=600.0,
    )
    primary = config.primary
    assert primary.primary and primary.name == "primary"
    assert primary.access_control_type is AccessControlType.READ_AND_WRITE_AND_CREATE
    assert primary.hive_version == "2.3"
    waggle, archive = config.federated
    assert waggle.uris == ("thrift://hms-a.example.com:9083", "thrift://hms-b.example.com:9083")
    assert waggle.database_prefix == "w_"
    assert waggle.mapped_databases == ("sales", "log.*")
    assert waggle.mapped_tables == (MappedTables("sales", ("orders.*", "customers")),)
    assert waggle.database_name_mapping == {"sales": "sales_eu"}
    assert waggle.latency_ms == 500
    assert archive.database_prefix == "archive_"
    assert archive.access_control_type is AccessControlType.READ_AND_WRITE_ON_DATABASE_WHITELIST
    assert archive.writable_database_white_list == ("scratch",)
    assert config.sources == (str(SAMPLES / "hmsproxy.example.yml"),)


def test_waggle_dance_samples_load(caplog):
    caplog.set_level(logging.WARNING, logger="hmsproxy.config")
    config = load_waggle_dance(SAMPLES / "waggle-dance-server.yml", SAMPLES / "waggle-dance-federation.yml")
    assert config.server.port == 48869
    assert config.server.host == "0.0.0.0"
    assert config.database_resolution is DatabaseResolution.PREFIXED
    assert config.primary.access_control_type is (AccessControlType.READ_AND_WRITE_AND_CREATE_ON_DATABASE_WHITELIST)
    assert config.primary.writable_database_white_list == ("scratch", "user_.*")
    dw, emr = config.federated
    assert dw.uris == ("thrift://dw-hms-1.example.com:9083", "thrift://dw-hms-2.example.com:9083")
    assert dw.latency_ms == 2000
    assert dw.database_name_mapping == {"datawarehouse": "booking"}
    assert dw.mapped_tables == (MappedTables("bookings", ("hotel_.*", "flights")),)
    assert emr.database_prefix == "emr_"
    assert emr.mapped_databases is None
    messages = caplog.text
    assert "federated-meta-stores[1].metastore-tunnel" in messages
    assert "federated-meta-stores[1].hive-metastore-filter-hook" in messages


def test_describe_samples():
    text = describe(load_config(SAMPLES / "hmsproxy.example.yml"))
    assert "Database resolution: PREFIXED" in text
    assert "[primary] primary" in text
    assert "[federated] waggle" in text
    assert "thrift://hms-a.example.com:9083" in text
    assert "'w_'" in text
    assert "sales, log.*" in text
    assert "sales: orders.*, customers" in text
    assert "sales -> also shown as w_sales_eu" in text
    assert "READ_ONLY" in text
    assert "writable databases:" in text and "scratch" in text
    assert "500 ms" in text
    assert "hive version:" in text and "3.1" in text
    assert "probed on first connect" in text

    text = describe(load_waggle_dance(SAMPLES / "waggle-dance-server.yml", SAMPLES / "waggle-dance-federation.yml"))
    assert "0.0.0.0:48869" in text
    assert "[federated] emr" in text


def test_describe_manual_and_no_databases(tmp_path):
    config = own(
        tmp_path,
        MINIMAL_PRIMARY
        + """\
federated-meta-stores:
  - name: other
    remote-meta-store-uris: thrift://other:9083
    mapped-databases: []
""",
    )
    text = describe(config)
    assert "Database resolution: MANUAL" in text
    assert "not used in MANUAL mode" in text
    assert "none (no database of this metastore is visible)" in text


# --------------------------------------------------------------------------------------
# hmsproxy's own format: defaults


def test_own_minimal_defaults(tmp_path):
    config = own(
        tmp_path,
        MINIMAL_PRIMARY
        + """\
federated-meta-stores:
  - name: Waggle_Prod
    remote-meta-store-uris: thrift://wp:9083
""",
    )
    assert config.server == ServerConfig()
    assert config.database_resolution is DatabaseResolution.MANUAL
    primary = config.primary
    assert primary.database_prefix == ""
    assert primary.access_control_type is AccessControlType.READ_ONLY
    assert primary.mapped_databases is None
    assert primary.mapped_tables == ()
    assert primary.database_name_mapping == {}
    assert primary.writable_database_white_list == ()
    assert primary.read_only_uris == ()
    assert primary.latency_ms == 0
    assert primary.hive_version is None
    (federated,) = config.federated
    assert not federated.primary
    assert federated.database_prefix == "waggle_prod_"
    assert federated.access_control_type is AccessControlType.READ_ONLY


def test_mapped_databases_absent_null_empty(tmp_path):
    config = own(
        tmp_path,
        MINIMAL_PRIMARY
        + """\
federated-meta-stores:
  - {name: absent, remote-meta-store-uris: "thrift://a:1"}
  - {name: null_value, remote-meta-store-uris: "thrift://b:1", mapped-databases: null}
  - {name: empty, remote-meta-store-uris: "thrift://c:1", mapped-databases: []}
  - {name: some, remote-meta-store-uris: "thrift://d:1", mapped-databases: [" Sales ", "log.*", 2019]}
""",
    )
    absent, null_value, empty, some = config.federated
    assert absent.mapped_databases is None
    assert null_value.mapped_databases is None
    assert empty.mapped_databases == ()
    assert some.mapped_databases == ("Sales", "log.*", "2019")


def test_explicit_prefixes_and_empty_prefix(tmp_path):
    config = own(
        tmp_path,
        """\
database-resolution: PREFIXED
primary-meta-store:
  name: primary
  remote-meta-store-uris: thrift://p:1
  database-prefix: Main_
federated-meta-stores:
  - {name: a, remote-meta-store-uris: "thrift://a:1", database-prefix: ""}
""",
    )
    assert config.primary.database_prefix == "main_"
    assert config.federated[0].database_prefix == ""


def test_own_everything_parsed(tmp_path):
    config = own(
        tmp_path,
        """\
server:
  host: 0.0.0.0
  port: "9999"
  transport: FRAMED
  fanout-timeout-ms: 300
  connect-timeout-s: 1.5
  backend-timeout-s: 30
database-resolution: prefixed
primary-meta-store:
  name: primary
  remote-meta-store-uris: "thrift://p1:9083, thrift://p2:9083/, thrift://p1:9083,"
  read-only-remote-meta-store-uris: thrift://replica:9083
  access-control-type: read_and_write_and_create_on_database_whitelist
  writable-database-white-list: [etl, "user_.*"]
  latency: 10
  hive-version: "4.0.1"
federated-meta-stores:
  - name: w
    remote-meta-store-uris: ["thrift://[::1]:9083"]
    database-name-mapping: {DataWarehouse: Booking}
    mapped-tables:
      - {database: Sales, mapped-tables: [orders]}
""",
    )
    assert config.server == ServerConfig("0.0.0.0", 9999, "framed", 300, 1.5, 30.0)
    assert config.database_resolution is DatabaseResolution.PREFIXED
    primary = config.primary
    assert primary.uris == ("thrift://p1:9083", "thrift://p2:9083")
    assert primary.read_only_uris == ("thrift://replica:9083",)
    assert primary.access_control_type is AccessControlType.READ_AND_WRITE_AND_CREATE_ON_DATABASE_WHITELIST
    assert primary.writable_database_white_list == ("etl", "user_.*")
    assert primary.latency_ms == 10
    assert primary.hive_version == "4.0.1"
    (w,) = config.federated
    assert w.uris == ("thrift://[::1]:9083",)
    assert w.database_name_mapping == {"datawarehouse": "booking"}
    assert w.mapped_tables == (MappedTables("sales", ("orders",)),)


def test_database_name_clashes_are_not_config_errors(tmp_path):
    config = own(
        tmp_path,
        MINIMAL_PRIMARY
        + """\
federated-meta-stores:
  - {name: a, remote-meta-store-uris: "thrift://a:1", mapped-databases: [sales]}
  - {name: b, remote-meta-store-uris: "thrift://b:1", mapped-databases: [sales],
     database-name-mapping: {x: sales}}
""",
    )
    assert len(config.federated) == 2


# --------------------------------------------------------------------------------------
# hmsproxy's own format: errors


def test_error_str_format():
    error = ConfigError("f.yml", "a.b[0].c", "is wrong")
    assert str(error) == "f.yml: a.b[0].c: is wrong"
    assert str(ConfigError("f.yml", "", "broken")) == "f.yml: broken"


def test_unknown_top_level_key_suggests(tmp_path):
    error = own_error(tmp_path, MINIMAL_PRIMARY + "database-resolutoin: PREFIXED\n")
    assert_error(error, "hmsproxy.yml", "database-resolutoin", "unknown key", "did you mean 'database-resolution'?")


def test_unknown_server_key_suggests(tmp_path):
    error = own_error(tmp_path, MINIMAL_PRIMARY + "server: {prot: 9083}\n")
    assert_error(error, "hmsproxy.yml", "server.prot", "unknown key", "'port'")


def test_unknown_metastore_key_suggests(tmp_path):
    error = own_error(
        tmp_path,
        MINIMAL_PRIMARY
        + """\
federated-meta-stores:
  - name: a
    remote-meta-store-uris: thrift://a:1
    mapped-database: [x]
""",
    )
    assert_error(error, "hmsproxy.yml", "federated-meta-stores[0].mapped-database", "did you mean 'mapped-databases'?")


def test_camel_case_key_in_own_format_suggests_kebab(tmp_path):
    error = own_error(
        tmp_path,
        """\
primary-meta-store:
  name: primary
  remoteMetaStoreUris: thrift://p:1
""",
    )
    assert_error(error, "hmsproxy.yml", "primary-meta-store.remoteMetaStoreUris", "did you mean 'remote-meta-store-uris'?")


def test_waggle_dance_only_key_is_unknown_in_own_format(tmp_path):
    error = own_error(tmp_path, MINIMAL_PRIMARY + "  metastore-tunnel: {route: a}\n")
    assert_error(error, "hmsproxy.yml", "primary-meta-store.metastore-tunnel", "unknown key")


def test_unknown_mapped_tables_key(tmp_path):
    error = own_error(
        tmp_path,
        MINIMAL_PRIMARY + "  mapped-tables: [{database: a, mapped-tables: [t], table: x}]\n",
    )
    assert_error(error, "hmsproxy.yml", "primary-meta-store.mapped-tables[0].table", "unknown key")


@pytest.mark.parametrize(
    ("text", "key_path", "reason"),
    [
        ("federated-meta-stores: []\n", "primary-meta-store", "is required"),
        (
            "primary-meta-store: {remote-meta-store-uris: 'thrift://p:1'}\n",
            "primary-meta-store.name",
            "is required",
        ),
        ("primary-meta-store: {name: p}\n", "primary-meta-store.remote-meta-store-uris", "is required"),
        (
            "primary-meta-store: {name: '  ', remote-meta-store-uris: 'thrift://p:1'}\n",
            "primary-meta-store.name",
            "must not be empty",
        ),
        (
            MINIMAL_PRIMARY + "  mapped-tables: [{mapped-tables: [t]}]\n",
            "primary-meta-store.mapped-tables[0].database",
            "is required",
        ),
        (
            MINIMAL_PRIMARY + "  mapped-tables: [{database: d}]\n",
            "primary-meta-store.mapped-tables[0].mapped-tables",
            "is required",
        ),
        (
            MINIMAL_PRIMARY + "  mapped-tables: [{database: d, mapped-tables: []}]\n",
            "primary-meta-store.mapped-tables[0].mapped-tables",
            "at least one",
        ),
    ],
)
def test_missing_required_keys(tmp_path, text, key_path, reason):
    assert_error(own_error(tmp_path, text), "hmsproxy.yml", key_path, reason)


def test_empty_file_needs_primary(tmp_path):
    assert_error(own_error(tmp_path, ""), "hmsproxy.yml", "primary-meta-store", "is required")


@pytest.mark.parametrize(
    ("text", "key_path", "reason"),
    [
        ("- a\n- b\n", "", "must hold a mapping"),
        (MINIMAL_PRIMARY + "server: 9083\n", "server", "must be a mapping"),
        (MINIMAL_PRIMARY + "server: {port: abc}\n", "server.port", "must be a whole number"),
        (MINIMAL_PRIMARY + "server: {port: 90.5}\n", "server.port", "must be a whole number"),
        (MINIMAL_PRIMARY + "server: {host: [a]}\n", "server.host", "must be a string"),
        (MINIMAL_PRIMARY + "server: {connect-timeout-s: soon}\n", "server.connect-timeout-s", "must be a number"),
        (MINIMAL_PRIMARY + "federated-meta-stores: {name: a}\n", "federated-meta-stores", "must be a list"),
        (MINIMAL_PRIMARY + "federated-meta-stores: [a]\n", "federated-meta-stores[0]", "must be a mapping"),
        (
            "primary-meta-store: {name: [p], remote-meta-store-uris: 'thrift://p:1'}\n",
            "primary-meta-store.name",
            "must be a string, got a list",
        ),
        (
            "primary-meta-store: {name: yes, remote-meta-store-uris: 'thrift://p:1'}\n",
            "primary-meta-store.name",
            "quote it",
        ),
        (MINIMAL_PRIMARY + "  mapped-databases: sales\n", "primary-meta-store.mapped-databases", "must be a list"),
        (MINIMAL_PRIMARY + "  mapped-databases: [[a]]\n", "primary-meta-store.mapped-databases[0]", "must be a string"),
        (MINIMAL_PRIMARY + "  mapped-tables: {a: b}\n", "primary-meta-store.mapped-tables", "must be a list"),
        (MINIMAL_PRIMARY + "  database-name-mapping: [a]\n", "primary-meta-store.database-name-mapping", "must be a mapping"),
        (MINIMAL_PRIMARY + "  latency: true\n", "primary-meta-store.latency", "must be a whole number"),
        (MINIMAL_PRIMARY + "  latency: -1\n", "primary-meta-store.latency", "too small"),
        (MINIMAL_PRIMARY + "  writable-database-white-list: etl\n", "primary-meta-store.writable-database-white-list", "must be a list"),
    ],
)
def test_wrong_types(tmp_path, text, key_path, reason):
    assert_error(own_error(tmp_path, text), "hmsproxy.yml", key_path, reason)


@pytest.mark.parametrize(
    ("uris", "reason"),
    [
        ("http://p:9083", "is not a metastore URI of the form thrift://host:port"),
        ("thrift://p", "thrift://host:port"),
        ("thrift://:9083", "thrift://host:port"),
        ("p:9083", "thrift://host:port"),
        ("thrift://p:9083/db", "thrift://host:port"),
        ("thrift://p:70000", "out of range"),
        ("thrift://p:0", "out of range"),
        ("' , '", "at least one"),
        ("thrift://ok:1,thrift://bad host:1", "'thrift://bad host:1'"),
    ],
)
def test_bad_uris(tmp_path, uris, reason):
    error = own_error(tmp_path, f"primary-meta-store:\n  name: p\n  remote-meta-store-uris: {uris}\n")
    assert_error(error, "hmsproxy.yml", "primary-meta-store.remote-meta-store-uris", reason)


def test_bad_read_only_uris(tmp_path):
    error = own_error(tmp_path, MINIMAL_PRIMARY + "  read-only-remote-meta-store-uris: replica:9083\n")
    assert_error(error, "hmsproxy.yml", "primary-meta-store.read-only-remote-meta-store-uris", "thrift://host:port")


@pytest.mark.parametrize(
    ("snippet", "key_path"),
    [
        ("  mapped-databases: [ok, 'sales(']\n", "primary-meta-store.mapped-databases[1]"),
        ("  writable-database-white-list: ['[a-']\n", "primary-meta-store.writable-database-white-list[0]"),
        (
            "  mapped-tables: [{database: d, mapped-tables: [ok, '*bad']}]\n",
            "primary-meta-store.mapped-tables[0].mapped-tables[1]",
        ),
    ],
)
def test_invalid_regexes(tmp_path, snippet, key_path):
    error = own_error(tmp_path, MINIMAL_PRIMARY + snippet)
    assert_error(error, "hmsproxy.yml", key_path, "is not a valid regular expression")


def test_duplicate_metastore_names(tmp_path):
    error = own_error(
        tmp_path,
        MINIMAL_PRIMARY
        + """\
federated-meta-stores:
  - {name: a, remote-meta-store-uris: "thrift://a:1"}
  - {name: primary, remote-meta-store-uris: "thrift://b:1"}
""",
    )
    assert_error(error, "hmsproxy.yml", "federated-meta-stores[1].name", "'primary' is already the name", "primary-meta-store")


def test_duplicate_prefixes_in_prefixed_mode(tmp_path):
    error = own_error(
        tmp_path,
        "database-resolution: PREFIXED\n"
        + MINIMAL_PRIMARY
        + """\
federated-meta-stores:
  - {name: a, remote-meta-store-uris: "thrift://a:1", database-prefix: X_}
  - {name: b, remote-meta-store-uris: "thrift://b:1", database-prefix: x_}
""",
    )
    assert_error(
        error,
        "hmsproxy.yml",
        "federated-meta-stores[1].database-prefix",
        "prefix 'x_' is already used by metastore 'a'",
        "must be unique in PREFIXED mode",
    )


def test_default_prefix_clashing_in_prefixed_mode(tmp_path):
    error = own_error(
        tmp_path,
        "database-resolution: PREFIXED\n"
        + MINIMAL_PRIMARY
        + """\
federated-meta-stores:
  - {name: a, remote-meta-store-uris: "thrift://a:1", database-prefix: b_}
  - {name: b, remote-meta-store-uris: "thrift://b:1"}
""",
    )
    assert_error(error, "hmsproxy.yml", "federated-meta-stores[1].database-prefix", "'b_' (the default for this metastore)")


def test_empty_federated_prefix_clashes_with_primary_in_prefixed_mode(tmp_path):
    error = own_error(
        tmp_path,
        "database-resolution: PREFIXED\n"
        + MINIMAL_PRIMARY
        + "federated-meta-stores: [{name: a, remote-meta-store-uris: 'thrift://a:1', database-prefix: ''}]\n",
    )
    assert_error(error, "hmsproxy.yml", "federated-meta-stores[0].database-prefix", "prefix '' is already used by metastore 'primary'")


def test_duplicate_prefixes_allowed_in_manual_mode_with_warning(tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="hmsproxy.config")
    config = own(
        tmp_path,
        MINIMAL_PRIMARY
        + """\
federated-meta-stores:
  - {name: a, remote-meta-store-uris: "thrift://a:1", database-prefix: x_}
  - {name: b, remote-meta-store-uris: "thrift://b:1", database-prefix: x_}
""",
    )
    assert [m.database_prefix for m in config.federated] == ["x_", "x_"]
    assert "federated-meta-stores[1].database-prefix" in caplog.text


def test_overlapping_prefixes_warn(tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="hmsproxy.config")
    own(
        tmp_path,
        "database-resolution: PREFIXED\n"
        + MINIMAL_PRIMARY
        + """\
federated-meta-stores:
  - {name: a, remote-meta-store-uris: "thrift://a:1", database-prefix: w_}
  - {name: b, remote-meta-store-uris: "thrift://b:1", database-prefix: w_x_}
""",
    )
    assert "'w_x_' starts with the prefix 'w_'" in caplog.text


@pytest.mark.parametrize("port", [0, 65536, -5])
def test_server_port_range(tmp_path, port):
    error = own_error(tmp_path, MINIMAL_PRIMARY + f"server: {{port: {port}}}\n")
    assert_error(error, "hmsproxy.yml", "server.port", "out of range (must be 1..65535)")


@pytest.mark.parametrize(
    ("snippet", "key_path", "reason"),
    [
        ("server: {fanout-timeout-ms: 0}\n", "server.fanout-timeout-ms", "too small"),
        ("server: {connect-timeout-s: 0}\n", "server.connect-timeout-s", "greater than 0"),
        ("server: {backend-timeout-s: -1}\n", "server.backend-timeout-s", "greater than 0"),
    ],
)
def test_server_timeouts(tmp_path, snippet, key_path, reason):
    assert_error(own_error(tmp_path, MINIMAL_PRIMARY + snippet), "hmsproxy.yml", key_path, reason)


def test_enums_case_insensitive_and_canonical(tmp_path):
    config = own(
        tmp_path,
        """\
database-resolution: " Prefixed "
server: {transport: Framed}
primary-meta-store:
  name: p
  remote-meta-store-uris: thrift://p:1
  access-control-type: read_and_write_and_create
federated-meta-stores:
  - {name: a, remote-meta-store-uris: "thrift://a:1", access-control-type: Read_And_Write_On_Database_Whitelist,
     writable-database-white-list: [x]}
""",
    )
    assert config.database_resolution is DatabaseResolution.PREFIXED
    assert config.server.transport == "framed"
    assert config.primary.access_control_type is AccessControlType.READ_AND_WRITE_AND_CREATE
    assert config.federated[0].access_control_type is AccessControlType.READ_AND_WRITE_ON_DATABASE_WHITELIST


@pytest.mark.parametrize(
    ("snippet", "key_path", "reason"),
    [
        ("database-resolution: AUTO\n", "database-resolution", "'AUTO' is not one of PREFIXED, MANUAL"),
        ("server: {transport: http}\n", "server.transport", "'http' is not one of buffered, framed"),
        ("  access-control-type: WRITE\n", "primary-meta-store.access-control-type", "'WRITE' is not one of READ_ONLY"),
        ("database-resolution: 1\n", "database-resolution", "an integer (1) is not one of"),
    ],
)
def test_bad_enum_values(tmp_path, snippet, key_path, reason):
    assert_error(own_error(tmp_path, MINIMAL_PRIMARY + snippet), "hmsproxy.yml", key_path, reason)


@pytest.mark.parametrize("access", ["READ_AND_WRITE_AND_CREATE", "READ_AND_WRITE_AND_CREATE_ON_DATABASE_WHITELIST"])
def test_federated_access_types_restricted(tmp_path, access):
    error = own_error(
        tmp_path,
        MINIMAL_PRIMARY + f"federated-meta-stores: [{{name: a, remote-meta-store-uris: 'thrift://a:1', access-control-type: {access}}}]\n",
    )
    assert error.key_path == "federated-meta-stores[0].access-control-type"
    assert error.reason == (
        f"{access} is only allowed on the primary metastore (allowed here: READ_ONLY, READ_AND_WRITE_ON_DATABASE_WHITELIST)"
    )


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("2.3", "must be a quoted version string"),
        ("'2.x'", "is not a Hive version"),
        ("'v3.1'", "is not a Hive version"),
        ("'4.0.1.2'", "is not a Hive version"),
        ("'0.13'", "is not a Hive version"),
    ],
)
def test_hive_version_format(tmp_path, value, reason):
    error = own_error(tmp_path, MINIMAL_PRIMARY + f"  hive-version: {value}\n")
    assert_error(error, "hmsproxy.yml", "primary-meta-store.hive-version", reason)


@pytest.mark.parametrize("version", ["2.3", "3.1", "4.0.1", "2.3.9"])
def test_hive_version_accepted(tmp_path, version):
    config = own(tmp_path, MINIMAL_PRIMARY + f"  hive-version: '{version}'\n")
    assert config.primary.hive_version == version


def test_database_name_mapping_errors(tmp_path):
    error = own_error(tmp_path, MINIMAL_PRIMARY + "  database-name-mapping: {a: shown, b: SHOWN}\n")
    assert_error(error, "hmsproxy.yml", "primary-meta-store.database-name-mapping.b", "already the name shown for 'a'")
    error = own_error(tmp_path, MINIMAL_PRIMARY + "  database-name-mapping: {a: x, A: y}\n")
    assert_error(error, "hmsproxy.yml", "primary-meta-store.database-name-mapping.A", "mapped twice")
    error = own_error(tmp_path, MINIMAL_PRIMARY + "  database-name-mapping: {a: ''}\n")
    assert_error(error, "hmsproxy.yml", "primary-meta-store.database-name-mapping.a", "must not be empty")


def test_name_mapping_outside_mapped_databases_warns(tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="hmsproxy.config")
    own(tmp_path, MINIMAL_PRIMARY + "  mapped-databases: [sales]\n  database-name-mapping: {hr: people}\n")
    assert "'hr' is not matched by mapped-databases" in caplog.text


def test_duplicate_mapped_tables_database_is_an_error(tmp_path):
    error = own_error(
        tmp_path,
        MINIMAL_PRIMARY + "  mapped-tables: [{database: d, mapped-tables: [a]}, {database: D, mapped-tables: [b]}]\n",
    )
    assert_error(
        error, "hmsproxy.yml", "primary-meta-store.mapped-tables[1].database", "already listed at primary-meta-store.mapped-tables[0]"
    )


def test_white_list_warnings(tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="hmsproxy.config")
    own(tmp_path, MINIMAL_PRIMARY + "  writable-database-white-list: [a]\n")
    assert "ignored: access-control-type is READ_ONLY" in caplog.text
    caplog.clear()
    own(tmp_path, MINIMAL_PRIMARY + "  access-control-type: READ_AND_WRITE_ON_DATABASE_WHITELIST\n")
    assert "allows no writes at all" in caplog.text


def test_yaml_syntax_error(tmp_path):
    error = own_error(tmp_path, "primary-meta-store:\n  name: [unclosed\n")
    assert error.key_path == ""
    assert "invalid YAML" in error.reason and "line" in error.reason


def test_yaml_duplicate_key(tmp_path):
    error = own_error(tmp_path, MINIMAL_PRIMARY + "  name: again\n")
    assert "duplicate key 'name'" in error.reason
    assert "line 2" in error.reason


def test_yaml_merge_keys_are_not_duplicates(tmp_path):
    config = own(
        tmp_path,
        """\
primary-meta-store: &base
  name: p
  remote-meta-store-uris: thrift://p:1
  latency: 5
federated-meta-stores:
  - <<: *base
    name: f
    latency: 7
""",
    )
    assert config.federated[0].latency_ms == 7
    assert config.federated[0].uris == ("thrift://p:1",)


def test_missing_file(tmp_path):
    path = tmp_path / "nope.yml"
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).startswith(f"{path}: cannot read the file")


# --------------------------------------------------------------------------------------
# Waggle Dance format

WD_FEDERATION = """\
primary-meta-store:
  name: primary
  remote-meta-store-uris: thrift://primary:9083
  access-control-type: READ_AND_WRITE_AND_CREATE
federated-meta-stores:
  - name: Waggle_Prod
    remote-meta-store-uris: thrift://a:9083,thrift://b:9083
    mapped-databases:
      - etldata
      - mydata
  - name: other
    remote-meta-store-uris: thrift://c:9083
    database-prefix: o_
    mapped-databases: []
"""


def test_waggle_dance_defaults_without_server_file(tmp_path):
    config = wd(tmp_path, WD_FEDERATION)
    assert config.server.port == 48869
    assert config.server.host == "0.0.0.0"
    assert config.database_resolution is DatabaseResolution.MANUAL
    assert config.primary.database_prefix == ""
    assert config.primary.mapped_databases is None
    prod, other = config.federated
    assert prod.database_prefix == "waggle_prod_"
    assert prod.uris == ("thrift://a:9083", "thrift://b:9083")
    assert prod.mapped_databases == ("etldata", "mydata")
    assert prod.access_control_type is AccessControlType.READ_ONLY
    assert other.database_prefix == "o_"
    assert other.mapped_databases == ()
    assert config.sources == (str(tmp_path / "waggle-dance-federation.yml"),)


def test_waggle_dance_server_file(tmp_path):
    config = wd(tmp_path, WD_FEDERATION, "port: 9099\ndatabase-resolution: prefixed\nverbose: true\n")
    assert config.server.port == 9099
    assert config.database_resolution is DatabaseResolution.PREFIXED
    assert len(config.sources) == 2


def test_waggle_dance_server_file_without_resolution_defaults_to_manual(tmp_path):
    config = wd(tmp_path, WD_FEDERATION, "port: 9099\n")
    assert config.database_resolution is DatabaseResolution.MANUAL


def test_waggle_dance_empty_server_file(tmp_path):
    config = wd(tmp_path, WD_FEDERATION, "")
    assert config.server.port == 48869


def test_waggle_dance_server_file_accepts_known_keys(tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="hmsproxy.config")
    wd(
        tmp_path,
        WD_FEDERATION,
        """\
port: 0xBEE5
verbose: false
database-resolution: MANUAL
disconnect-connection-delay: 5
disconnect-time-unit: MINUTES
status-polling-delay: 5
status-polling-delay-time-unit: minutes
thrift-server-stop-timeout-val-in-seconds: 60
thrift-server-request-timeout: 20
thrift-server-request-timeout-unit: SECONDS
queryFunctionsAcrossAllMetastores: true
yaml-storage:
  overwrite-config-on-shutdown: true
""",
    )
    assert caplog.text == ""  # all at Waggle Dance's defaults: nothing to warn about

    caplog.clear()
    wd(
        tmp_path,
        WD_FEDERATION,
        """\
verbose: true
disconnect-connection-delay: 10
configuration-properties:
  hive.metastore.client.socket.timeout: 600
graphite:
  host: graphite.example.com
logging:
  config: file:/etc/wd/log4j2.xml
""",
    )
    for key in (
        "verbose",
        "disconnect-connection-delay",
        "configuration-properties.hive.metastore.client.socket.timeout",
        "graphite",
        "logging",
    ):
        assert f"waggle-dance-server.yml: {key}: accepted but not acted on" in caplog.text


def test_waggle_dance_server_unknown_key_warns(tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="hmsproxy.config")
    config = wd(tmp_path, WD_FEDERATION, "prot: 9999\n")
    assert config.server.port == 48869
    assert "waggle-dance-server.yml: prot: unknown key, ignored (did you mean 'port'?)" in caplog.text


@pytest.mark.parametrize(
    ("server", "key_path", "reason"),
    [
        ("port: 0\n", "port", "out of range"),
        ("port: 70000\n", "port", "out of range"),
        ("port: nine\n", "port", "must be a whole number"),
        ("database-resolution: AUTOMATIC\n", "database-resolution", "is not one of PREFIXED, MANUAL"),
        ("disconnect-time-unit: FORTNIGHTS\n", "disconnect-time-unit", "is not one of NANOSECONDS"),
        ("verbose: maybe\n", "verbose", "must be true or false"),
        ("disconnect-connection-delay: 0\n", "disconnect-connection-delay", "too small"),
        ("graphite: 5\n", "graphite", "must be a mapping"),
        ("[port]\n", "", "must hold a mapping"),
    ],
)
def test_waggle_dance_server_errors(tmp_path, server, key_path, reason):
    error = wd_error(tmp_path, WD_FEDERATION, server)
    assert_error(error, "waggle-dance-server.yml", key_path, reason)


def test_waggle_dance_brief_error_message(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(
        tmp_path,
        "waggle-dance-federation.yml",
        """\
primary-meta-store:
  name: primary
  remote-meta-store-uris: thrift://primary:9083
federated-meta-stores:
  - name: a
    remote-meta-store-uris: thrift://a:9083
  - name: b
    remote-meta-store-uris: thrift://b:9083
    access-control-type: READ_AND_WRITE_AND_CREATE
""",
    )
    with pytest.raises(ConfigError) as info:
        load_waggle_dance(None, "waggle-dance-federation.yml")
    assert str(info.value) == (
        "waggle-dance-federation.yml: federated-meta-stores[1].access-control-type: "
        "READ_AND_WRITE_AND_CREATE is only allowed on the primary metastore "
        "(allowed here: READ_ONLY, READ_AND_WRITE_ON_DATABASE_WHITELIST)"
    )


def test_waggle_dance_camel_case_keys(tmp_path):
    config = wd(
        tmp_path,
        """\
primaryMetaStore:
  name: primary
  remoteMetaStoreUris: thrift://primary:9083
  accessControlType: READ_AND_WRITE_ON_DATABASE_WHITELIST
  writableDatabaseWhiteList: [etl]
federatedMetaStores:
  - name: a
    remoteMetaStoreUris: thrift://a:9083
    databasePrefix: x_
    mappedDatabases: [sales]
""",
    )
    assert config.primary.writable_database_white_list == ("etl",)
    assert config.federated[0].database_prefix == "x_"
    assert config.federated[0].mapped_databases == ("sales",)


def test_waggle_dance_same_key_two_spellings(tmp_path):
    error = wd_error(
        tmp_path,
        """\
primary-meta-store:
  name: primary
  remote-meta-store-uris: thrift://primary:9083
  remoteMetaStoreUris: thrift://other:9083
""",
    )
    assert_error(error, "waggle-dance-federation.yml", "primary-meta-store.remoteMetaStoreUris", "given twice")


def test_waggle_dance_unknown_keys_warn_not_fail(tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="hmsproxy.config")
    config = wd(
        tmp_path,
        """\
primary-meta-store:
  name: primary
  remote-meta-store-uris: thrift://primary:9083
  mapped-database: [x]
federated-meta-stores: []
extra-section: {a: 1}
""",
    )
    assert config.primary.mapped_databases is None
    assert "primary-meta-store.mapped-database: unknown key, ignored (did you mean 'mapped-databases'?)" in caplog.text
    assert "extra-section: unknown key, ignored" in caplog.text


def test_waggle_dance_server_key_in_federation_file_warns(tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="hmsproxy.config")
    config = wd(tmp_path, "database-resolution: PREFIXED\n" + MINIMAL_PRIMARY)
    assert config.database_resolution is DatabaseResolution.MANUAL
    assert "database-resolution: ignored: this is a server setting" in caplog.text


def test_waggle_dance_keys_not_acted_on(tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="hmsproxy.config")
    config = wd(
        tmp_path,
        """\
primary-meta-store:
  name: primary
  remote-meta-store-uris: thrift://primary:9083
  impersonation-enabled: true
  configuration-properties: {hive.metastore.client.socket.timeout: 600}
federated-meta-stores:
  - name: tunnelled
    remote-meta-store-uris: thrift://metastore.domain:9083
    connection-type: TUNNELED
    metastore-tunnel:
      route: ec2-user@bastion-host -> hadoop@emr-master
      private-keys: /home/user/.ssh/key.pem
      known-hosts: /home/user/.ssh/known_hosts
      strict-host-key-checking: no
      timeout: 60000
    hive-metastore-filter-hook: com.example.Filter
    glue-config: {glue-account-id: "123", glue-endpoint: glue.us-east-1.amazonaws.com}
    status: AVAILABLE
    federation-type: FEDERATED
""",
    )
    assert config.federated[0].uris == ("thrift://metastore.domain:9083",)
    for key in (
        "primary-meta-store.impersonation-enabled",
        "primary-meta-store.configuration-properties.hive.metastore.client.socket.timeout",
        "federated-meta-stores[0].connection-type",
        "federated-meta-stores[0].metastore-tunnel",
        "federated-meta-stores[0].hive-metastore-filter-hook",
        "federated-meta-stores[0].glue-config",
    ):
        assert f"{key}: accepted but not acted on" in caplog.text
    assert "status" not in caplog.text
    assert "federation-type" not in caplog.text


def test_waggle_dance_written_back_file_loads_quietly(tmp_path, caplog):
    """The shape Waggle Dance writes on shutdown (defaults spelt out) gives no warnings."""
    caplog.set_level(logging.WARNING, logger="hmsproxy.config")
    config = wd(
        tmp_path,
        """\
primary-meta-store:
  access-control-type: READ_ONLY
  database-prefix: ''
  impersonation-enabled: false
  latency: 0
  name: primary
  remote-meta-store-uris: thrift://primary:9083
  writable-database-white-list: []
federated-meta-stores:
- access-control-type: READ_ONLY
  database-prefix: waggle_
  impersonation-enabled: false
  latency: 0
  mapped-databases:
  - sales
  name: waggle
  remote-meta-store-uris: thrift://a:9083
  writable-database-white-list: []
""",
    )
    assert caplog.text == ""
    assert config.federated[0].database_prefix == "waggle_"


def test_waggle_dance_null_values_mean_unset(tmp_path):
    """Templated files often leave list keys empty (null); Waggle Dance treats them as unset."""
    config = wd(
        tmp_path,
        """\
primary-meta-store:
  access-control-type: READ_AND_WRITE_ON_DATABASE_WHITELIST
  database-prefix: ''
  name: primary
  remote-meta-store-uris: thrift://primary:9083
  latency:
  writable-database-white-list:
federated-meta-stores:
  - name: a
    remote-meta-store-uris: thrift://a:9083
    mapped-databases:
    database-name-mapping:
""",
    )
    assert config.primary.writable_database_white_list == ()
    assert config.primary.latency_ms == 0
    assert config.federated[0].mapped_databases is None
    assert config.federated[0].database_name_mapping == {}


def test_waggle_dance_federated_meta_stores_null(tmp_path):
    config = wd(tmp_path, "primary-meta-store: {name: p, remote-meta-store-uris: 'thrift://p:1'}\nfederated-meta-stores:\n")
    assert config.federated == ()


def test_waggle_dance_read_only_uris_and_latency(tmp_path):
    config = wd(
        tmp_path,
        """\
primary-meta-store:
  name: primary
  remote-meta-store-uris: thrift://rw:9083
  read-only-remote-meta-store-uris: thrift://ro-1:9083,thrift://ro-2:9083
  latency: 250
""",
    )
    assert config.primary.read_only_uris == ("thrift://ro-1:9083", "thrift://ro-2:9083")
    assert config.primary.latency_ms == 250


def test_waggle_dance_hive_version_extension(tmp_path):
    config = wd(tmp_path, MINIMAL_PRIMARY + "  hive-version: '3.1'\n")
    assert config.primary.hive_version == "3.1"


def test_waggle_dance_glue_without_uris_is_an_error(tmp_path):
    error = wd_error(
        tmp_path,
        """\
primary-meta-store:
  name: glue
  glue-config: {glue-account-id: "123", glue-endpoint: glue.us-east-1.amazonaws.com}
""",
    )
    assert_error(error, "waggle-dance-federation.yml", "primary-meta-store.glue-config", "not supported by hmsproxy")


def test_waggle_dance_missing_primary(tmp_path):
    error = wd_error(tmp_path, "federated-meta-stores:\n  - {name: a, remote-meta-store-uris: 'thrift://a:1'}\n")
    assert_error(error, "waggle-dance-federation.yml", "primary-meta-store", "is required")


def test_waggle_dance_missing_uris(tmp_path):
    error = wd_error(
        tmp_path,
        MINIMAL_PRIMARY + "federated-meta-stores:\n  - remote-meta-store-uris:\n    database-prefix: hcom\n",
    )
    assert_error(error, "waggle-dance-federation.yml", "federated-meta-stores[0].name", "is required")
    error = wd_error(tmp_path, MINIMAL_PRIMARY + "federated-meta-stores:\n  - name: a\n    remote-meta-store-uris:\n")
    assert_error(error, "waggle-dance-federation.yml", "federated-meta-stores[0].remote-meta-store-uris", "is required")


def test_waggle_dance_mapped_tables_need_tables(tmp_path):
    error = wd_error(
        tmp_path,
        MINIMAL_PRIMARY
        + """\
federated-meta-stores:
  - remote-meta-store-uris: thrift://localhost:19083
    name: hcom_1
    mapped-databases:
      - db1
    mapped-tables:
      - database: db1
        mapped-tables:
""",
    )
    assert_error(error, "waggle-dance-federation.yml", "federated-meta-stores[0].mapped-tables[0].mapped-tables", "is required")


def test_waggle_dance_duplicate_mapped_tables_database_warns_last_wins(tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="hmsproxy.config")
    config = wd(
        tmp_path,
        MINIMAL_PRIMARY + "  mapped-tables: [{database: d, mapped-tables: [a]}, {database: d, mapped-tables: [b]}]\n",
    )
    assert config.primary.mapped_tables == (MappedTables("d", ("b",)),)
    assert "this later entry replaces it" in caplog.text


def test_waggle_dance_duplicate_prefix_in_prefixed_mode(tmp_path):
    error = wd_error(
        tmp_path,
        """\
federated-meta-stores:
  - remote-meta-store-uris: thrift://localhost:19083
    database-prefix: ""
    name: hcom_1
primary-meta-store:
  remote-meta-store-uris: thrift://localhost:39083
  name: hcom_3
  database-prefix: ""
""",
        "database-resolution: PREFIXED\n",
    )
    assert_error(
        error,
        "waggle-dance-federation.yml",
        "federated-meta-stores[0].database-prefix",
        "already used by metastore 'hcom_3'",
    )


def test_waggle_dance_duplicate_names(tmp_path):
    error = wd_error(
        tmp_path,
        MINIMAL_PRIMARY + "federated-meta-stores:\n  - {name: primary, remote-meta-store-uris: 'thrift://a:1'}\n",
    )
    assert_error(error, "waggle-dance-federation.yml", "federated-meta-stores[0].name", "already the name")


def test_waggle_dance_unknown_enum_value(tmp_path):
    error = wd_error(tmp_path, MINIMAL_PRIMARY + "  access-control-type: READ_WRITE\n")
    assert_error(error, "waggle-dance-federation.yml", "primary-meta-store.access-control-type", "'READ_WRITE' is not one of")


def test_waggle_dance_bad_regex(tmp_path):
    error = wd_error(tmp_path, MINIMAL_PRIMARY + "  mapped-databases: ['(']\n")
    assert_error(error, "waggle-dance-federation.yml", "primary-meta-store.mapped-databases[0]", "not a valid regular expression")


def test_waggle_dance_duplicate_yaml_key(tmp_path):
    """As in Waggle Dance's README: a key given twice in database-name-mapping fails to load."""
    error = wd_error(
        tmp_path,
        MINIMAL_PRIMARY + "  database-name-mapping:\n    datawarehouse: booking\n    datawarehouse: booking2\n",
    )
    assert "duplicate key 'datawarehouse'" in error.reason


def test_waggle_dance_same_shown_name_twice(tmp_path):
    error = wd_error(
        tmp_path,
        MINIMAL_PRIMARY + "  database-name-mapping:\n    datawarehouse: booking\n    datawarehouse2: booking\n",
    )
    assert_error(
        error,
        "waggle-dance-federation.yml",
        "primary-meta-store.database-name-mapping.datawarehouse2",
        "already the name shown for 'datawarehouse'",
    )


# --------------------------------------------------------------------------------------
# Choosing a loader


def test_load_from_paths(tmp_path):
    own_path = write(tmp_path, "hmsproxy.yml", MINIMAL_PRIMARY)
    server = write(tmp_path, "waggle-dance-server.yml", "port: 9999\n")
    federation = write(tmp_path, "waggle-dance-federation.yml", MINIMAL_PRIMARY)

    assert load_from_paths(config=own_path).server.port == 9083
    assert load_from_paths(server_config=server, federation_config=federation).server.port == 9999
    assert load_from_paths(federation_config=federation).server.port == 48869

    for kwargs, reason in (
        ({"config": own_path, "federation_config": federation}, "not both"),
        ({"config": own_path, "server_config": server}, "not both"),
        ({"server_config": server}, "needs its federation file"),
        ({}, "no configuration given"),
    ):
        with pytest.raises(ConfigError) as info:
            load_from_paths(**kwargs)
        assert reason in str(info.value)


def test_load_from_argparse_namespace(tmp_path):
    own_path = write(tmp_path, "hmsproxy.yml", MINIMAL_PRIMARY)
    assert load(argparse.Namespace(config=str(own_path))).primary.name == "primary"
    federation = write(tmp_path, "waggle-dance-federation.yml", MINIMAL_PRIMARY)
    args = argparse.Namespace(config=None, server_config=None, federation_config=str(federation))
    assert load(args).server.port == 48869

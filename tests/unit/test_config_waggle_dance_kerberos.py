"""Waggle Dance's Kerberos properties (configuration-properties in its two files) loaded by hmsproxy as
`server.sasl` and each metastore's `sasl`, with Waggle Dance's meaning (config/waggle_dance_kerberos.py);
what has no meaning here warned about, what Waggle Dance itself refuses refused."""

from __future__ import annotations

import logging

import pytest

from hmsproxy.config import ConfigError, load_waggle_dance
from hmsproxy.config.model import MetastoreSaslConfig
from tests.unit.test_config import assert_error, wd, write

FEDERATION = """\
primary-meta-store:
  name: local
  remote-meta-store-uris: thrift://ms1:9083
  access-control-type: READ_AND_WRITE_AND_CREATE
  impersonation-enabled: true
federated-meta-stores:
- remote-meta-store-uris: thrift://ms2:9083
  database-prefix: dw_
  name: remote
  configuration-properties:
    hive.metastore.kerberos.principal: hive/clustername@HADOOP.COM
    hadoop.rpc.protection: privacy
- remote-meta-store-uris: thrift://ms3:9083
  name: plain
  configurationProperties:
    hive.metastore.sasl.enabled: false
"""


def server(keytab, extra: dict[str, str | None] | None = None) -> str:
    """Waggle Dance's HowToKerberize.md server file, its keytab `keytab`; `extra` properties added or
    replaced (None: left out)."""
    props = {
        "hadoop.security.authentication": "KERBEROS",
        "hive.metastore.sasl.enabled": "true",
        "hive.metastore.kerberos.principal": "hive/_HOST@EXAMPLE.COM",
        "hive.metastore.kerberos.keytab.file": str(keytab),
        "hive.cluster.delegation.token.store.class": "org.apache.hadoop.hive.thrift.ZooKeeperTokenStore",
        "hive.server2.authentication": "KERBEROS",
        "hive.server2.authentication.kerberos.principal": "wd/_HOST@EXAMPLE.COM",
        "hive.server2.authentication.kerberos.keytab": str(keytab),
        "hive.server2.authentication.client.kerberos.principal": "hive/_HOST@EXAMPLE.COM",
        "hadoop.kerberos.keytab.login.autorenewal.enabled": "true",
        "hadoop.proxyuser.hive.users": "'*'",
        "hadoop.proxyuser.hive.hosts": "'*'",
    }
    props.update(extra or {})
    lines = "".join(f"    {k}: {v}\n" for k, v in props.items() if v is not None)
    return f"port: 9083\ndatabase-resolution: PREFIXED\nconfiguration-properties:\n{lines}"


@pytest.fixture
def keytab(tmp_path):
    path = tmp_path / "hive.keytab"
    path.write_bytes(b"\x05\x02")  # its contents are Kerberos' business; the loader checks it is there
    return path


def test_the_how_to_kerberize_files_mean_server_sasl_and_each_metastores_sasl(tmp_path, keytab, caplog):
    caplog.set_level(logging.WARNING, logger="hmsproxy.config")
    config = wd(tmp_path, FEDERATION, server(keytab))
    sasl = config.server.sasl
    assert (sasl.enabled, sasl.principal, sasl.keytab, sasl.qop) == (True, "wd/_HOST@EXAMPLE.COM", str(keytab), "auth")
    assert sasl.impersonation == ("hive",)  # hadoop.proxyuser.hive.{users,hosts}: '*'
    primary, remote, plain = config.primary, *config.federated
    assert primary.sasl == MetastoreSaslConfig("hive/_HOST@EXAMPLE.COM", "auth")  # the server file's
    assert remote.sasl == MetastoreSaslConfig("hive/clustername@HADOOP.COM", "auth-conf")  # its own over the server's
    assert plain.sasl is None  # its own hive.metastore.sasl.enabled: false
    warned = caplog.text
    for key, why in (
        ("configuration-properties.hive.cluster.delegation.token.store.class", "its own store"),
        ("configuration-properties.hive.server2.authentication.client.kerberos.principal", "no meaning here"),
        ("configuration-properties.hadoop.kerberos.keytab.login.autorenewal.enabled", "before the old one ends"),
        ("primary-meta-store.impersonation-enabled", "as its own principal"),
    ):
        assert f"{key}: " in warned and why in warned.split(f"{key}: ")[1].splitlines()[0], (key, warned)
    assert "hive.metastore.sasl.enabled" not in warned and "hive.server2.authentication.kerberos" not in warned


def test_qop_token_lifetimes_and_auth_to_local(tmp_path, keytab):
    config = wd(
        tmp_path,
        FEDERATION,
        server(
            keytab,
            {
                "hive.server2.thrift.sasl.qop": "auth-int",
                "hadoop.rpc.protection": "integrity,privacy",
                "hive.cluster.delegation.token.renew-interval": "3600000",
                "hive.cluster.delegation.token.max-lifetime": "7200000",
                "hadoop.security.auth_to_local": "'RULE:[1:$1@$0](.*@EXAMPLE.COM)s/@.*// DEFAULT'",
            },
        )
        .replace("renew.-interval", "renew-interval")
        .replace("max.-lifetime", "max-lifetime"),
    )
    sasl = config.server.sasl
    assert sasl.qop == "auth-int"
    assert (sasl.token_renew_interval_ms, sasl.token_max_lifetime_ms) == (3600000, 7200000)
    assert len(sasl.auth_to_local) == 2
    assert config.primary.sasl.qop == "auth-int"  # hadoop.rpc.protection: the first the client prefers


def test_kerberized_metastores_behind_a_plain_port_log_in_with_the_metastore_identity(tmp_path, keytab):
    """hive.server2.authentication NOSASL: Waggle Dance's port is plain Thrift, its clients still Kerberized;
    without hive.server2.* keys, hive.metastore.kerberos.principal and .keytab.file are the login."""
    text = server(
        keytab,
        {
            "hive.server2.authentication": "NOSASL",
            "hive.server2.authentication.kerberos.principal": None,
            "hive.server2.authentication.kerberos.keytab": None,
        },
    )
    sasl = wd(tmp_path, FEDERATION, text).server.sasl
    assert (sasl.enabled, sasl.principal, sasl.keytab) == (False, "hive/_HOST@EXAMPLE.COM", str(keytab))


def test_no_kerberos_properties_no_sasl(tmp_path):
    config = wd(tmp_path, FEDERATION.replace("configurationProperties:\n    hive.metastore.sasl.enabled: false\n", ""), "port: 9083\n")
    assert config.server.sasl is None
    assert [m.sasl for m in (config.primary, *config.federated)] == [None, None, None]


def test_narrower_proxy_user_rules_are_not_widened(tmp_path, keytab, caplog):
    caplog.set_level(logging.WARNING, logger="hmsproxy.config")
    text = server(keytab, {"hadoop.proxyuser.hive.hosts": "gateway.example.com", "hadoop.proxyuser.oozie.groups": "'*'"})
    assert wd(tmp_path, FEDERATION, text).server.sasl.impersonation == ()
    assert "hadoop.proxyuser.hive: not granted" in caplog.text and "hadoop.proxyuser.oozie: not granted" in caplog.text


def test_a_server_setting_in_a_metastores_properties_is_named(tmp_path, keytab, caplog):
    caplog.set_level(logging.WARNING, logger="hmsproxy.config")
    federation = FEDERATION.replace("    hadoop.rpc.protection: privacy\n", "    hive.server2.thrift.sasl.qop: auth-conf\n")
    config = wd(tmp_path, federation, server(keytab))
    assert config.server.sasl.qop == "auth"
    assert "federated-meta-stores[0].configuration-properties.hive.server2.thrift.sasl.qop: ignored here" in caplog.text


@pytest.mark.parametrize(
    ("extra", "key", "reason"),
    [
        ({"hadoop.security.authentication": "simple"}, "hive.metastore.sasl.enabled", "SASL PLAIN"),
        ({"hive.server2.authentication": "LDAP"}, "hive.server2.authentication", "starts only with KERBEROS"),
        (
            {"hive.server2.authentication.kerberos.keytab": "/nonexistent.keytab"},
            "hive.server2.authentication.kerberos.keytab",
            "no such file",
        ),
        ({"hive.server2.authentication.kerberos.principal": None}, "hive.server2.authentication.kerberos.principal", "is required"),
        ({"hive.server2.thrift.sasl.qop": "auth-all"}, "hive.server2.thrift.sasl.qop", "not one of"),
        ({"hadoop.rpc.protection": "secret"}, "hadoop.rpc.protection", "not authentication"),
    ],
)
def test_what_waggle_dance_would_refuse_is_refused(tmp_path, keytab, extra, key, reason):
    with pytest.raises(ConfigError) as info:
        wd(tmp_path, FEDERATION, server(keytab, extra))
    assert_error(info.value, "waggle-dance-server.yml", f"configuration-properties.{key}", reason)


def test_a_kerberized_metastore_without_its_principal_is_refused(tmp_path, keytab):
    with pytest.raises(ConfigError) as info:
        wd(tmp_path, FEDERATION, server(keytab, {"hive.metastore.kerberos.principal": None, "hive.server2.authentication": "NOSASL"}))
    assert_error(
        info.value,
        "waggle-dance-federation.yml",
        "primary-meta-store.configuration-properties.hive.metastore.kerberos.principal",
        "is required",
    )


def test_a_kerberized_metastore_without_a_server_file_has_no_keytab(tmp_path):
    federation = write(
        tmp_path, "waggle-dance-federation.yml", FEDERATION.replace("hadoop.rpc.protection: privacy", "hive.metastore.sasl.enabled: true")
    )
    with pytest.raises(ConfigError) as info:
        load_waggle_dance(None, federation)
    assert "needs the proxy's keytab" in info.value.reason

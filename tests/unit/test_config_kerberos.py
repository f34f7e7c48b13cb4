"""The Kerberos keys: server.sasl (the proxy's identity) and a metastore's sasl, their checks and
what `hmsproxy check-config` says about them."""

from __future__ import annotations

import textwrap

import pytest

from hmsproxy.app import load_config
from hmsproxy.config import ConfigError, describe
from hmsproxy.config.model import MetastoreSaslConfig, ProxyUser, ServerSaslConfig
from hmsproxy.protocol.kerberos_client import local_host_name


def _load(tmp_path, text: str):
    (tmp_path / "proxy.keytab").write_bytes(b"\x05\x02")
    path = tmp_path / "hmsproxy.yml"
    path.write_text(textwrap.dedent(text).replace("KEYTAB", str(tmp_path / "proxy.keytab")), encoding="utf-8")
    return load_config(path)


def _error(tmp_path, text: str) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, text)
    return info.value


KERBERIZED = """\
server:
  sasl: {principal: "hmsproxy/_HOST@EXAMPLE.COM", keytab: KEYTAB}
primary-meta-store:
  name: primary
  remote-meta-store-uris: thrift://hms-1:9083
  sasl: {enabled: true, principal: "hive/_HOST@EXAMPLE.COM"}
federated-meta-stores:
  - name: plain
    remote-meta-store-uris: thrift://hms-2:9083
  - name: signed
    remote-meta-store-uris: thrift://hms-3:9083
    sasl: {principal: "hive/hms-3@EXAMPLE.COM", qop: auth-int}
"""


def test_the_keys_as_the_issue_writes_them(tmp_path):
    config = _load(tmp_path, KERBERIZED)
    assert config.server.sasl == ServerSaslConfig(False, "hmsproxy/_HOST@EXAMPLE.COM", str(tmp_path / "proxy.keytab"))
    primary, plain, signed = config.metastores
    assert primary.sasl == MetastoreSaslConfig("hive/_HOST@EXAMPLE.COM", "auth")
    assert plain.sasl is None
    assert signed.sasl == MetastoreSaslConfig("hive/hms-3@EXAMPLE.COM", "auth-int")
    text = describe(config)
    canonical = local_host_name().lower()  # server.host 127.0.0.1 is an address: _HOST as Hive's metastore takes it
    assert f"Kerberos identity: hmsproxy/_HOST@EXAMPLE.COM = hmsproxy/{canonical}@EXAMPLE.COM (_HOST: " in text
    assert f"is an address) from keytab {tmp_path / 'proxy.keytab'}" in text
    assert "(_HOST: this machine's canonical name, as Hive's metastore; server.host 127.0.0.1 is an address)" in text
    assert "GSSAPI to hive/_HOST@EXAMPLE.COM (_HOST: each URI's host), QOP auth" in text
    assert "GSSAPI to hive/hms-3@EXAMPLE.COM (_HOST: each URI's host), QOP auth-int" in text


def test_kerberos_on_the_proxys_own_port(tmp_path):
    config = _load(tmp_path, KERBERIZED.replace('{principal: "hmsproxy', '{enabled: true, principal: "hmsproxy'))
    assert config.server.sasl.enabled
    assert "own port: SASL GSSAPI only (QOP auth, the client picks; identity: the principal's short name)" in describe(config)
    assert "own port: plain" in describe(_load(tmp_path, KERBERIZED))
    sealed = _load(tmp_path, KERBERIZED.replace('{principal: "hmsproxy', '{enabled: true, qop: auth-conf, principal: "hmsproxy'))
    assert sealed.server.sasl.qop == ("auth-conf",)
    assert "own port: SASL GSSAPI only (QOP auth-conf, the client picks;" in describe(sealed)
    for offered in ('"auth-conf,auth-int, auth"', "[auth-conf, auth-int, auth]"):
        several = _load(tmp_path, KERBERIZED.replace('{principal: "hmsproxy', f'{{enabled: true, qop: {offered}, principal: "hmsproxy'))
        assert several.server.sasl.qop == ("auth-conf", "auth-int", "auth")
        assert "own port: SASL GSSAPI only (QOP auth-conf,auth-int,auth, the client picks;" in describe(several)
    services = _load(
        tmp_path, KERBERIZED.replace('{principal: "hmsproxy', '{enabled: true, impersonation: [hive, spark], principal: "hmsproxy')
    )
    assert services.server.sasl.impersonation == (ProxyUser("hive"), ProxyUser("spark"))
    assert "may act for others with set_ugi: hive, spark" in describe(services)
    limited = _load(
        tmp_path,
        KERBERIZED.replace(
            '{principal: "hmsproxy',
            "{enabled: true, impersonation: [hive, {user: spark, hosts: [10.0.0.0/8, 127.0.0.1], users: [alice], groups: [etl]}],"
            ' principal: "hmsproxy',
        ),
    )
    assert limited.server.sasl.impersonation == (ProxyUser("hive"), ProxyUser("spark", ("10.0.0.0/8", "127.0.0.1"), ("alice",), ("etl",)))
    assert "may act for others with set_ugi: hive, spark (for users alice; groups etl; from 10.0.0.0/8,127.0.0.1)" in describe(limited)
    mapped = _load(tmp_path, KERBERIZED.replace('{principal: "hmsproxy', '{enabled: true, auth-to-local: [DEFAULT], principal: "hmsproxy'))
    assert [rule.text for rule in mapped.server.sasl.auth_to_local] == ["DEFAULT"]
    assert "user names by auth-to-local: DEFAULT" in describe(mapped)


def test_delegation_token_limits(tmp_path):
    enabled = '{enabled: true, principal: "hmsproxy'
    defaults = _load(tmp_path, KERBERIZED.replace('{principal: "hmsproxy', enabled)).server.sasl
    assert (defaults.token_renew_interval_ms, defaults.token_max_lifetime_ms) == (86_400_000, 604_800_000)
    short = _load(
        tmp_path,
        KERBERIZED.replace(
            '{principal: "hmsproxy', '{enabled: true, token-renew-interval-ms: 60000, token-max-lifetime-ms: 120000, principal: "hmsproxy'
        ),
    )
    assert (short.server.sasl.token_renew_interval_ms, short.server.sasl.token_max_lifetime_ms) == (60_000, 120_000)
    assert "issues delegation tokens (DIGEST-MD5 on its port; renew interval 60000 ms, max lifetime 120000 ms)" in describe(short)
    error = _error(
        tmp_path, KERBERIZED.replace('{principal: "hmsproxy', '{enabled: true, token-max-lifetime-ms: 5000, principal: "hmsproxy')
    )
    assert error.key_path == "server.sasl.token-max-lifetime-ms" and "shorter than token-renew-interval-ms" in error.reason


def test_sasl_false_is_plain(tmp_path):
    config = _load(tmp_path, KERBERIZED.replace("{enabled: true,", "{enabled: false,"))
    assert config.primary.sasl is None


def test_a_kerberized_metastore_needs_the_proxys_identity(tmp_path):
    error = _error(tmp_path, KERBERIZED.replace('  sasl: {principal: "hmsproxy', "  #"))
    assert error.key_path == "primary-meta-store.sasl"
    assert "server.sasl.principal and server.sasl.keytab" in error.reason


@pytest.mark.parametrize(
    ("change", "key", "words"),
    [
        (('"hive/_HOST@EXAMPLE.COM"}', '"hive/_HOST"}'), "primary-meta-store.sasl.principal", "not a Kerberos principal"),
        (('{enabled: true, principal: "hive/_HOST@EXAMPLE.COM"}', "true"), "primary-meta-store.sasl.principal", "is required"),
        (("qop: auth-int", "qop: privacy"), "federated-meta-stores[1].sasl.qop", "auth-int"),
        (("keytab: KEYTAB", "keytab: /nonexistent/proxy.keytab"), "server.sasl.keytab", "no such file"),
        (("keytab: KEYTAB}", "keytab: KEYTAB, qop: privacy}"), "server.sasl.qop", "auth-conf"),
        (("keytab: KEYTAB}", "keytab: KEYTAB, qop: 'auth,privacy'}"), "server.sasl.qop", "'privacy' is not one of"),
        (("keytab: KEYTAB}", "keytab: KEYTAB, qop: [auth, auth]}"), "server.sasl.qop", "names a QOP twice"),
        (("keytab: KEYTAB}", "keytab: KEYTAB, impersonation: [{user: svc}]}"), "server.sasl.impersonation[0]", "needs users or groups"),
        (("keytab: KEYTAB}", "keytab: KEYTAB, impersonation: [{users: [a]}]}"), "server.sasl.impersonation[0].user", "required"),
        (
            ("keytab: KEYTAB}", "keytab: KEYTAB, impersonation: [{user: svc, users: ['*'], hosts: [gateway.example.com]}]}"),
            "server.sasl.impersonation[0].hosts[0]",
            "not an IP address, a CIDR",
        ),
        (
            ("keytab: KEYTAB}", "keytab: KEYTAB, impersonation: [{user: svc, users: [a], host: [x]}]}"),
            "server.sasl.impersonation[0].host",
            "did you mean 'hosts'",
        ),
        (
            ("keytab: KEYTAB}", "keytab: KEYTAB, impersonation: ['spark/gw@EXAMPLE.COM']}"),
            "server.sasl.impersonation[0]",
            "'spark/gw@EXAMPLE.COM' is a Kerberos principal; name its user (its short name, e.g. 'spark')",
        ),
        (
            ("keytab: KEYTAB}", "keytab: KEYTAB, impersonation: [{user: svc, users: [alice@EXAMPLE.COM]}]}"),
            "server.sasl.impersonation[0].users[0]",
            "is a Kerberos principal",
        ),
        (
            ("keytab: KEYTAB}", "keytab: KEYTAB, auth-to-local: [DEFAULT, 'MAP x y']}"),
            "server.sasl.auth-to-local[1]",
            "not DEFAULT nor RULE",
        ),
    ],
)
def test_each_mistake_is_named(tmp_path, change, key, words):
    old, new = change
    assert old in KERBERIZED
    error = _error(tmp_path, KERBERIZED.replace(old, new))
    assert error.key_path == key, error
    assert words in error.reason, error

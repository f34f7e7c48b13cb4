"""hmsproxy's own single YAML file (:func:`load_config`; see config/hmsproxy.example.yml).

Its keys are kebab-case and mirror Waggle Dance's where the concept is the same; unknown
keys are errors.  Beyond the metastores it holds the server (including TLS and workers),
the operations HTTP port, the audit log, the store, and one section per feature that has
settings (config/sections.py ConfigSection; e.g. `remotes`).
"""

from __future__ import annotations

import dataclasses
import ipaddress
import os
from collections.abc import Sequence
from os import PathLike
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from hmsproxy.config.auth_to_local import Rule, RuleError, parse_rule
from hmsproxy.config.errors import Ctx, at_index, join_key
from hmsproxy.config.fields import (
    present,
    read_bool,
    read_choice,
    read_enum,
    read_int,
    read_list,
    read_mapping,
    read_non_negative_number,
    read_positive_number,
    read_section,
    read_str,
)
from hmsproxy.config.metastores import check_federation, parse_federation
from hmsproxy.config.model import (
    AuditConfig,
    Config,
    DatabaseResolution,
    HttpConfig,
    ProxyUser,
    ServerConfig,
    ServerSaslConfig,
    StoreConfig,
    TlsConfig,
)
from hmsproxy.config.waggle_dance import WAGGLE_DANCE_DEFAULT_RESOLUTION
from hmsproxy.config.yaml_files import read_yaml

if TYPE_CHECKING:
    from hmsproxy.config.sections import ConfigSection

#: hmsproxy's own format uses Waggle Dance's default resolution too.
DEFAULT_RESOLUTION = WAGGLE_DANCE_DEFAULT_RESOLUTION

_TRANSPORTS = ("buffered", "framed")

_OWN_TOP_KEYS = (
    "server",
    "database-resolution",
    "primary-meta-store",
    "federated-meta-stores",
    "http",
    "audit",
    "store",
)
_OWN_SERVER_KEYS = (
    "host",
    "port",
    "transport",
    "fanout-timeout-ms",
    "connect-timeout-s",
    "backend-timeout-s",
    "probe-after-s",
    "handshake-timeout-s",
    "tls",
    "sasl",
    "workers",
    "relay",
    "drain-notice-s",
    "drain-timeout-s",
)
_SASL_KEYS = ("enabled", "principal", "keytab", "qop", "impersonation", "auth-to-local", "token-renew-interval-ms", "token-max-lifetime-ms")
_QOPS = ("auth", "auth-int", "auth-conf")
_TLS_KEYS = ("cert-file", "key-file", "client-ca-file")
_HTTP_KEYS = ("host", "port")
_AUDIT_KEYS = ("enabled", "file", "level", "max-arg-chars")
_AUDIT_LEVELS = ("all", "writes", "errors")
_STORE_KEYS = ("url",)


def _parse_tls(ctx: Ctx, path: str, raw: Any) -> TlsConfig:
    section = read_section(ctx, path, read_mapping(ctx, path, raw), _TLS_KEYS)
    for key in ("cert-file", "key-file"):
        if not present(section, key):
            raise ctx.error(join_key(path, key), "required when tls is given")
    files = {}
    for key in _TLS_KEYS:
        if present(section, key):
            value = read_str(ctx, join_key(path, key), section[key])
            if not Path(value).is_file():
                raise ctx.error(join_key(path, key), f"no such file: {value}")
            files[key] = value
    return TlsConfig(files["cert-file"], files["key-file"], files.get("client-ca-file"))


def _parse_server_sasl(ctx: Ctx, path: str, raw: Any) -> ServerSaslConfig:
    """`server.sasl`: the proxy's principal and keytab (enabled: SASL GSSAPI on its own port too)."""
    section = read_section(ctx, path, read_mapping(ctx, path, raw), _SASL_KEYS)
    enabled = read_bool(ctx, join_key(path, "enabled"), section["enabled"]) if present(section, "enabled") else False
    for key in ("principal", "keytab"):
        if not present(section, key):
            raise ctx.error(join_key(path, key), "required when sasl is given (the proxy's Kerberos identity)")
    principal = read_str(ctx, join_key(path, "principal"), section["principal"])
    if "@" not in principal:
        raise ctx.error(join_key(path, "principal"), f"{principal!r} is not a Kerberos principal such as hmsproxy/_HOST@EXAMPLE.COM")
    keytab = read_str(ctx, join_key(path, "keytab"), section["keytab"])
    if not Path(keytab).is_file():
        raise ctx.error(join_key(path, "keytab"), f"no such file: {keytab}")
    if not os.access(keytab, os.R_OK):  # found at start, not when the first client or metastore needs a ticket
        raise ctx.error(join_key(path, "keytab"), f"{keytab} is not readable by this process (uid {os.getuid()})")
    qop = _read_qops(ctx, join_key(path, "qop"), section["qop"]) if present(section, "qop") else ("auth",)
    impersonation: tuple[ProxyUser, ...] = ()
    if present(section, "impersonation"):
        entries = read_list(ctx, join_key(path, "impersonation"), section["impersonation"])
        impersonation = tuple(_read_proxy_user(ctx, at_index(join_key(path, "impersonation"), i), raw) for i, raw in enumerate(entries))
    rules: list[Rule] = []
    if present(section, "auth-to-local"):
        rules_path = join_key(path, "auth-to-local")
        for i, text in enumerate(read_list(ctx, rules_path, section["auth-to-local"])):
            try:
                rules.append(parse_rule(read_str(ctx, at_index(rules_path, i), text)))
            except RuleError as e:
                raise ctx.error(at_index(rules_path, i), f"{text!r}: {e}") from None
    defaults = ServerSaslConfig()
    renew_ms, max_ms = (
        read_int(ctx, join_key(path, key), section[key], minimum=1000) if present(section, key) else default
        for key, default in (
            ("token-renew-interval-ms", defaults.token_renew_interval_ms),
            ("token-max-lifetime-ms", defaults.token_max_lifetime_ms),
        )
    )
    if max_ms < renew_ms:
        raise ctx.error(join_key(path, "token-max-lifetime-ms"), f"{max_ms} is shorter than token-renew-interval-ms ({renew_ms})")
    return ServerSaslConfig(enabled, principal, keytab, qop, impersonation, tuple(rules), renew_ms, max_ms)


_PROXY_USER_KEYS = ("user", "hosts", "users", "groups")


def _read_proxy_user(ctx: Ctx, path: str, raw: Any) -> ProxyUser:
    """`hive` (may act for anyone, from anywhere) or `{user: hive, hosts: [10.0.0.0/8], users: [alice], groups: [etl]}`."""
    if isinstance(raw, str):
        return ProxyUser(_user_name(ctx, path, raw))
    section = read_section(ctx, path, read_mapping(ctx, path, raw), _PROXY_USER_KEYS)
    if not present(section, "user"):
        raise ctx.error(join_key(path, "user"), "required: the short name that may act for others")
    name = _user_name(ctx, join_key(path, "user"), section["user"])

    def names(key: str, default: tuple[str, ...]) -> tuple[str, ...]:
        if not present(section, key):
            return default
        items = read_list(ctx, join_key(path, key), section[key])
        return tuple(read_str(ctx, at_index(join_key(path, key), i), item).strip() for i, item in enumerate(items))

    hosts = names("hosts", ("*",))
    for i, host in enumerate(hosts):
        if host != "*":
            try:
                ipaddress.ip_network(host, strict=False)
            except ValueError:
                raise ctx.error(
                    at_index(join_key(path, "hosts"), i), f"{host!r} is not an IP address, a CIDR such as 10.0.0.0/8, or *"
                ) from None
    users, groups = names("users", ()), names("groups", ())
    for i, user in enumerate(users):
        _user_name(ctx, at_index(join_key(path, "users"), i), user)
    if not users and not groups:  # as Hadoop: a proxy user with neither may act for no one; say so instead
        raise ctx.error(path, f"{name} needs users or groups it may act for (* for anyone)")
    return ProxyUser(name, hosts, users, groups)


def _user_name(ctx: Ctx, path: str, raw: Any) -> str:
    """A user (short) name, as Hadoop's hadoop.proxyuser.* names them: a principal there would never
    match, since sessions and token owners are compared by their short names."""
    name = read_str(ctx, path, raw)
    if "@" in name:
        short = name.split("@", 1)[0].split("/", 1)[0]
        raise ctx.error(path, f"{name!r} is a Kerberos principal; name its user (its short name, e.g. {short!r})")
    return name


def _read_qops(ctx: Ctx, path: str, raw: Any) -> tuple[str, ...]:
    """One QOP, a list, or Hive's comma list ("auth-conf,auth-int,auth"): the port offers them all."""
    items = raw.split(",") if isinstance(raw, str) else read_list(ctx, path, raw)
    qops = tuple(read_choice(ctx, at_index(path, i) if not isinstance(raw, str) else path, item, _QOPS) for i, item in enumerate(items))
    if not qops:
        raise ctx.error(path, f"names no QOP (one or more of {', '.join(_QOPS)})")
    if len(set(qops)) != len(qops):
        raise ctx.error(path, f"{', '.join(qops)} names a QOP twice")
    return qops


def check_sasl(ctx: Ctx, server: ServerConfig, metastores: Sequence[Any]) -> None:
    """A Kerberized metastore needs the proxy's own principal and keytab."""
    for parsed in metastores:
        if parsed.metastore.sasl is not None and server.sasl is None:
            raise ctx.error(
                join_key(parsed.path, "sasl"),
                "needs the proxy's own Kerberos identity: give server.sasl.principal and server.sasl.keytab",
            )


def _parse_http(ctx: Ctx, raw: Any) -> HttpConfig:
    path = "http"
    section = read_section(ctx, path, read_mapping(ctx, path, raw), _HTTP_KEYS)
    kwargs: dict[str, Any] = {}
    if present(section, "host"):
        kwargs["host"] = read_str(ctx, join_key(path, "host"), section["host"])
    if present(section, "port"):
        kwargs["port"] = read_int(ctx, join_key(path, "port"), section["port"], minimum=0, maximum=65535)
    return HttpConfig(**kwargs)


def _parse_audit(ctx: Ctx, raw: Any) -> AuditConfig:
    path = "audit"
    section = read_section(ctx, path, read_mapping(ctx, path, raw), _AUDIT_KEYS)
    kwargs: dict[str, Any] = {"enabled": True}
    if present(section, "enabled"):
        kwargs["enabled"] = read_bool(ctx, join_key(path, "enabled"), section["enabled"])
    if present(section, "file"):
        kwargs["file"] = read_str(ctx, join_key(path, "file"), section["file"])
    if present(section, "level"):
        kwargs["level"] = read_choice(ctx, join_key(path, "level"), section["level"], _AUDIT_LEVELS)
    if present(section, "max-arg-chars"):
        kwargs["max_arg_chars"] = read_int(ctx, join_key(path, "max-arg-chars"), section["max-arg-chars"], minimum=16)
    return AuditConfig(**kwargs)


def _parse_store(ctx: Ctx, raw: Any) -> StoreConfig:
    path = "store"
    section = read_section(ctx, path, read_mapping(ctx, path, raw), _STORE_KEYS)
    if not present(section, "url"):
        return StoreConfig()
    url = read_str(ctx, join_key(path, "url"), section["url"])
    if "://" not in url:
        raise ctx.error(join_key(path, "url"), f"{url!r} is not a database URL such as sqlite:///hmsproxy.db or postgresql://host/db")
    return StoreConfig(url)


def _parse_own_server(ctx: Ctx, raw: Any) -> ServerConfig:
    path = "server"
    section = read_section(ctx, path, read_mapping(ctx, path, raw), _OWN_SERVER_KEYS)
    kwargs: dict[str, Any] = {}
    if present(section, "host"):
        kwargs["host"] = read_str(ctx, join_key(path, "host"), section["host"])
    if present(section, "port"):
        kwargs["port"] = read_int(ctx, join_key(path, "port"), section["port"], minimum=1, maximum=65535)
    if present(section, "transport"):
        kwargs["transport"] = read_choice(ctx, join_key(path, "transport"), section["transport"], _TRANSPORTS)
    if present(section, "fanout-timeout-ms"):
        kwargs["fanout_timeout_ms"] = read_int(ctx, join_key(path, "fanout-timeout-ms"), section["fanout-timeout-ms"], minimum=1)
    if present(section, "connect-timeout-s"):
        kwargs["connect_timeout_s"] = read_positive_number(ctx, join_key(path, "connect-timeout-s"), section["connect-timeout-s"])
    if present(section, "backend-timeout-s"):
        kwargs["backend_timeout_s"] = read_positive_number(ctx, join_key(path, "backend-timeout-s"), section["backend-timeout-s"])
    if present(section, "probe-after-s"):
        kwargs["probe_after_s"] = read_positive_number(ctx, join_key(path, "probe-after-s"), section["probe-after-s"])
    if present(section, "handshake-timeout-s"):
        kwargs["handshake_timeout_s"] = read_positive_number(ctx, join_key(path, "handshake-timeout-s"), section["handshake-timeout-s"])
    if present(section, "tls"):
        kwargs["tls"] = _parse_tls(ctx, join_key(path, "tls"), section["tls"])
    if present(section, "sasl"):
        kwargs["sasl"] = _parse_server_sasl(ctx, join_key(path, "sasl"), section["sasl"])
    if present(section, "workers"):
        kwargs["workers"] = read_int(ctx, join_key(path, "workers"), section["workers"], minimum=1, maximum=64)
    if present(section, "relay"):
        kwargs["relay"] = read_bool(ctx, join_key(path, "relay"), section["relay"])
    if present(section, "drain-notice-s"):
        kwargs["drain_notice_s"] = read_non_negative_number(ctx, join_key(path, "drain-notice-s"), section["drain-notice-s"])
    if present(section, "drain-timeout-s"):
        kwargs["drain_timeout_s"] = read_positive_number(ctx, join_key(path, "drain-timeout-s"), section["drain-timeout-s"])
    return dataclasses.replace(ServerConfig(), **kwargs)


def load_config(path: str | PathLike[str], feature_sections: Sequence[ConfigSection] = ()) -> Config:
    """Load hmsproxy's own YAML configuration file (see config/hmsproxy.example.yml).

    `feature_sections`: the top-level keys features own (app.config_sections() for the features a
    proxy runs); any other key is an error.
    """
    data = read_yaml(path)
    ctx = Ctx(str(path), strict=True)
    top_keys = (*_OWN_TOP_KEYS, *(s.key for s in feature_sections))
    primary, federated, section = parse_federation(ctx, data, "", top_keys, waggle_dance=False)

    server = ServerConfig()
    if present(section, "server"):
        server = _parse_own_server(ctx, section["server"])

    resolution = DEFAULT_RESOLUTION
    if present(section, "database-resolution"):
        resolution = read_enum(ctx, "database-resolution", section["database-resolution"], DatabaseResolution)

    check_federation(ctx, resolution, [primary, *federated])
    check_sasl(ctx, server, [primary, *federated])
    sections = {
        "http": ("http", _parse_http),
        "audit": ("audit", _parse_audit),
        "store": ("store", _parse_store),
    }
    extras = {field: parse(ctx, section[key]) for key, (field, parse) in sections.items() if present(section, key)}
    # Features' own sections (config/sections.py ConfigSection), e.g. `remotes`.
    owned = {s.key: s.parse(ctx, section[s.key]) for s in feature_sections if present(section, s.key)}
    return Config(
        server=server,
        database_resolution=resolution,
        primary=primary.metastore,
        federated=tuple(p.metastore for p in federated),
        sources=(str(path),),
        sections=MappingProxyType(owned),
        **extras,
    )

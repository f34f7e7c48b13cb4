"""Waggle Dance's Kerberos settings, read as hmsproxy's `server.sasl` and a metastore's `sasl`.

Waggle Dance 3.x takes them as Hive and Hadoop properties in `configuration-properties`: the
server file's go into the HiveConf of its own port and of every metastore client; a metastore's
own (in the federation file) go into that metastore's client only, over the server's. Its port
is Kerberized (MetaStoreProxyServer, SaslServerWrapper, SaslHelper) when
`hive.metastore.sasl.enabled` is true, `hadoop.security.authentication` is KERBEROS and
`hive.server2.authentication` is KERBEROS; it then logs in from the keytab and principal of
`hive.server2.authentication.kerberos.*` and offers `hive.server2.thrift.sasl.qop`. A metastore
client speaks SASL GSSAPI (SaslThriftMetastoreClientManager) when `hive.metastore.sasl.enabled` is
true, to `hive.metastore.kerberos.principal`, with Hadoop's `hadoop.rpc.protection` as its QOP.

A property without a meaning here is logged as a warning, as the loader does for other Waggle
Dance keys; a combination Waggle Dance itself cannot start with is an error.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from hmsproxy.config.auth_to_local import Rule, RuleError, parse_rule
from hmsproxy.config.errors import Ctx, join_key
from hmsproxy.config.fields import read_mapping
from hmsproxy.config.model import MetastoreSaslConfig, ServerSaslConfig

SASL = "hive.metastore.sasl.enabled"
METASTORE_PRINCIPAL = "hive.metastore.kerberos.principal"
METASTORE_KEYTAB = "hive.metastore.kerberos.keytab.file"
HADOOP_AUTHENTICATION = "hadoop.security.authentication"
PORT_AUTHENTICATION = "hive.server2.authentication"
PORT_PRINCIPAL = "hive.server2.authentication.kerberos.principal"
PORT_KEYTAB = "hive.server2.authentication.kerberos.keytab"
PORT_QOP = "hive.server2.thrift.sasl.qop"
RPC_PROTECTION = "hadoop.rpc.protection"
AUTH_TO_LOCAL = "hadoop.security.auth_to_local"
TOKEN_RENEW = "hive.cluster.delegation.token.renew-interval"
TOKEN_MAX_LIFETIME = "hive.cluster.delegation.token.max-lifetime"
_PROXY_USER = re.compile(r"hadoop\.proxyuser\.(.+)\.(hosts|users|groups)")

#: hadoop.rpc.protection's words for the SASL QOPs.
_PROTECTION = {"authentication": "auth", "integrity": "auth-int", "privacy": "auth-conf"}

#: Properties of Kerberos setups that mean nothing here, and why.
_NO_MEANING = {
    "hadoop.kerberos.keytab.login.autorenewal.enabled": "hmsproxy always takes a new ticket from its keytab before the old one ends",
    "hive.server2.authentication.client.kerberos.principal": "hmsproxy logs in once, from server.sasl's keytab",
    "hive.cluster.delegation.key.update-interval": "hmsproxy rolls its master keys once per token renew interval",
}
_TOKEN_STORE = "hive.cluster.delegation.token.store."
_TOKEN_STORE_NOTE = "hmsproxy keeps its delegation tokens in its own store (the `store` setting), shared by proxies on one store"
#: What the server file's properties may say that a metastore's own may not (Waggle Dance reads
#: them only from the server's HiveConf).
_SERVER_ONLY = (PORT_AUTHENTICATION, PORT_PRINCIPAL, PORT_KEYTAB, PORT_QOP, AUTH_TO_LOCAL, TOKEN_RENEW, TOKEN_MAX_LIFETIME)


def read_properties(ctx: Ctx, path: str, raw: Any) -> dict[str, str]:
    """A `configuration-properties` mapping as HiveConf would hold it: names to texts (YAML's
    `true` is "true"); nulls left out."""
    if raw is None:
        return {}
    props = {}
    for key, value in read_mapping(ctx, path, raw).items():
        if value is not None:
            props[str(key)] = str(value).lower() if isinstance(value, bool) else str(value)
    return props


def _true(props: dict[str, str], key: str) -> bool:
    return props.get(key, "false").strip().lower() == "true"


def server_sasl(ctx: Ctx, path: str, props: dict[str, str], metastores_need_login: bool) -> ServerSaslConfig | None:
    """`server.sasl` from the server file's properties (at `path`): enabled when Waggle Dance's port
    would be Kerberized; without that, the login of Kerberized metastores' clients only (None when
    no metastore needs one)."""
    port = _port_kerberized(ctx, path, props)
    if not port and not metastores_need_login:
        return None
    # The port's identity; for clients alone, Hive's metastore identity serves too (Waggle Dance's
    # HowToKerberize gives both the same principal and keytab).
    principal_key = PORT_PRINCIPAL if port or PORT_PRINCIPAL in props else METASTORE_PRINCIPAL
    keytab_key = PORT_KEYTAB if port or PORT_KEYTAB in props else METASTORE_KEYTAB
    for key in (principal_key, keytab_key):
        if not props.get(key):
            needed = "Waggle Dance's port is Kerberized" if port else "a metastore is Kerberized and hmsproxy logs in from a keytab"
            raise ctx.error(join_key(path, key), f"is required: {needed} ({PORT_PRINCIPAL} and {PORT_KEYTAB})")
    principal, keytab = props[principal_key], props[keytab_key]
    if "@" not in principal:
        raise ctx.error(join_key(path, principal_key), f"{principal!r} is not a Kerberos principal such as hive/_HOST@EXAMPLE.COM")
    if not Path(keytab).is_file():
        raise ctx.error(join_key(path, keytab_key), f"no such file: {keytab}")
    qop = props.get(PORT_QOP, "auth").strip().lower()
    if qop not in _PROTECTION.values():
        raise ctx.error(join_key(path, PORT_QOP), f"{qop!r} is not one of auth, auth-int, auth-conf")
    defaults = ServerSaslConfig()
    renew = _milliseconds(ctx, path, props, TOKEN_RENEW, defaults.token_renew_interval_ms)
    lifetime = _milliseconds(ctx, path, props, TOKEN_MAX_LIFETIME, defaults.token_max_lifetime_ms)
    if lifetime < renew:
        raise ctx.error(join_key(path, TOKEN_MAX_LIFETIME), f"{lifetime} is shorter than {TOKEN_RENEW} ({renew})")
    return ServerSaslConfig(
        enabled=port,
        principal=principal,
        keytab=keytab,
        qop=qop,
        impersonation=_proxy_users(ctx, path, props),
        auth_to_local=_rules(ctx, path, props),
        token_renew_interval_ms=renew,
        token_max_lifetime_ms=lifetime,
    )


def _port_kerberized(ctx: Ctx, path: str, props: dict[str, str]) -> bool:
    """Waggle Dance's choice of its port's transport, refusing what it refuses at start."""
    if not _true(props, SASL):
        return False
    port_auth = props.get(PORT_AUTHENTICATION, "NONE").strip().upper()
    if port_auth == "NOSASL":
        return False  # plain Thrift on the port; the clients may still be Kerberized
    if props.get(HADOOP_AUTHENTICATION, "simple").strip().lower() != "kerberos":
        raise ctx.error(
            join_key(path, SASL),
            f"without {HADOOP_AUTHENTICATION}: KERBEROS, Waggle Dance offers SASL PLAIN ({PORT_AUTHENTICATION} "
            f"{port_auth}) on its port; hmsproxy speaks only Kerberos (or set {PORT_AUTHENTICATION}: NOSASL for plain Thrift)",
        )
    if port_auth != "KERBEROS":
        raise ctx.error(
            join_key(path, PORT_AUTHENTICATION),
            f"is {port_auth}: with Kerberos on, Waggle Dance starts only with KERBEROS (or NOSASL for a plain port)",
        )
    return True


def _milliseconds(ctx: Ctx, path: str, props: dict[str, str], key: str, default: int) -> int:
    if key not in props:
        return default
    try:
        value = int(props[key])
    except ValueError:
        raise ctx.error(join_key(path, key), f"{props[key]!r} is not a number of milliseconds") from None
    if value < 1000:
        raise ctx.error(join_key(path, key), f"must be at least 1000 ms, got {value}")
    return value


def _rules(ctx: Ctx, path: str, props: dict[str, str]) -> tuple[Rule, ...]:
    """Hadoop's auth_to_local value: rules separated by white space."""
    rules = []
    for text in props.get(AUTH_TO_LOCAL, "").split():
        try:
            rules.append(parse_rule(text))
        except RuleError as e:
            raise ctx.error(join_key(path, AUTH_TO_LOCAL), f"{text!r}: {e}") from None
    return tuple(rules)


def _proxy_users(ctx: Ctx, path: str, props: dict[str, str]) -> tuple[str, ...]:
    """hadoop.proxyuser.NAME.*: in Waggle Dance, who may get delegation tokens for other owners. hmsproxy's
    server.sasl.impersonation lets a listed name act for anyone from anywhere, so a name is listed only
    when its rules say as much (hosts '*', and users or groups '*'); narrower rules are not widened."""
    by_name: dict[str, dict[str, str]] = {}
    for key, value in props.items():
        found = _PROXY_USER.fullmatch(key)
        if found:
            by_name.setdefault(found.group(1), {})[found.group(2)] = value.strip()
    names = []
    for name, rules in sorted(by_name.items()):
        if rules.get("hosts") == "*" and "*" in (rules.get("users"), rules.get("groups")):
            names.append(name)
        else:
            ctx.warn(
                join_key(path, f"hadoop.proxyuser.{name}"),
                f"not granted: hmsproxy's server.sasl.impersonation lets {name} act for anyone from any host, more than these rules say",
            )
    return tuple(names)


def metastore_sasl(ctx: Ctx, path: str, props: dict[str, str]) -> MetastoreSaslConfig | None:
    """A metastore's `sasl` from its client's properties (the server file's with its own over them;
    each file's checked by check_client_properties first, where they are written)."""
    if not _true(props, SASL):
        return None
    principal = props.get(METASTORE_PRINCIPAL)
    if not principal:
        raise ctx.error(join_key(path, METASTORE_PRINCIPAL), "is required with hive.metastore.sasl.enabled (the metastore's principal)")
    return MetastoreSaslConfig(principal=principal, qop=_PROTECTION[_protections(props)[0]])


def client_sasl(props: dict[str, str]) -> MetastoreSaslConfig | None:
    """A metastore client's SASL from Hive's own keys in one set of properties (a remote's link),
    or None when hive.metastore.sasl.enabled is not true. ValueError names the key that is wrong."""
    if not _true(props, SASL):
        return None
    principal = props.get(METASTORE_PRINCIPAL, "").strip()
    if not principal:
        raise ValueError(
            f"property '{METASTORE_PRINCIPAL}' is required with '{SASL}' (the metastore's principal, e.g. hive/_HOST@EXAMPLE.COM)"
        )
    if "@" not in principal:
        raise ValueError(f"property '{METASTORE_PRINCIPAL}': {principal!r} is not a Kerberos principal such as hive/_HOST@EXAMPLE.COM")
    word = _protections(props)[0]
    if word not in _PROTECTION:
        raise ValueError(f"property '{RPC_PROTECTION}': {word!r} is not authentication, integrity or privacy")
    return MetastoreSaslConfig(principal=principal, qop=_PROTECTION[word])


def check_client_properties(ctx: Ctx, path: str, props: dict[str, str]) -> None:
    """The client properties as written in one file: a principal that is one, QOPs that are Hadoop's words."""
    principal = props.get(METASTORE_PRINCIPAL)
    if principal and "@" not in principal:
        raise ctx.error(join_key(path, METASTORE_PRINCIPAL), f"{principal!r} is not a Kerberos principal such as hive/_HOST@EXAMPLE.COM")
    wanted = _protections(props)
    for word in wanted:
        if word not in _PROTECTION:
            raise ctx.error(join_key(path, RPC_PROTECTION), f"{word!r} is not authentication, integrity or privacy")
    if RPC_PROTECTION in props and len(wanted) > 1:
        ctx.warn(join_key(path, RPC_PROTECTION), f"hmsproxy asks the metastore for one QOP: the first, {wanted[0]}")


def _protections(props: dict[str, str]) -> list[str]:
    """hadoop.rpc.protection: a list in the client's order of preference; hmsproxy asks for the first."""
    return [w.strip().lower() for w in props.get(RPC_PROTECTION, "authentication").split(",") if w.strip()] or ["authentication"]


#: What each reader above takes, so the rest can be named as not acted on.
_SERVER_READ = (SASL, HADOOP_AUTHENTICATION, *_SERVER_ONLY, METASTORE_PRINCIPAL, METASTORE_KEYTAB, RPC_PROTECTION)
_METASTORE_READ = (SASL, METASTORE_PRINCIPAL, RPC_PROTECTION)


def warn_unused(ctx: Ctx, path: str, props: dict[str, str], *, server: bool) -> None:
    """One warning per property hmsproxy does not act on, saying why."""
    read = _SERVER_READ if server else _METASTORE_READ
    for key in props:
        at = join_key(path, key)
        if key in read or (server and _PROXY_USER.fullmatch(key)):
            continue
        if key in _NO_MEANING:
            ctx.warn(at, f"no meaning here: {_NO_MEANING[key]}")
        elif key.startswith(_TOKEN_STORE):
            ctx.warn(at, f"no meaning here: {_TOKEN_STORE_NOTE}")
        elif not server and (key in _SERVER_ONLY or _PROXY_USER.fullmatch(key) or key == HADOOP_AUTHENTICATION):
            ctx.warn(at, "ignored here: Waggle Dance reads it from waggle-dance-server.yml's configuration-properties")
        else:
            ctx.warn(at, "accepted but not acted on: hmsproxy does not apply this Hive client configuration property")

"""The federation as one immutable snapshot.

Loaders (the config/ package) turn YAML into these objects; everything else reads only
these, so a reload is one reference swap. Each YAML key is defined once, as the field it fills
(config/keys.py `key`: its name, reader, description); the loaders and the key table derive
from these definitions.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from hmsproxy.config import readers as r
from hmsproxy.config.errors import Ctx, join_key
from hmsproxy.config.keys import each, key, section, switched


class DatabaseResolution(enum.Enum):
    PREFIXED = "PREFIXED"
    MANUAL = "MANUAL"


class AccessControlType(enum.Enum):
    READ_ONLY = "READ_ONLY"
    READ_AND_WRITE_AND_CREATE = "READ_AND_WRITE_AND_CREATE"
    READ_AND_WRITE_ON_DATABASE_WHITELIST = "READ_AND_WRITE_ON_DATABASE_WHITELIST"
    READ_AND_WRITE_AND_CREATE_ON_DATABASE_WHITELIST = "READ_AND_WRITE_AND_CREATE_ON_DATABASE_WHITELIST"


#: Access control types a federated (non-primary) metastore may use, as in Waggle Dance.
FEDERATED_ACCESS_TYPES = frozenset({AccessControlType.READ_ONLY, AccessControlType.READ_AND_WRITE_ON_DATABASE_WHITELIST})


@dataclass(frozen=True)
class MappedTables:
    """Only tables of `database` matching one of `patterns` (regexes, case-insensitive) are visible."""

    database: str = key(
        "database", r.text(lower=True), "a remote database (its name, lower-cased)", required="is required (the remote database name)"
    )
    patterns: tuple[str, ...] = key(
        "mapped-tables",
        r.non_empty(r.regexes, "must list at least one table name or regular expression"),
        "its visible tables: names or case-insensitive regular expressions",
        required="is required (a list of table names or regular expressions)",
    )


def _hedge_bounds(ctx: Ctx, path: str, hedge: HedgeConfig) -> None:
    if hedge.max_ms < hedge.min_ms:
        raise ctx.error(join_key(path, "max-ms"), f"must not be below min-ms ({hedge.min_ms}), got {hedge.max_ms}")


@dataclass(frozen=True)
class HedgeConfig:
    """Hedged reads over a metastore's several URIs (hmsproxy/upstream/hedging.py): a read not answered
    within its threshold is also sent to the next URI, and the first answer wins. Off (`hedge:` absent,
    false or `enabled: false`) is no HedgeConfig at all: MetastoreConfig.hedge is None."""

    percentile: float = key(
        "percentile", r.percentile, "the threshold: this percentile of the metastore's recent read latencies", default=95.0
    )
    # A floor because hedging a fast read costs a second metastore call.
    min_ms: int = key("min-ms", r.whole(1), "the threshold is never below this many milliseconds", default=50)
    max_ms: int = key("max-ms", r.whole(1), "nor above this many (also the threshold until 20 reads are known)", default=2000)


@dataclass(frozen=True)
class CacheConfig:
    """A metastore's metadata cache (hmsproxy/upstream/cache/): answers of caller-independent reads."""

    max_entries: int = key("max-entries", r.whole(1), "the most answers kept", default=10_000)
    max_bytes: int = key("max-bytes", r.whole(1024), "the most bytes of answers kept", default=64 * 1024 * 1024)
    ttl_s: float = key(
        "ttl-s", r.positive, "seconds an answer may be served without asking; bounds staleness where no event says otherwise", default=60.0
    )
    follow_notifications: bool = key(
        "follow-notifications",
        r.boolean,
        "follow the metastore's notification log to drop answers that writes made around the proxy changed",
        default=True,
    )
    poll_interval_s: float = key("poll-interval-s", r.positive, "seconds between reads of the notification log", default=1.0)
    serve_stale: bool = key(
        "serve-stale", r.boolean, "while the metastore is down, answer from the cache (stale, marked) instead of failing", default=False
    )


@dataclass(frozen=True)
class MetastoreSaslConfig:
    """A Kerberized metastore (hive.metastore.sasl.enabled): the proxy authenticates with SASL GSSAPI."""

    principal: str = key(
        "principal",
        r.principal("hive/_HOST@EXAMPLE.COM"),
        "the metastore's principal, `_HOST` replaced by the host of the URI connected to (Hadoop's rule)",
        required="is required (the metastore's Kerberos principal, e.g. hive/_HOST@EXAMPLE.COM)",
    )
    qop: str = key(
        "qop", r.choice(*r.QOPS), 'the security layer asked for: "auth", "auth-int" (signed) or "auth-conf" (encrypted)', default="auth"
    )


@dataclass(frozen=True)
class MetastoreConfig:
    name: str = key("name", r.text(), "a unique name for this metastore", required="is required (a unique name for this metastore)")
    uris: tuple[str, ...] = key(
        "remote-meta-store-uris",
        r.uris,
        "comma-separated thrift://host:port URIs of one metastore, tried in order",
        required="is required (comma-separated thrift://host:port URIs)",
    )
    primary: bool = False
    database_prefix: str = key(
        "database-prefix",
        r.text(allow_empty=True, lower=True),
        "the prefix clients see in PREFIXED mode (lower-cased)",
        default="",
        shown_default="'' on the primary, <name>_ on a federated one",
    )
    mapped_databases: tuple[str, ...] | None = key(
        "mapped-databases",
        r.regexes,
        "case-insensitive regexes of visible remote databases; [] means none",
        default=None,
        shown_default="all",
    )
    mapped_tables: tuple[MappedTables, ...] = key(
        "mapped-tables",
        r.unique_databases(section(MappedTables)),
        "per database, only the tables matching its regexes are visible",
        default=(),
        shown_default="all",
    )
    database_name_mapping: dict[str, str] = key(
        "database-name-mapping",
        r.name_mapping,
        "remote database name -> another name clients see it by (before the prefix)",
        default_factory=dict,
    )
    access_control_type: AccessControlType = key(
        "access-control-type",
        r.enum_of(AccessControlType),
        "which writes are allowed (a federated metastore: READ_ONLY or READ_AND_WRITE_ON_DATABASE_WHITELIST)",
        default=AccessControlType.READ_ONLY,
    )
    writable_database_white_list: tuple[str, ...] = key(
        "writable-database-white-list",
        r.regexes,
        "case-insensitive regexes of writable databases (client-side names without prefix)",
        default=(),
    )
    read_only_uris: tuple[str, ...] = key(
        "read-only-remote-meta-store-uris", r.uris, "where read calls go instead of remote-meta-store-uris", default=()
    )
    latency_ms: int = key("latency", r.whole(0), "extra milliseconds this metastore may take in fan-out calls", default=0)
    hive_version: str | None = key(
        "hive-version",
        r.hive_version,
        'its Hive version ("2.3", "3.1", "4.0.1", ...)',
        default=None,
        shown_default="probed on first connect",
    )
    cache: CacheConfig | None = key("cache", switched(CacheConfig, enabled_key=False), "the metadata cache in front of it", default=None)
    hedge: HedgeConfig | None = key(
        "hedge",
        switched(HedgeConfig, enabled_key=True, check=_hedge_bounds),
        "hedged reads over its URIs (needs two at least)",
        default=None,
    )
    sasl: MetastoreSaslConfig | None = key(
        "sasl",
        switched(MetastoreSaslConfig, enabled_key=True),
        "SASL GSSAPI towards it, as the proxy's own principal (server.sasl)",
        default=None,
    )
    #: Its own connection factory (upstream/backends.ConnectionFactory), for a catalog without a Thrift
    #: API (catalogs/connection.connector); set by a remote's factory, never by YAML. None: Thrift at `uris`.
    connect: Callable[..., Any] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class TlsConfig:
    """TLS on the Thrift port, as the metastore's hive.metastore.use.SSL clients expect."""

    cert_file: str = key("cert-file", r.existing_file, "the server certificate (PEM)", required="required when tls is given")
    key_file: str = key("key-file", r.existing_file, "its private key (PEM)", required="required when tls is given")
    client_ca_file: str | None = key(
        "client-ca-file", r.existing_file, "when set, clients must present a certificate signed by this CA", default=None
    )


@dataclass(frozen=True)
class ProxyUser:
    """One entry of server.sasl.impersonation, as Hadoop's hadoop.proxyuser.NAME.hosts/.users/.groups:
    the authenticated user `name` may act for `users`, or for members of `groups` (the proxy's OS
    group database, upstream/impersonation.py), from `hosts` (client IPs or CIDRs). "*": any.
    A bare name in the list is ProxyUser(name): anyone, from anywhere."""

    name: str = key(
        "user", r.user_name, "the short name that may act for others", required="required: the short name that may act for others"
    )
    hosts: tuple[str, ...] = key("hosts", each(r.host_or_network), "client IPs or CIDRs it may do so from (*: any)", default=("*",))
    users: tuple[str, ...] = key(
        "users", each(r.user_name), "users it may act for (*: anyone)", default=("*",), shown_default="* for a bare name; none in a mapping"
    )
    groups: tuple[str, ...] = key("groups", each(r.text()), "members of these groups it may act for", default=())


def _acts_for_someone(ctx: Ctx, path: str, rule: ProxyUser) -> None:
    if not rule.users and not rule.groups:  # as Hadoop: a proxy user with neither may act for no one; say so instead
        raise ctx.error(path, f"{rule.name} needs users or groups it may act for (* for anyone)")


def _proxy_user(ctx: Ctx, path: str, raw: Any) -> ProxyUser:
    """`hive` (may act for anyone, from anywhere) or `{user: hive, hosts: [10.0.0.0/8], users: [alice], groups: [etl]}`."""
    if isinstance(raw, str):
        return ProxyUser(r.user_name(ctx, path, raw))
    return section(ProxyUser, given_defaults={"users": ()}, check=_acts_for_someone)(ctx, path, raw)


def proxy_users(entries) -> dict[str, ProxyUser]:
    """server.sasl.impersonation by name; a bare name (str) is a ProxyUser who may act for anyone."""
    rules = (ProxyUser(entry) if isinstance(entry, str) else entry for entry in entries)
    return {rule.name: rule for rule in rules}


def qop_list(qop: str | tuple[str, ...]) -> tuple[str, ...]:
    """ServerSaslConfig.qop as a tuple: one name, a tuple, or Hive's comma list ("auth-conf,auth-int,auth")."""
    names = qop.split(",") if isinstance(qop, str) else qop
    return tuple(name.strip() for name in names if name.strip())


def _token_lifetimes(ctx: Ctx, path: str, sasl: ServerSaslConfig) -> None:
    if sasl.token_max_lifetime_ms < sasl.token_renew_interval_ms:
        raise ctx.error(
            join_key(path, "token-max-lifetime-ms"),
            f"{sasl.token_max_lifetime_ms} is shorter than token-renew-interval-ms ({sasl.token_renew_interval_ms})",
        )


_SASL_IDENTITY = "required when sasl is given (the proxy's Kerberos identity)"


@dataclass(frozen=True)
class ServerSaslConfig:
    """The proxy's Kerberos identity: its principal and keytab (docs/kerberos.md)."""

    enabled: bool = key(
        "enabled",
        r.boolean,
        "SASL GSSAPI on the proxy's own port too: only Kerberos-authenticated clients, whose principal's short name is their identity",
        default=False,
    )
    principal: str | None = key(
        "principal",
        r.principal("hmsproxy/_HOST@EXAMPLE.COM"),
        "the proxy's principal, e.g. hive/_HOST@EXAMPLE.COM (_HOST: server.host, or this machine's name for 0.0.0.0)",
        default=None,
        required=_SASL_IDENTITY,
    )
    keytab: str | None = key("keytab", r.readable_file, "the keytab holding its key", default=None, required=_SASL_IDENTITY)
    qop: tuple[str, ...] | str = key(
        "qop",
        r.qop_list,
        'the security layers the port offers with enabled: "auth", "auth-int", "auth-conf" (a list or a comma list); the client picks',
        default=("auth",),
    )
    impersonation: tuple[ProxyUser | str, ...] = key(
        "impersonation",
        each(_proxy_user),
        "clients that may act for others with set_ugi: bare short names (anyone, from anywhere) or {user, hosts, users, groups}",
        default=(),
        nested=ProxyUser,
    )
    auth_to_local: tuple = key(
        "auth-to-local",
        r.auth_to_local_rules,
        "Hadoop's auth_to_local rules: a client principal -> its short name",
        default=(),
        shown_default="the first component",
    )
    token_renew_interval_ms: int = key(
        "token-renew-interval-ms",
        r.whole(1000),
        "each renewal extends one of the proxy's delegation tokens by this much (hive.cluster.delegation.token.renew-interval)",
        default=24 * 3600 * 1000,
    )
    token_max_lifetime_ms: int = key(
        "token-max-lifetime-ms",
        r.whole(1000),
        "up to this long after it was issued (hive.cluster.delegation.token.max-lifetime)",
        default=7 * 24 * 3600 * 1000,
    )


@dataclass(frozen=True)
class ServerConfig:
    host: str = key("host", r.text(), "the address the Thrift port listens on", default="127.0.0.1")
    port: int = key("port", r.whole(1, 65535), "the Thrift port", default=9083)
    transport: str = key(
        "transport", r.choice("buffered", "framed"), '"buffered" (the metastore\'s default) or "framed"', default="buffered"
    )
    fanout_timeout_ms: int = key(
        "fanout-timeout-ms",
        r.whole(1),
        "how long a fan-out waits for each metastore (plus its latency) before leaving it out",
        default=2000,
    )
    connect_timeout_s: float = key("connect-timeout-s", r.positive, "seconds to wait for a TCP connection to a backend", default=5.0)
    backend_timeout_s: float = key(
        "backend-timeout-s", r.positive, "seconds a backend call may take before the client gets an error", default=600.0
    )
    # With 3 s a hung metastore's calls fail about 6 s after it hangs (breaker.py).
    probe_after_s: float = key(
        "probe-after-s",
        r.positive,
        "seconds a backend call may go unanswered before its metastore is probed on a new connection; a failed probe trips the breaker",
        default=3.0,
    )
    # A client that stalls or trickles bytes holds no thread longer than this.
    handshake_timeout_s: float = key(
        "handshake-timeout-s",
        r.positive,
        "seconds a new client may take over its TLS handshake and SASL negotiation together",
        default=30.0,
    )
    tls: TlsConfig | None = key("tls", section(TlsConfig), "TLS on the Thrift port", default=None)
    sasl: ServerSaslConfig | None = key(
        "sasl",
        section(ServerSaslConfig, check=_token_lifetimes),
        "the proxy's Kerberos principal and keytab, for Kerberized metastores (and its own port with enabled)",
        default=None,
    )
    workers: int = key("workers", r.whole(1, 64), "processes sharing the Thrift port (SO_REUSEPORT), to use every core", default=1)
    relay: bool = key(
        "relay", r.boolean, "forward answers that need nothing from the proxy as bytes, without decoding them (relay.py)", default=True
    )
    # A load balancer's health checks must take the proxy out before its listener closes (ops/drain.py).
    drain_notice_s: float = key(
        "drain-notice-s", r.non_negative, "on SIGTERM, seconds /readyz answers 503 while everything is still served", default=2.0
    )
    # `serve` exits within drain_notice_s + drain_timeout_s + 5.5 s (drain.CLOSE_GRACE_S).
    drain_timeout_s: float = key(
        "drain-timeout-s",
        r.positive,
        "then, seconds calls in flight may take to finish after the listener closed; what is still open after it is cut",
        default=20.0,
    )
    # downstream/idle_upstream.py closes them; the next call reopens them with its set_ugi, as after any reconnect.
    upstream_idle_s: float = key(
        "upstream-idle-s",
        r.non_negative,
        "seconds a client may send nothing before its metastore connections are closed (reopened at its next call); 0 keeps them",
        default=300.0,
    )


@dataclass(frozen=True)
class HttpConfig:
    """The operations HTTP port: /metrics, /healthz, /readyz."""

    host: str = key("host", r.text(), "the address the operations port listens on", default="127.0.0.1")
    port: int | None = key("port", r.whole(0, 65535), "the operations port (/metrics, /healthz, /readyz); 0: any free port", default=None)


@dataclass(frozen=True)
class AuditConfig:
    """One JSON line per call."""

    enabled: bool = key("enabled", r.boolean, "write the audit log", default=False, shown_default="false; true once audit: is given")
    file: str | None = key("file", r.text(), "the file it goes to", default=None, shown_default="standard error")
    level: str = key("level", r.choice("all", "writes", "errors"), '"all" calls, only "writes", or only "errors"', default="all")
    max_arg_chars: int = key("max-arg-chars", r.whole(16), "arguments longer than this are cut", default=256)


@dataclass(frozen=True)
class StoreConfig:
    """Where the proxy keeps what it owns (remotes, indexes, ...): any SQLAlchemy URL."""

    url: str = key("url", r.database_url, "a SQLAlchemy database URL", default="sqlite:///.state/hmsproxy.db")


@dataclass(frozen=True)
class Config:
    """hmsproxy's own file; Waggle Dance's pair fills the same fields (config/waggle_dance.py)."""

    server: ServerConfig = key("server", section(ServerConfig), "the proxy's Thrift port, timeouts, TLS, Kerberos", shown_default="")
    database_resolution: DatabaseResolution = key(
        "database-resolution",
        r.enum_of(DatabaseResolution),
        "PREFIXED (federated databases as <prefix><name>) or MANUAL (names kept; mapped-databases decide)",
        shown_default="MANUAL (as Waggle Dance)",
    )
    # Both metastore keys are read together, with the checks across metastores (config/metastores.py).
    primary: MetastoreConfig = key(
        "primary-meta-store", None, "the metastore of calls that name no database or no federated one", nested=MetastoreConfig
    )
    federated: tuple[MetastoreConfig, ...] = key(
        "federated-meta-stores", None, "a list of metastore entries with the keys of primary-meta-store", default=()
    )
    http: HttpConfig = key("http", section(HttpConfig), "the operations HTTP port", default_factory=HttpConfig, shown_default="")
    audit: AuditConfig = key(
        "audit",
        section(AuditConfig, given_defaults={"enabled": True}),
        "one JSON line per call",
        default_factory=AuditConfig,
        shown_default="off",
    )
    store: StoreConfig = key(
        "store",
        section(StoreConfig),
        "where the proxy keeps what it owns",
        default_factory=StoreConfig,
        shown_default="",
    )
    #: The files this snapshot was read from, for messages.
    sources: tuple[str, ...] = ()
    #: Features' own sections by top-level key (config/sections.py ConfigSection), read-only.
    sections: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))

    def with_section(self, key: str, settings: object) -> Config:
        """This snapshot with one feature section replaced."""
        return replace(self, sections=MappingProxyType({**self.sections, key: settings}))

    @property
    def metastores(self) -> tuple[MetastoreConfig, ...]:
        return (self.primary, *self.federated)

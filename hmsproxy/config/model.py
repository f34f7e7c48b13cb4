"""The federation as one immutable snapshot.

Loaders (the config/ package) turn YAML into these objects; everything else reads only
these, so a reload is one reference swap.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any


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

    database: str
    patterns: tuple[str, ...]


@dataclass(frozen=True)
class HedgeConfig:
    """Hedged reads over a metastore's several URIs (hmsproxy/upstream/hedging.py): a read not answered
    within its threshold is also sent to the next URI, and the first answer wins. Off (`hedge:` absent,
    false or `enabled: false`) is no HedgeConfig at all: MetastoreConfig.hedge is None."""

    #: The threshold is this percentile of the metastore's recent read latencies...
    percentile: float = 95.0
    #: ...but never below min_ms (hedging a fast read costs a second metastore call) nor above max_ms.
    min_ms: int = 50
    max_ms: int = 2000


@dataclass(frozen=True)
class CacheConfig:
    """A metastore's metadata cache (hmsproxy/upstream/cache/): answers of caller-independent reads."""

    max_entries: int = 10_000
    max_bytes: int = 64 * 1024 * 1024
    #: How long an answer may be served without asking; bounds staleness where no event says otherwise.
    ttl_s: float = 60.0
    #: Follow the metastore's notification log to drop answers that writes made around the proxy changed.
    follow_notifications: bool = True
    poll_interval_s: float = 1.0
    #: While the metastore is down, answer from the cache (stale, marked) instead of failing.
    serve_stale: bool = False


@dataclass(frozen=True)
class MetastoreSaslConfig:
    """A Kerberized metastore (hive.metastore.sasl.enabled): the proxy authenticates with SASL GSSAPI."""

    #: The metastore's principal, `_HOST` replaced by the host of the URI connected to (Hadoop's rule).
    principal: str
    #: The security layer asked for: "auth", "auth-int" (signed) or "auth-conf" (encrypted).
    qop: str = "auth"


@dataclass(frozen=True)
class MetastoreConfig:
    name: str
    uris: tuple[str, ...]  # thrift://host:port, tried in order
    primary: bool = False
    #: Prefix clients see in PREFIXED mode; "" for the primary by default, "<name>_" for federated ones.
    database_prefix: str = ""
    #: Case-insensitive regexes of visible remote databases; None means all, () means none.
    mapped_databases: tuple[str, ...] | None = None
    mapped_tables: tuple[MappedTables, ...] = ()
    #: remote database name -> the name clients see (before the prefix).
    database_name_mapping: dict[str, str] = field(default_factory=dict)
    access_control_type: AccessControlType = AccessControlType.READ_ONLY
    #: Case-insensitive regexes of writable databases (client-side names without prefix).
    writable_database_white_list: tuple[str, ...] = ()
    #: Where read calls go instead of `uris`, when set.
    read_only_uris: tuple[str, ...] = ()
    #: Extra milliseconds this metastore may take in fan-out calls (Waggle Dance's `latency`).
    latency_ms: int = 0
    #: "2.3", "3.1", "4.0.1", ...; None means probe it on first connect.
    hive_version: str | None = None
    #: The metadata cache in front of it; None: no cache (the default).
    cache: CacheConfig | None = None
    #: Hedged reads over `uris`; None: off (the default). Needs two URIs at least to do anything.
    hedge: HedgeConfig | None = None
    #: SASL GSSAPI towards this metastore, as the proxy's own principal (server.sasl); None: plain.
    sasl: MetastoreSaslConfig | None = None
    #: Its own connection factory (upstream/backends.ConnectionFactory), for a catalog without a Thrift
    #: API (catalogs/connection.connector); set by a remote's factory, never by YAML. None: Thrift at `uris`.
    connect: Callable[..., Any] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class TlsConfig:
    """TLS on the Thrift port, as the metastore's hive.metastore.use.SSL clients expect."""

    cert_file: str
    key_file: str
    #: When set, clients must present a certificate signed by this CA.
    client_ca_file: str | None = None


@dataclass(frozen=True)
class ProxyUser:
    """One entry of server.sasl.impersonation, as Hadoop's hadoop.proxyuser.NAME.hosts/.users/.groups:
    the authenticated user `name` may act for `users`, or for members of `groups` (the proxy's OS
    group database, upstream/impersonation.py), from `hosts` (client IPs or CIDRs). "*": any.
    A bare name in the list is ProxyUser(name): anyone, from anywhere."""

    name: str
    hosts: tuple[str, ...] = ("*",)
    users: tuple[str, ...] = ("*",)
    groups: tuple[str, ...] = ()


def proxy_users(entries) -> dict[str, ProxyUser]:
    """server.sasl.impersonation by name; a bare name (str) is a ProxyUser who may act for anyone."""
    rules = (ProxyUser(entry) if isinstance(entry, str) else entry for entry in entries)
    return {rule.name: rule for rule in rules}


def qop_list(qop: str | tuple[str, ...]) -> tuple[str, ...]:
    """ServerSaslConfig.qop as a tuple: one name, a tuple, or Hive's comma list ("auth-conf,auth-int,auth")."""
    names = qop.split(",") if isinstance(qop, str) else qop
    return tuple(name.strip() for name in names if name.strip())


@dataclass(frozen=True)
class ServerSaslConfig:
    """The proxy's Kerberos identity: its principal and keytab (docs/kerberos.md)."""

    #: SASL GSSAPI on the proxy's own Thrift port: only Kerberos-authenticated clients, whose
    #: principal's short name is their identity (set_ugi cannot change it).
    enabled: bool = False
    #: e.g. hive/_HOST@EXAMPLE.COM (`_HOST`: server.host, or this machine's name for 0.0.0.0).
    principal: str | None = None
    keytab: str | None = None
    #: The security layers the proxy's port offers with `enabled`, any of "auth", "auth-int" and
    #: "auth-conf" (a comma list in a string, as Hive's hive.metastore.thrift.sasl.qop); the client picks.
    qop: tuple[str, ...] | str = ("auth",)
    #: Authenticated clients that may act for others with set_ugi (service principals, as Hadoop's
    #: proxy-user rules allow): ProxyUser entries, or bare short names (anyone, from anywhere);
    #: everyone else is who Kerberos says.
    impersonation: tuple[ProxyUser | str, ...] = ()
    #: Hadoop's auth_to_local rules (config/auth_to_local.Rule): a client principal → its short name.
    #: Empty: the first component.
    auth_to_local: tuple = ()
    #: The proxy's own delegation tokens (features/tokens/store.py): each renewal extends a token
    #: by this much (Hive's hive.cluster.delegation.token.renew-interval) ...
    token_renew_interval_ms: int = 24 * 3600 * 1000
    #: ... up to this long after it was issued (hive.cluster.delegation.token.max-lifetime).
    token_max_lifetime_ms: int = 7 * 24 * 3600 * 1000


@dataclass(frozen=True)
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 9083
    #: "buffered" (the metastore's default) or "framed".
    transport: str = "buffered"
    #: Base deadline for fan-out calls; each metastore adds its own `latency_ms`.
    fanout_timeout_ms: int = 2000
    #: Seconds to wait for a TCP connection to a backend.
    connect_timeout_s: float = 5.0
    #: Seconds a backend call may take before the client gets an error.
    backend_timeout_s: float = 600.0
    #: Seconds a backend call may go unanswered before its metastore is probed on a new
    #: connection, which must answer as fast; a failed probe trips the breaker (breaker.py),
    #: failing the calls waiting on it too: with 3 s, about 6 s after a metastore hangs.
    probe_after_s: float = 3.0
    #: Seconds a new client may take over its TLS handshake and SASL negotiation together; then
    #: its connection is closed (a client that stalls or trickles bytes holds no thread longer).
    handshake_timeout_s: float = 30.0
    tls: TlsConfig | None = None
    #: The proxy's Kerberos principal and keytab, for Kerberized metastores (MetastoreConfig.sasl).
    sasl: ServerSaslConfig | None = None
    #: Processes sharing the Thrift port (SO_REUSEPORT), to use every core.
    workers: int = 1
    #: Forward answers that need nothing from the proxy as bytes, without decoding them (relay.py).
    relay: bool = True
    #: On SIGTERM, seconds /readyz answers 503 while everything is still served, so a load
    #: balancer's health checks take the proxy out before its listener closes (ops/drain.py).
    drain_notice_s: float = 2.0
    #: Then, seconds calls in flight may take to finish after the listener closed; what is still
    #: open after it is cut. `serve` exits within drain_notice_s + drain_timeout_s + 5.5 s (drain.CLOSE_GRACE_S).
    drain_timeout_s: float = 20.0


@dataclass(frozen=True)
class HttpConfig:
    """The operations HTTP port: /metrics, /healthz, /readyz."""

    host: str = "127.0.0.1"
    #: None: no HTTP endpoint.
    port: int | None = None


@dataclass(frozen=True)
class AuditConfig:
    """One JSON line per call."""

    enabled: bool = False
    #: None: standard error.
    file: str | None = None
    #: "all" calls, only "writes", or only "errors".
    level: str = "all"
    #: Arguments longer than this are cut.
    max_arg_chars: int = 256


@dataclass(frozen=True)
class StoreConfig:
    """Where the proxy keeps what it owns (remotes, indexes, ...): any SQLAlchemy URL."""

    url: str = "sqlite:///.state/hmsproxy.db"


@dataclass(frozen=True)
class Config:
    server: ServerConfig
    database_resolution: DatabaseResolution
    primary: MetastoreConfig
    federated: tuple[MetastoreConfig, ...] = ()
    http: HttpConfig = field(default_factory=HttpConfig)
    audit: AuditConfig = field(default_factory=AuditConfig)
    store: StoreConfig = field(default_factory=StoreConfig)
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

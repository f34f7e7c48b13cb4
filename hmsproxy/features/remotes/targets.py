"""Where a remote database or table lives: its factory's metastore, reached directly or by SSH.

`Targets.metastore(factory, properties)` gives the read-only MetastoreConfig
calls go to. Its name is the target's stable key ("remote:thrift://h:9083",
plus the SSH route when tunnelled), so every remote on one metastore shares one
connection per client session and one health record. Also here: how link
properties arrive through plain clients (DBPROPERTIES / TBLPROPERTIES).
"""

from __future__ import annotations

import hashlib
import threading

from hmsproxy.config.model import MetastoreConfig
from hmsproxy.config.waggle_dance_kerberos import METASTORE_PRINCIPAL, SASL
from hmsproxy.features.remote_marks import LINK_KEYS, LINK_URIS
from hmsproxy.features.remotes.copies import DerivedConfigs
from hmsproxy.features.remotes.factories import DEFAULT_FACTORY, URIS_PROPERTY, UnknownFactory, get_factory
from hmsproxy.features.remotes.tunnels import TunnelManager, tunnel_spec
from hmsproxy.upstream.wire import parse_uri

#: Java factory names of the Hive proposal that mean the built-in Thrift factory (SSH comes from properties).
THRIFT_ALIASES = frozenset(
    {
        "thrift",
        "org.apache.hadoop.hive.metastore.thrifthivemetastoreclientfactory",
        "org.apache.hadoop.hive.metastore.sshthrifthivemetastoreclientfactory",
    }
)
#: Table / database parameters clients and Hive add on their own; never part of a link.
AUTO_PARAMETERS = frozenset(
    {
        "transient_lastDdlTime",
        "numFiles",
        "numRows",
        "rawDataSize",
        "totalSize",
        "COLUMN_STATS_ACCURATE",
        "numFilesErasureCoded",
        "EXTERNAL",
        "comment",
        "bucketing_version",
        "last_modified_by",
        "last_modified_time",
        "owner",
    }
)


def normalize_factory(name: str | None) -> str:
    name = (name or DEFAULT_FACTORY).strip()
    return DEFAULT_FACTORY if name.lower() in THRIFT_ALIASES else name


def link_properties(parameters: dict[str, str]) -> dict[str, str]:
    """The factory properties in DBPROPERTIES / TBLPROPERTIES: hmsproxy.remote.uris becomes
    hive.metastore.uris; Spark's and Hive's own parameters are left out."""
    props = {}
    for k, v in (parameters or {}).items():
        if k == LINK_URIS:
            props[URIS_PROPERTY] = v
        elif k in LINK_KEYS or k in AUTO_PARAMETERS or k.startswith("spark."):
            continue
        else:
            props[k] = v
    return props


def _catalog_where(factory: str, properties: dict[str, str]) -> str | None:
    """Where a catalog factory's target is, in its own words (factories.ClientFactory.where), if it says."""
    try:
        where = getattr(get_factory(normalize_factory(factory)), "where", None)
    except UnknownFactory:
        return None
    return where(properties) if where is not None else None


def takes_commits(factory: str, properties: dict[str, str]) -> bool:
    """Whether writers may commit through a link (its factory's optional `commits(properties)`)."""
    try:
        commits = getattr(get_factory(normalize_factory(factory)), "commits", None)
    except UnknownFactory:
        return False
    return bool(commits is not None and commits(properties))


def describe_target(factory: str, properties: dict[str, str]) -> str:
    """How messages name a target: its URIs (and SSH route), or the factory's own words for it."""
    where = properties.get(URIS_PROPERTY, "").strip() or _catalog_where(factory, properties) or f"factory {factory}"
    route = properties.get("ssh.tunnel.route")
    return f"{where} (via ssh {route.strip()})" if route else where


class Targets:
    """Builds (and caches) remotes' metastores; opens SSH tunnels on demand."""

    def __init__(self, backends, connect_timeout_s):
        self.backends = backends  #: learns each target by name
        self._connect_timeout_s = connect_timeout_s  # () -> seconds, read per use (config reloads)
        self.tunnels = TunnelManager()
        self._cache: dict[tuple, MetastoreConfig] = {}
        #: The tunneled copy of each cached target (its URIs the tunnel's local end).
        self._tunneled = DerivedConfigs()
        self._lock = threading.Lock()

    def validate(self, factory: str, properties: dict[str, str]) -> None:
        """Raise ValueError (or UnknownFactory) naming the bad property."""
        name = normalize_factory(factory)
        get_factory(name).validate(properties)
        tunnel_spec(properties)

    def metastore(self, factory: str, properties: dict[str, str]) -> MetastoreConfig:
        """The metastore calls for this remote go to. Raises ValueError, UnknownFactory, TunnelError."""
        name = normalize_factory(factory)
        cache_key = (name, tuple(sorted(properties.items())))
        with self._lock:
            base = self._cache.get(cache_key)
        if base is None:
            base = get_factory(name).metastore(self.key(name, properties), properties)
            with self._lock:
                self._cache[cache_key] = base
            self.backends.extra[base.name] = base
        spec = tunnel_spec(properties)
        if spec is None:
            return base
        host, port = parse_uri(base.uris[0])
        local_host, local_port = self.tunnels.local_address(spec, host, port, self._connect_timeout_s())
        uris = (f"thrift://{local_host}:{local_port}",)
        ms = self._tunneled.of(cache_key, base, uris=uris)  # a new copy when a rebuilt tunnel has a new port
        if self.backends.extra.get(ms.name) is not ms:
            self.backends.extra[ms.name] = ms
        return ms

    @staticmethod
    def key(factory: str, properties: dict[str, str]) -> str:
        """A stable, unique name per target."""
        uris = ",".join(u.strip() for u in properties.get(URIS_PROPERTY, "").split(",") if u.strip())
        if factory == DEFAULT_FACTORY:
            key = f"remote:{uris}"
        else:
            where = _catalog_where(factory, properties)
            other = ",".join(f"{k}={v}" for k, v in sorted(properties.items()) if not k.startswith("ssh.tunnel."))
            if where:  # links with other credentials (not in `where`) to one catalog are other targets
                other = f"{where} #{hashlib.sha256(other.encode()).hexdigest()[:8]}"
            key = f"remote:{factory}:{uris or other}"
        if properties.get(SASL, "").strip().lower() == "true":  # one metastore reached two ways is two targets
            key = f"{key} as kerberos to {properties.get(METASTORE_PRINCIPAL, '').strip()}"
        route = (properties.get("ssh.tunnel.route") or "").strip()
        return f"{key} via ssh {route}" if route else key

    def describe(self, snap) -> list[str]:
        """Lines for `hmsproxy status`: the remotes of `snap` (a RemotesSnapshot) and their targets' health."""
        lines = [f"remotes: {len(snap.databases)} databases, {len(snap.tables)} tables (store generation {snap.generation})"]
        targets = {}
        for rd in snap.databases.values():
            targets.setdefault(self.key(normalize_factory(rd.factory), rd.properties), []).append(rd.local_name)
        for rt in snap.tables.values():
            targets.setdefault(self.key(normalize_factory(rt.factory), rt.properties), []).append(f"{rt.local_db}.{rt.local_name}")
        for key, users in sorted(targets.items()):
            state = self.backends.state(key)
            up = {None: "not contacted", True: "up", False: "DOWN"}[state.up]
            err = f" (last error: {state.last_error})" if state.up is False and state.last_error else ""
            lines.append(f"  {key}: {up}{err}; serves {', '.join(sorted(users))}")
        return lines

    def close(self) -> None:
        self.tunnels.close()

"""Metastore entries (primary and federated) and the checks across them.

Waggle Dance semantics kept by both formats:

* ``remote-meta-store-uris`` is a comma-separated string of ``thrift://host:port``.
* ``database-prefix`` defaults to ``""`` on the primary and to ``<name>_`` (lower-cased)
  on federated metastores; prefixes are compared and used lower-cased.
* ``mapped-databases`` absent (or null) means every database is visible, an empty list
  means none; entries are case-insensitive regular expressions matched against the whole
  remote database name.  ``mapped-tables`` entries (database -> table regexes) and
  ``writable-database-white-list`` entries are case-insensitive regexes as well.
* ``database-name-mapping`` maps a remote database name to an additional name shown to
  clients; two remote databases may not be shown under the same name.
* Federated metastores may only be ``READ_ONLY`` or ``READ_AND_WRITE_ON_DATABASE_WHITELIST``.

Whether two metastores expose the same database name is a run-time matter, not a
configuration error.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from hmsproxy.config.errors import Ctx, at_index, join_key, kind_of
from hmsproxy.config.fields import (
    ignore_silently,
    ignored_bool,
    ignored_connection_type,
    ignored_mapping,
    ignored_str,
    present,
    read_bool,
    read_choice,
    read_enum,
    read_int,
    read_list,
    read_mapping,
    read_positive_number,
    read_regex_list,
    read_section,
    read_str,
    read_uris,
)
from hmsproxy.config.model import (
    FEDERATED_ACCESS_TYPES,
    AccessControlType,
    CacheConfig,
    DatabaseResolution,
    HedgeConfig,
    MappedTables,
    MetastoreConfig,
    MetastoreSaslConfig,
)

_HIVE_VERSION_RE = re.compile(r"^[1-9]\d*\.\d+(\.\d+)?$")
_HIVE_NAME_CHARS_RE = re.compile(r"^[A-Za-z0-9_]*$")

_METASTORE_KEYS = (
    "name",
    "remote-meta-store-uris",
    "read-only-remote-meta-store-uris",
    "database-prefix",
    "mapped-databases",
    "mapped-tables",
    "database-name-mapping",
    "access-control-type",
    "writable-database-white-list",
    "latency",
    # hmsproxy's own; Waggle Dance ignores them, so they may also appear in a federation file.
    "hive-version",
    "cache",
    "hedge",
    "sasl",
)

_WD_METASTORE_IGNORED: dict[str, Callable[[Ctx, str, Any], None]] = {
    "metastore-tunnel": ignored_mapping("hmsproxy opens no SSH tunnels; it connects to remote-meta-store-uris directly"),
    "hive-metastore-filter-hook": ignored_str("hmsproxy cannot run Hive MetaStoreFilterHook classes; results are not filtered by it"),
    "impersonation-enabled": ignored_bool(
        False, "hmsproxy calls a Kerberized metastore as its own principal; it fetches no delegation token per user (docs/kerberos.md)"
    ),
    # Its Kerberos properties are read, and the rest named, by waggle_dance_kerberos.py.
    "configuration-properties": ignore_silently,
    "connection-type": ignored_connection_type,
    "glue-config": ignored_mapping("hmsproxy cannot federate AWS Glue catalogs"),
    # Written back by Waggle Dance or derived by it; meaningless in a file.
    "status": ignore_silently,
    "federation-type": ignore_silently,
}


@dataclass
class _Parsed:
    metastore: MetastoreConfig
    path: str
    prefix_defaulted: bool


def _parse_metastore(ctx: Ctx, path: str, raw: Any, *, primary: bool, waggle_dance: bool) -> _Parsed:
    raw = read_mapping(ctx, path, raw)
    section = read_section(ctx, path, raw, _METASTORE_KEYS, _WD_METASTORE_IGNORED if waggle_dance else None)

    def sub(key: str) -> str:
        return join_key(path, key)

    if not present(section, "name"):
        raise ctx.error(sub("name"), "is required (a unique name for this metastore)")
    name = read_str(ctx, sub("name"), section["name"])

    if not present(section, "remote-meta-store-uris"):
        if waggle_dance and raw.get("glue-config") is not None:
            raise ctx.error(
                sub("glue-config"),
                "AWS Glue federation is not supported by hmsproxy; give remote-meta-store-uris (thrift://host:port) instead",
            )
        raise ctx.error(
            sub("remote-meta-store-uris"),
            "is required (comma-separated thrift://host:port URIs)",
        )
    uris = read_uris(ctx, sub("remote-meta-store-uris"), section["remote-meta-store-uris"])

    read_only_uris: tuple[str, ...] = ()
    if present(section, "read-only-remote-meta-store-uris"):
        read_only_uris = read_uris(ctx, sub("read-only-remote-meta-store-uris"), section["read-only-remote-meta-store-uris"])

    prefix_defaulted = not present(section, "database-prefix")
    if prefix_defaulted:
        prefix = "" if primary else f"{name.lower()}_"
    else:
        prefix = read_str(ctx, sub("database-prefix"), section["database-prefix"], allow_empty=True)
        prefix = prefix.lower()

    mapped_databases: tuple[str, ...] | None = None
    if present(section, "mapped-databases"):
        mapped_databases = read_regex_list(ctx, sub("mapped-databases"), section["mapped-databases"])

    mapped_tables: tuple[MappedTables, ...] = ()
    if present(section, "mapped-tables"):
        mapped_tables = _parse_mapped_tables(ctx, sub("mapped-tables"), section["mapped-tables"])

    name_mapping: dict[str, str] = {}
    if present(section, "database-name-mapping"):
        name_mapping = _parse_name_mapping(ctx, sub("database-name-mapping"), section["database-name-mapping"], mapped_databases)

    access = AccessControlType.READ_ONLY
    if present(section, "access-control-type"):
        access = read_enum(ctx, sub("access-control-type"), section["access-control-type"], AccessControlType)
        if not primary and access not in FEDERATED_ACCESS_TYPES:
            allowed = ", ".join(t.value for t in AccessControlType if t in FEDERATED_ACCESS_TYPES)
            raise ctx.error(
                sub("access-control-type"),
                f"{access.value} is only allowed on the primary metastore (allowed here: {allowed})",
            )

    white_list: tuple[str, ...] = ()
    if present(section, "writable-database-white-list"):
        white_list = read_regex_list(ctx, sub("writable-database-white-list"), section["writable-database-white-list"])
    uses_white_list = access in (
        AccessControlType.READ_AND_WRITE_ON_DATABASE_WHITELIST,
        AccessControlType.READ_AND_WRITE_AND_CREATE_ON_DATABASE_WHITELIST,
    )
    if white_list and not uses_white_list:
        ctx.warn(
            sub("writable-database-white-list"),
            f"ignored: access-control-type is {access.value}, which does not use a white list",
        )
    if not white_list and access is AccessControlType.READ_AND_WRITE_ON_DATABASE_WHITELIST:
        ctx.warn(
            sub("writable-database-white-list"),
            "is empty, so READ_AND_WRITE_ON_DATABASE_WHITELIST allows no writes at all",
        )

    latency = 0
    if present(section, "latency"):
        latency = read_int(ctx, sub("latency"), section["latency"], minimum=0)

    hive_version = None
    if present(section, "hive-version"):
        value = section["hive-version"]
        if not isinstance(value, str):
            raise ctx.error(
                sub("hive-version"),
                f'must be a quoted version string such as "2.3" or "4.0.1", got {kind_of(value)}',
            )
        hive_version = value.strip()
        if not _HIVE_VERSION_RE.match(hive_version):
            raise ctx.error(
                sub("hive-version"),
                f'{hive_version!r} is not a Hive version such as "2.3", "3.1" or "4.0.1"',
            )

    cache = _parse_cache(ctx, sub("cache"), section["cache"]) if present(section, "cache") else None
    hedge = _parse_hedge(ctx, sub("hedge"), section["hedge"]) if present(section, "hedge") else None
    if hedge is not None and len(uris) < 2:
        ctx.warn(sub("hedge"), "does nothing: remote-meta-store-uris names one URI, and a read is hedged to the next one")

    sasl = _parse_sasl(ctx, sub("sasl"), section["sasl"]) if present(section, "sasl") else None

    metastore = MetastoreConfig(
        name=name,
        uris=uris,
        primary=primary,
        database_prefix=prefix,
        mapped_databases=mapped_databases,
        mapped_tables=mapped_tables,
        database_name_mapping=name_mapping,
        access_control_type=access,
        writable_database_white_list=white_list,
        read_only_uris=read_only_uris,
        latency_ms=latency,
        hive_version=hive_version,
        cache=cache,
        hedge=hedge,
        sasl=sasl,
    )
    return _Parsed(metastore, path, prefix_defaulted)


_CACHE_KEYS = ("max-entries", "max-bytes", "ttl-s", "follow-notifications", "poll-interval-s", "serve-stale")


def _switched(ctx: Ctx, path: str, raw: Any, keys: tuple[str, ...]) -> Callable[[str, Any, Callable], Any] | None:
    """A metastore's optional part given as `true` (its defaults), `false` or absent (None), or a
    mapping of `keys`: then how to read one key, `value(key, default, reader)`."""
    if raw is False or raw is None:
        return None
    section = {} if raw is True else read_section(ctx, path, read_mapping(ctx, path, raw), keys)

    def value(key: str, default, reader):
        return reader(ctx, join_key(path, key), section[key]) if present(section, key) else default

    return value


def _parse_cache(ctx: Ctx, path: str, raw: Any) -> CacheConfig | None:
    """`cache: true` or a mapping of _CACHE_KEYS (`cache: false` or absent: none)."""
    number = _switched(ctx, path, raw, _CACHE_KEYS)
    if number is None:
        return None
    defaults = CacheConfig()
    return CacheConfig(
        max_entries=number("max-entries", defaults.max_entries, lambda c, p, v: read_int(c, p, v, minimum=1)),
        max_bytes=number("max-bytes", defaults.max_bytes, lambda c, p, v: read_int(c, p, v, minimum=1024)),
        ttl_s=number("ttl-s", defaults.ttl_s, read_positive_number),
        follow_notifications=number("follow-notifications", defaults.follow_notifications, read_bool),
        poll_interval_s=number("poll-interval-s", defaults.poll_interval_s, read_positive_number),
        serve_stale=number("serve-stale", defaults.serve_stale, read_bool),
    )


_SASL_KEYS = ("enabled", "principal", "qop")
_QOPS = ("auth", "auth-int", "auth-conf")


def _parse_sasl(ctx: Ctx, path: str, raw: Any) -> MetastoreSaslConfig | None:
    """`sasl: {enabled: true, principal: hive/_HOST@REALM, qop: auth}` (`enabled: false` or absent: plain)."""
    value = _switched(ctx, path, raw, _SASL_KEYS)
    if value is None or not value("enabled", True, read_bool):
        return None
    principal = value("principal", None, read_str)
    if principal is None:
        raise ctx.error(join_key(path, "principal"), "is required (the metastore's Kerberos principal, e.g. hive/_HOST@EXAMPLE.COM)")
    if "@" not in principal:
        raise ctx.error(join_key(path, "principal"), f"{principal!r} is not a Kerberos principal such as hive/_HOST@EXAMPLE.COM")
    qop = value("qop", "auth", lambda c, p, v: read_choice(c, p, v, _QOPS))
    return MetastoreSaslConfig(principal=principal, qop=qop)


_HEDGE_KEYS = ("enabled", "percentile", "min-ms", "max-ms")


def _parse_hedge(ctx: Ctx, path: str, raw: Any) -> HedgeConfig | None:
    """`hedge: true` or a mapping of _HEDGE_KEYS (`hedge: false`, `enabled: false` or absent: none)."""
    value = _switched(ctx, path, raw, _HEDGE_KEYS)
    if value is None or not value("enabled", True, read_bool):
        return None
    defaults = HedgeConfig()
    percentile = value("percentile", defaults.percentile, read_positive_number)
    if not 0 < percentile < 100:
        raise ctx.error(join_key(path, "percentile"), f"must be above 0 and below 100 (95 is the 95th percentile), got {percentile:g}")
    min_ms = value("min-ms", defaults.min_ms, lambda c, p, v: read_int(c, p, v, minimum=1))
    max_ms = value("max-ms", defaults.max_ms, lambda c, p, v: read_int(c, p, v, minimum=1))
    if max_ms < min_ms:
        raise ctx.error(join_key(path, "max-ms"), f"must not be below min-ms ({min_ms}), got {max_ms}")
    return HedgeConfig(percentile=percentile, min_ms=min_ms, max_ms=max_ms)


def _parse_mapped_tables(ctx: Ctx, path: str, value: Any) -> tuple[MappedTables, ...]:
    entries: dict[str, MappedTables] = {}
    first_path: dict[str, str] = {}
    for i, raw in enumerate(read_list(ctx, path, value)):
        entry_path = at_index(path, i)
        raw = read_mapping(ctx, entry_path, raw)
        section = read_section(ctx, entry_path, raw, ("database", "mapped-tables"))
        if not present(section, "database"):
            raise ctx.error(join_key(entry_path, "database"), "is required (the remote database name)")
        database = read_str(ctx, join_key(entry_path, "database"), section["database"]).lower()
        tables_path = join_key(entry_path, "mapped-tables")
        if not present(section, "mapped-tables"):
            raise ctx.error(tables_path, "is required (a list of table names or regular expressions)")
        patterns = read_regex_list(ctx, tables_path, section["mapped-tables"])
        if not patterns:
            raise ctx.error(tables_path, "must list at least one table name or regular expression")
        if database in entries:
            message = f"database {database!r} is already listed at {first_path[database]}"
            if ctx.strict:
                raise ctx.error(join_key(entry_path, "database"), message)
            ctx.warn(join_key(entry_path, "database"), message + "; this later entry replaces it")
        entries[database] = MappedTables(database=database, patterns=patterns)
        first_path.setdefault(database, entry_path)
    return tuple(entries.values())


def _parse_name_mapping(ctx: Ctx, path: str, value: Any, mapped_databases: tuple[str, ...] | None) -> dict[str, str]:
    raw = read_mapping(ctx, path, value)
    result: dict[str, str] = {}
    shown_by: dict[str, str] = {}
    for key, target in raw.items():
        key_text = read_str(ctx, path, key)
        entry_path = join_key(path, key_text)
        remote = key_text.lower()
        shown = read_str(ctx, entry_path, target).lower()
        if remote in result:
            raise ctx.error(entry_path, f"database {remote!r} is mapped twice")
        if shown in shown_by:
            raise ctx.error(
                entry_path,
                f"{shown!r} is already the name shown for {shown_by[shown]!r}; two databases cannot be shown under one name",
            )
        if shown == remote:
            ctx.warn(entry_path, f"maps {remote!r} to itself, which has no effect")
        if mapped_databases is not None and not any(re.fullmatch(p, remote, re.IGNORECASE) for p in mapped_databases):
            ctx.warn(
                entry_path,
                f"{remote!r} is not matched by mapped-databases, so this mapping has no effect",
            )
        result[remote] = shown
        shown_by[shown] = remote
    return result


def parse_federation(
    ctx: Ctx,
    data: dict,
    path: str,
    known_top: Iterable[str],
    *,
    waggle_dance: bool,
    ignored_top: Mapping[str, Callable[[Ctx, str, Any], None]] | None = None,
) -> tuple[_Parsed, list[_Parsed], dict[str, Any]]:
    """Primary and federated metastores from a mapping holding both keys."""
    section = read_section(ctx, path, data, known_top, ignored_top)
    if not present(section, "primary-meta-store"):
        raise ctx.error(
            join_key(path, "primary-meta-store"),
            "is required (hmsproxy needs a primary metastore for calls that name no database)",
        )
    primary = _parse_metastore(
        ctx,
        join_key(path, "primary-meta-store"),
        section["primary-meta-store"],
        primary=True,
        waggle_dance=waggle_dance,
    )
    federated: list[_Parsed] = []
    if present(section, "federated-meta-stores"):
        list_path = join_key(path, "federated-meta-stores")
        for i, raw in enumerate(read_list(ctx, list_path, section["federated-meta-stores"])):
            federated.append(_parse_metastore(ctx, at_index(list_path, i), raw, primary=False, waggle_dance=waggle_dance))
    return primary, federated, section


def check_federation(ctx: Ctx, resolution: DatabaseResolution, metastores: list[_Parsed]) -> None:
    """Checks across metastores: unique names, and unique prefixes in PREFIXED mode."""
    by_name: dict[str, _Parsed] = {}
    for parsed in metastores:
        name = parsed.metastore.name
        if name in by_name:
            raise ctx.error(
                join_key(parsed.path, "name"),
                f"{name!r} is already the name of the metastore at {by_name[name].path}",
            )
        by_name[name] = parsed

    by_prefix: dict[str, _Parsed] = {}
    for parsed in metastores:
        prefix = parsed.metastore.database_prefix
        if prefix in by_prefix:
            other = by_prefix[prefix].metastore.name
            shown = f"{prefix!r}" + (" (the default for this metastore)" if parsed.prefix_defaulted else "")
            message = f"prefix {shown} is already used by metastore {other!r}"
            if resolution is DatabaseResolution.PREFIXED:
                raise ctx.error(
                    join_key(parsed.path, "database-prefix"),
                    message + "; prefixes must be unique in PREFIXED mode",
                )
            ctx.warn(
                join_key(parsed.path, "database-prefix"),
                message + " (unused in MANUAL mode, but Waggle Dance would refuse it)",
            )
        else:
            by_prefix[prefix] = parsed

    if resolution is DatabaseResolution.PREFIXED:
        for prefix, parsed in by_prefix.items():
            if not _HIVE_NAME_CHARS_RE.match(prefix):
                ctx.warn(
                    join_key(parsed.path, "database-prefix"),
                    f"prefix {prefix!r} holds characters Hive does not allow in database names "
                    "(letters, digits and _); clients may be unable to use it",
                )
        prefixes = [p for p in by_prefix if p]
        for a in prefixes:
            for b in prefixes:
                if a != b and b.startswith(a):
                    ctx.warn(
                        join_key(by_prefix[b].path, "database-prefix"),
                        f"prefix {b!r} starts with the prefix {a!r} of metastore "
                        f"{by_prefix[a].metastore.name!r}; database names starting with {b!r} "
                        "match both",
                    )

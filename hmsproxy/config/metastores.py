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
configuration error. Each key's name, reader and description is its field in
config/model.py's MetastoreConfig; this module adds what depends on the entry's role and
on other keys, and the checks across metastores.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from hmsproxy.config.errors import Ctx, at_index, join_key
from hmsproxy.config.fields import (
    ignore_silently,
    ignored_bool,
    ignored_connection_type,
    ignored_mapping,
    ignored_str,
    present,
    read_list,
    read_mapping,
    read_section,
)
from hmsproxy.config.keys import read_given, yaml_names
from hmsproxy.config.model import (
    FEDERATED_ACCESS_TYPES,
    AccessControlType,
    DatabaseResolution,
    MetastoreConfig,
)

_HIVE_NAME_CHARS_RE = re.compile(r"^[A-Za-z0-9_]*$")

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
    """One entry: its keys as MetastoreConfig defines them, then what depends on the entry's role
    and on other keys."""
    raw = read_mapping(ctx, path, raw)
    section = read_section(ctx, path, raw, yaml_names(MetastoreConfig), _WD_METASTORE_IGNORED if waggle_dance else None)
    if waggle_dance and present(section, "name") and not present(section, "remote-meta-store-uris") and raw.get("glue-config") is not None:
        raise ctx.error(
            join_key(path, "glue-config"),
            "AWS Glue federation is not supported by hmsproxy; give remote-meta-store-uris (thrift://host:port) instead",
        )
    values = read_given(ctx, path, section, MetastoreConfig)
    metastore = MetastoreConfig(primary=primary, **values)

    prefix_defaulted = "database_prefix" not in values
    if prefix_defaulted:
        metastore = replace(metastore, database_prefix="" if primary else f"{metastore.name.lower()}_")
    _check_access(ctx, path, metastore)
    _check_name_mapping(ctx, join_key(path, "database-name-mapping"), metastore)
    if metastore.hedge is not None and len(metastore.uris) < 2:
        ctx.warn(join_key(path, "hedge"), "does nothing: remote-meta-store-uris names one URI, and a read is hedged to the next one")
    return _Parsed(metastore, path, prefix_defaulted)


def _check_access(ctx: Ctx, path: str, ms: MetastoreConfig) -> None:
    """Federated metastores write only on a white list; a white list only where it is used."""
    access = ms.access_control_type
    if not ms.primary and access not in FEDERATED_ACCESS_TYPES:
        allowed = ", ".join(t.value for t in AccessControlType if t in FEDERATED_ACCESS_TYPES)
        raise ctx.error(
            join_key(path, "access-control-type"),
            f"{access.value} is only allowed on the primary metastore (allowed here: {allowed})",
        )
    uses_white_list = access in (
        AccessControlType.READ_AND_WRITE_ON_DATABASE_WHITELIST,
        AccessControlType.READ_AND_WRITE_AND_CREATE_ON_DATABASE_WHITELIST,
    )
    white_list_path = join_key(path, "writable-database-white-list")
    if ms.writable_database_white_list and not uses_white_list:
        ctx.warn(white_list_path, f"ignored: access-control-type is {access.value}, which does not use a white list")
    if not ms.writable_database_white_list and access is AccessControlType.READ_AND_WRITE_ON_DATABASE_WHITELIST:
        ctx.warn(white_list_path, "is empty, so READ_AND_WRITE_ON_DATABASE_WHITELIST allows no writes at all")


def _check_name_mapping(ctx: Ctx, path: str, ms: MetastoreConfig) -> None:
    """A mapping of a database mapped-databases hides has no effect: say so."""
    if ms.mapped_databases is None:
        return
    for remote in ms.database_name_mapping:
        if not any(re.fullmatch(p, remote, re.IGNORECASE) for p in ms.mapped_databases):
            ctx.warn(join_key(path, remote), f"{remote!r} is not matched by mapped-databases, so this mapping has no effect")


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

"""Reading and checking the federation's configuration.

Two input formats produce the same immutable :class:`~hmsproxy.config_model.Config`:

* hmsproxy's own single YAML file (:func:`load_config`).  Its keys are kebab-case and
  mirror Waggle Dance's where the concept is the same; unknown keys are errors.
* Waggle Dance's pair ``waggle-dance-server.yml`` + ``waggle-dance-federation.yml``
  (:func:`load_waggle_dance`), taken as Waggle Dance users have them.  Waggle Dance itself
  ignores keys it does not know, so here unknown keys and keys hmsproxy does not act on
  (SSH tunnels, filter hooks, Glue, metrics, ...) are logged as warnings, never rejected.

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
* Waggle Dance's default ``database-resolution`` is ``MANUAL`` and its default port 48869.

Every problem raises :class:`ConfigError`; whether two metastores expose the same database
name is a run-time matter, not a configuration error.
"""

from __future__ import annotations

import dataclasses
import difflib
import logging
import re
from pathlib import Path
from dataclasses import dataclass
from os import PathLike
from typing import Any, Callable, Iterable, Mapping

import yaml

from hmsproxy.config_model import (
    FEDERATED_ACCESS_TYPES,
    AccessControlType,
    AuditConfig,
    Config,
    DatabaseResolution,
    HttpConfig,
    MappedTables,
    MetastoreConfig,
    RemotesConfig,
    ServerConfig,
    StoreConfig,
    TlsConfig,
)
from hmsproxy.remotes.model import RemoteDatabase, RemoteTable

__all__ = [
    "ConfigError",
    "WAGGLE_DANCE_DEFAULT_PORT",
    "WAGGLE_DANCE_DEFAULT_RESOLUTION",
    "describe",
    "load",
    "load_config",
    "load_from_paths",
    "load_waggle_dance",
]

log = logging.getLogger(__name__)

#: Waggle Dance listens on 0xBEE5 unless `port` says otherwise.
WAGGLE_DANCE_DEFAULT_PORT = 48869
#: Waggle Dance's `database-resolution` when the server file does not set it.
WAGGLE_DANCE_DEFAULT_RESOLUTION = DatabaseResolution.MANUAL
#: Waggle Dance binds every interface; a drop-in replacement must do the same.
WAGGLE_DANCE_HOST = "0.0.0.0"
#: hmsproxy's own format uses Waggle Dance's default resolution too.
DEFAULT_RESOLUTION = WAGGLE_DANCE_DEFAULT_RESOLUTION

_TRANSPORTS = ("buffered", "framed")
_JAVA_TIME_UNITS = (
    "NANOSECONDS",
    "MICROSECONDS",
    "MILLISECONDS",
    "SECONDS",
    "MINUTES",
    "HOURS",
    "DAYS",
)
#: The owner shown for remotes the admin defines in the config file.
STATIC_OWNER = "config"
_HIVE_VERSION_RE = re.compile(r"^[1-9]\d*\.\d+(\.\d+)?$")
_URI_RE = re.compile(
    r"^thrift://(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)"
    r":(?P<port>\d+)/?$"
)
_HIVE_NAME_CHARS_RE = re.compile(r"^[A-Za-z0-9_]*$")


# --------------------------------------------------------------------------------------
# Errors


class ConfigError(Exception):
    """A configuration problem, located by file and key path.

    ``str()`` reads ``<file>: <key.path[0].sub>: <reason>``; list indexes count from 0.
    """

    def __init__(self, file: str | PathLike[str], key_path: str, reason: str) -> None:
        self.file = str(file)
        self.key_path = key_path
        self.reason = reason
        super().__init__(self.file, key_path, reason)  # args that rebuild it (pickling)

    def __str__(self) -> str:
        if self.key_path:
            return f"{self.file}: {self.key_path}: {self.reason}"
        return f"{self.file}: {self.reason}"


@dataclass
class _Ctx:
    """Where we are reading from and how forgiving to be."""

    file: str
    #: hmsproxy's own format: unknown keys are errors.  Waggle Dance's: warnings.
    strict: bool

    def error(self, path: str, reason: str) -> ConfigError:
        return ConfigError(self.file, path, reason)

    def warn(self, path: str, message: str) -> None:
        log.warning("%s", ConfigError(self.file, path, message))

    def debug(self, path: str, message: str) -> None:
        log.debug("%s", ConfigError(self.file, path, message))


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _at(path: str, index: int) -> str:
    return f"{path}[{index}]"


# --------------------------------------------------------------------------------------
# YAML reading


class _Loader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate keys (snakeyaml, used by Waggle Dance, does too)."""


def _construct_mapping(loader: _Loader, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue
        key = loader.construct_object(key_node, deep=True)
        try:
            first = seen.get(key)
        except TypeError:  # unhashable key; SafeConstructor reports it
            continue
        if first is not None:
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"duplicate key {key!r} (first given on line {first + 1})",
                key_node.start_mark,
            )
        seen[key] = key_node.start_mark.line
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _read_yaml(path: str | PathLike[str]) -> dict:
    """The top-level mapping of a YAML file ({} for an empty file)."""
    name = str(path)
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as e:
        raise ConfigError(name, "", f"cannot read the file: {e.strerror or e}") from e
    except UnicodeDecodeError as e:
        raise ConfigError(name, "", f"the file is not UTF-8 text: {e}") from e
    try:
        data = yaml.load(text, Loader=_Loader)  # noqa: S506 - SafeLoader subclass
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = e.problem or e.context or "syntax error"
        raise ConfigError(name, "", f"invalid YAML: {problem}{where}") from e
    except yaml.YAMLError as e:
        raise ConfigError(name, "", f"invalid YAML: {e}") from e
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(name, "", f"the file must hold a mapping of keys, got {_kind(data)}")
    return data


# --------------------------------------------------------------------------------------
# Scalar and collection readers


def _kind(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, int):
        return f"an integer ({value})"
    if isinstance(value, float):
        return f"a number ({value})"
    if isinstance(value, str):
        return f"a string ({value!r})"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


def _str(ctx: _Ctx, path: str, value: Any, *, allow_empty: bool = False) -> str:
    """A string; YAML numbers are taken as their text (Waggle Dance does the same)."""
    if isinstance(value, bool) or value is None or isinstance(value, (dict, list)):
        hint = " (quote it in the YAML)" if isinstance(value, bool) else ""
        raise ctx.error(path, f"must be a string, got {_kind(value)}{hint}")
    if isinstance(value, (int, float)):
        value = str(value)
    if not isinstance(value, str):
        raise ctx.error(path, f"must be a string, got {_kind(value)}")
    value = value.strip()
    if not value and not allow_empty:
        raise ctx.error(path, "must not be empty")
    return value


def _int(
    ctx: _Ctx, path: str, value: Any, *, minimum: int | None = None, maximum: int | None = None
) -> int:
    number: int | None = None
    if isinstance(value, bool):
        number = None
    elif isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+\s*", value):
        number = int(value)
    if number is None:
        raise ctx.error(path, f"must be a whole number, got {_kind(value)}")
    if minimum is not None and maximum is not None and not minimum <= number <= maximum:
        raise ctx.error(path, f"{number} is out of range (must be {minimum}..{maximum})")
    if minimum is not None and number < minimum:
        raise ctx.error(path, f"{number} is too small (must be at least {minimum})")
    if maximum is not None and number > maximum:
        raise ctx.error(path, f"{number} is too large (must be at most {maximum})")
    return number


def _positive_number(ctx: _Ctx, path: str, value: Any) -> float:
    number: float | None = None
    if isinstance(value, bool):
        number = None
    elif isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            number = None
    if number is None or number != number:  # NaN
        raise ctx.error(path, f"must be a number, got {_kind(value)}")
    if number <= 0:
        raise ctx.error(path, f"{value} must be greater than 0")
    return number


def _bool(ctx: _Ctx, path: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise ctx.error(path, f"must be true or false, got {_kind(value)}")


def _choice(ctx: _Ctx, path: str, value: Any, choices: Iterable[str]) -> str:
    """One of `choices` (upper- or lower-case as listed), matched case-insensitively."""
    choices = tuple(choices)
    if isinstance(value, str):
        wanted = value.strip().lower()
        for choice in choices:
            if choice.lower() == wanted:
                return choice
    shown = repr(value) if isinstance(value, str) else _kind(value)
    raise ctx.error(path, f"{shown} is not one of {', '.join(choices)}")


def _enum(ctx: _Ctx, path: str, value: Any, enum_cls: type) -> Any:
    name = _choice(ctx, path, value, [member.value for member in enum_cls])
    return enum_cls(name)


def _mapping(ctx: _Ctx, path: str, value: Any) -> dict:
    if not isinstance(value, dict):
        raise ctx.error(path, f"must be a mapping of keys, got {_kind(value)}")
    return value


def _list(ctx: _Ctx, path: str, value: Any) -> list:
    if not isinstance(value, list):
        raise ctx.error(path, f"must be a list, got {_kind(value)}")
    return value


def _regex_list(ctx: _Ctx, path: str, value: Any) -> tuple[str, ...]:
    """A list of case-insensitive regular expressions (whitespace around each trimmed)."""
    patterns = []
    for i, item in enumerate(_list(ctx, path, value)):
        item_path = _at(path, i)
        pattern = _str(ctx, item_path, item)
        _check_regex(ctx, item_path, pattern)
        patterns.append(pattern)
    return tuple(patterns)


def _check_regex(ctx: _Ctx, path: str, pattern: str) -> None:
    try:
        re.compile(pattern, re.IGNORECASE)
    except re.error as e:
        where = f" at position {e.pos}" if e.pos is not None else ""
        raise ctx.error(path, f"{pattern!r} is not a valid regular expression: {e.msg}{where}") from e


def _uris(ctx: _Ctx, path: str, value: Any) -> tuple[str, ...]:
    """`thrift://host:port` URIs from a comma-separated string (or, as a courtesy, a list)."""
    if isinstance(value, list):
        parts = [_str(ctx, _at(path, i), item) for i, item in enumerate(value)]
    else:
        parts = _str(ctx, path, value).split(",")
    uris: list[str] = []
    for raw in parts:
        raw = raw.strip()
        if not raw:
            continue  # "a,b," as Java's split() tolerates
        match = _URI_RE.match(raw)
        if not match:
            raise ctx.error(path, f"{raw!r} is not a metastore URI of the form thrift://host:port")
        port = int(match.group("port"))
        if not 1 <= port <= 65535:
            raise ctx.error(path, f"{raw!r} has port {port}, which is out of range (1..65535)")
        uri = f"thrift://{match.group('host')}:{port}"
        if uri not in uris:
            uris.append(uri)
    if not uris:
        raise ctx.error(path, "must name at least one thrift://host:port URI")
    return tuple(uris)


# --------------------------------------------------------------------------------------
# Key handling


def _canonical_key(key: str) -> str:
    """camelCase / snake_case / kebab-case -> kebab-case (Spring and Waggle Dance accept all)."""
    key = re.sub(r"(?<=[a-z0-9])([A-Z])", r"-\1", key)
    return key.replace("_", "-").lower()


def _suggest(key: str, known: Iterable[str]) -> str:
    known = sorted(set(known))
    canonical = _canonical_key(key)
    if canonical in known and canonical != key:
        return f" (did you mean '{canonical}'?)"
    close = difflib.get_close_matches(canonical, known, n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _section(
    ctx: _Ctx,
    path: str,
    raw: dict,
    known: Iterable[str],
    ignored: Mapping[str, Callable[[_Ctx, str, Any], None]] | None = None,
) -> dict[str, Any]:
    """The keys of a mapping, by canonical name.

    In strict mode keys must be spelt exactly as in `known`; otherwise camelCase and
    snake_case spellings are accepted.  Keys in `ignored` are handed to their handler (which
    validates and warns).  Any other key is an error in strict mode, else a warning.
    """
    known = tuple(known)
    ignored = ignored or {}
    result: dict[str, Any] = {}
    spelt: dict[str, str] = {}
    for key, value in raw.items():
        if not isinstance(key, str):
            if ctx.strict:
                raise ctx.error(_join(path, str(key)), f"keys must be names, got {_kind(key)}")
            ctx.warn(_join(path, str(key)), "ignored: keys must be names")
            continue
        canonical = key if ctx.strict else _canonical_key(key)
        if canonical in spelt:
            raise ctx.error(
                _join(path, key), f"given twice (also as '{spelt[canonical]}')"
            )
        spelt[canonical] = key
        if canonical in known:
            result[canonical] = value
        elif canonical in ignored:
            ignored[canonical](ctx, _join(path, key), value)
        elif ctx.strict:
            raise ctx.error(
                _join(path, key), "unknown key" + _suggest(key, (*known, *ignored))
            )
        else:
            ctx.warn(
                _join(path, key),
                "unknown key, ignored" + _suggest(key, (*known, *ignored)),
            )
    return result


def _present(section: Mapping[str, Any], key: str) -> bool:
    """A key counts as given only with a non-null value (Waggle Dance treats null as unset)."""
    return section.get(key) is not None


# Handlers for Waggle Dance keys hmsproxy accepts but does not act on.  Each checks the
# value's shape (Waggle Dance would refuse a malformed one) and warns only when the value
# asks for something hmsproxy does not do.


def _ignore_silently(ctx: _Ctx, path: str, value: Any) -> None:
    ctx.debug(path, "ignored")


def _ignored_mapping(note: str) -> Callable[[_Ctx, str, Any], None]:
    def handle(ctx: _Ctx, path: str, value: Any) -> None:
        if value is None:
            return
        if value and not isinstance(value, dict):
            raise ctx.error(path, f"must be a mapping of keys, got {_kind(value)}")
        if value:
            ctx.warn(path, f"accepted but not acted on: {note}")
        else:
            ctx.debug(path, "empty; ignored")

    return handle


def _ignored_bool(default: bool, note: str) -> Callable[[_Ctx, str, Any], None]:
    def handle(ctx: _Ctx, path: str, value: Any) -> None:
        if value is None:
            return
        if _bool(ctx, path, value) != default:
            ctx.warn(path, f"accepted but not acted on: {note}")

    return handle


def _ignored_int(default: int, note: str, minimum: int | None = None):
    def handle(ctx: _Ctx, path: str, value: Any) -> None:
        if value is None:
            return
        if _int(ctx, path, value, minimum=minimum) != default:
            ctx.warn(path, f"accepted but not acted on: {note}")

    return handle


def _ignored_time_unit(default: str, note: str):
    def handle(ctx: _Ctx, path: str, value: Any) -> None:
        if value is None:
            return
        if _choice(ctx, path, value, _JAVA_TIME_UNITS) != default:
            ctx.warn(path, f"accepted but not acted on: {note}")

    return handle


def _ignored_str(note: str):
    def handle(ctx: _Ctx, path: str, value: Any) -> None:
        if value is None:
            return
        if _str(ctx, path, value, allow_empty=True):
            ctx.warn(path, f"accepted but not acted on: {note}")

    return handle


def _ignored_connection_type(ctx: _Ctx, path: str, value: Any) -> None:
    if value is None:
        return
    if _choice(ctx, path, value, ("DIRECT", "TUNNELED")) == "TUNNELED":
        ctx.warn(path, "accepted but not acted on: hmsproxy connects to metastores directly")


# --------------------------------------------------------------------------------------
# Metastores

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
    # hmsproxy's own; Waggle Dance ignores it, so it may also appear in a federation file.
    "hive-version",
)

_WD_METASTORE_IGNORED: dict[str, Callable[[_Ctx, str, Any], None]] = {
    "metastore-tunnel": _ignored_mapping(
        "hmsproxy opens no SSH tunnels; it connects to remote-meta-store-uris directly"
    ),
    "hive-metastore-filter-hook": _ignored_str(
        "hmsproxy cannot run Hive MetaStoreFilterHook classes; results are not filtered by it"
    ),
    "impersonation-enabled": _ignored_bool(
        False, "hmsproxy does not impersonate client users towards this metastore"
    ),
    "configuration-properties": _ignored_mapping(
        "hmsproxy does not apply Hive client configuration properties"
    ),
    "connection-type": _ignored_connection_type,
    "glue-config": _ignored_mapping("hmsproxy cannot federate AWS Glue catalogs"),
    # Written back by Waggle Dance or derived by it; meaningless in a file.
    "status": _ignore_silently,
    "federation-type": _ignore_silently,
}


@dataclass
class _Parsed:
    metastore: MetastoreConfig
    path: str
    prefix_defaulted: bool


def _parse_metastore(
    ctx: _Ctx, path: str, raw: Any, *, primary: bool, waggle_dance: bool
) -> _Parsed:
    raw = _mapping(ctx, path, raw)
    section = _section(
        ctx, path, raw, _METASTORE_KEYS, _WD_METASTORE_IGNORED if waggle_dance else None
    )

    def sub(key: str) -> str:
        return _join(path, key)

    if not _present(section, "name"):
        raise ctx.error(sub("name"), "is required (a unique name for this metastore)")
    name = _str(ctx, sub("name"), section["name"])

    if not _present(section, "remote-meta-store-uris"):
        if waggle_dance and raw.get("glue-config") is not None:
            raise ctx.error(
                sub("glue-config"),
                "AWS Glue federation is not supported by hmsproxy; "
                "give remote-meta-store-uris (thrift://host:port) instead",
            )
        raise ctx.error(
            sub("remote-meta-store-uris"),
            "is required (comma-separated thrift://host:port URIs)",
        )
    uris = _uris(ctx, sub("remote-meta-store-uris"), section["remote-meta-store-uris"])

    read_only_uris: tuple[str, ...] = ()
    if _present(section, "read-only-remote-meta-store-uris"):
        read_only_uris = _uris(
            ctx, sub("read-only-remote-meta-store-uris"), section["read-only-remote-meta-store-uris"]
        )

    prefix_defaulted = not _present(section, "database-prefix")
    if prefix_defaulted:
        prefix = "" if primary else f"{name.lower()}_"
    else:
        prefix = _str(ctx, sub("database-prefix"), section["database-prefix"], allow_empty=True)
        prefix = prefix.lower()

    mapped_databases: tuple[str, ...] | None = None
    if _present(section, "mapped-databases"):
        mapped_databases = _regex_list(ctx, sub("mapped-databases"), section["mapped-databases"])

    mapped_tables: tuple[MappedTables, ...] = ()
    if _present(section, "mapped-tables"):
        mapped_tables = _parse_mapped_tables(ctx, sub("mapped-tables"), section["mapped-tables"])

    name_mapping: dict[str, str] = {}
    if _present(section, "database-name-mapping"):
        name_mapping = _parse_name_mapping(
            ctx, sub("database-name-mapping"), section["database-name-mapping"], mapped_databases
        )

    access = AccessControlType.READ_ONLY
    if _present(section, "access-control-type"):
        access = _enum(ctx, sub("access-control-type"), section["access-control-type"], AccessControlType)
        if not primary and access not in FEDERATED_ACCESS_TYPES:
            allowed = ", ".join(t.value for t in AccessControlType if t in FEDERATED_ACCESS_TYPES)
            raise ctx.error(
                sub("access-control-type"),
                f"{access.value} is only allowed on the primary metastore (allowed here: {allowed})",
            )

    white_list: tuple[str, ...] = ()
    if _present(section, "writable-database-white-list"):
        white_list = _regex_list(
            ctx, sub("writable-database-white-list"), section["writable-database-white-list"]
        )
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
    if _present(section, "latency"):
        latency = _int(ctx, sub("latency"), section["latency"], minimum=0)

    hive_version = None
    if _present(section, "hive-version"):
        value = section["hive-version"]
        if not isinstance(value, str):
            raise ctx.error(
                sub("hive-version"),
                f"must be a quoted version string such as \"2.3\" or \"4.0.1\", got {_kind(value)}",
            )
        hive_version = value.strip()
        if not _HIVE_VERSION_RE.match(hive_version):
            raise ctx.error(
                sub("hive-version"),
                f"{hive_version!r} is not a Hive version such as \"2.3\", \"3.1\" or \"4.0.1\"",
            )

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
    )
    return _Parsed(metastore, path, prefix_defaulted)


def _parse_mapped_tables(ctx: _Ctx, path: str, value: Any) -> tuple[MappedTables, ...]:
    entries: dict[str, MappedTables] = {}
    first_path: dict[str, str] = {}
    for i, raw in enumerate(_list(ctx, path, value)):
        entry_path = _at(path, i)
        raw = _mapping(ctx, entry_path, raw)
        section = _section(ctx, entry_path, raw, ("database", "mapped-tables"))
        if not _present(section, "database"):
            raise ctx.error(_join(entry_path, "database"), "is required (the remote database name)")
        database = _str(ctx, _join(entry_path, "database"), section["database"]).lower()
        tables_path = _join(entry_path, "mapped-tables")
        if not _present(section, "mapped-tables"):
            raise ctx.error(tables_path, "is required (a list of table names or regular expressions)")
        patterns = _regex_list(ctx, tables_path, section["mapped-tables"])
        if not patterns:
            raise ctx.error(tables_path, "must list at least one table name or regular expression")
        if database in entries:
            message = f"database {database!r} is already listed at {first_path[database]}"
            if ctx.strict:
                raise ctx.error(_join(entry_path, "database"), message)
            ctx.warn(_join(entry_path, "database"), message + "; this later entry replaces it")
        entries[database] = MappedTables(database=database, patterns=patterns)
        first_path.setdefault(database, entry_path)
    return tuple(entries.values())


def _parse_name_mapping(
    ctx: _Ctx, path: str, value: Any, mapped_databases: tuple[str, ...] | None
) -> dict[str, str]:
    raw = _mapping(ctx, path, value)
    result: dict[str, str] = {}
    shown_by: dict[str, str] = {}
    for key, target in raw.items():
        key_text = _str(ctx, path, key)
        entry_path = _join(path, key_text)
        remote = key_text.lower()
        shown = _str(ctx, entry_path, target).lower()
        if remote in result:
            raise ctx.error(entry_path, f"database {remote!r} is mapped twice")
        if shown in shown_by:
            raise ctx.error(
                entry_path,
                f"{shown!r} is already the name shown for {shown_by[shown]!r}; "
                "two databases cannot be shown under one name",
            )
        if shown == remote:
            ctx.warn(entry_path, f"maps {remote!r} to itself, which has no effect")
        if mapped_databases is not None and not any(
            re.fullmatch(p, remote, re.IGNORECASE) for p in mapped_databases
        ):
            ctx.warn(
                entry_path,
                f"{remote!r} is not matched by mapped-databases, so this mapping has no effect",
            )
        result[remote] = shown
        shown_by[shown] = remote
    return result


def _parse_federation(
    ctx: _Ctx,
    data: dict,
    path: str,
    known_top: Iterable[str],
    *,
    waggle_dance: bool,
    ignored_top: Mapping[str, Callable[[_Ctx, str, Any], None]] | None = None,
) -> tuple[_Parsed, list[_Parsed], dict[str, Any]]:
    """Primary and federated metastores from a mapping holding both keys."""
    section = _section(ctx, path, data, known_top, ignored_top)
    if not _present(section, "primary-meta-store"):
        raise ctx.error(
            _join(path, "primary-meta-store"),
            "is required (hmsproxy needs a primary metastore for calls that name no database)",
        )
    primary = _parse_metastore(
        ctx,
        _join(path, "primary-meta-store"),
        section["primary-meta-store"],
        primary=True,
        waggle_dance=waggle_dance,
    )
    federated: list[_Parsed] = []
    if _present(section, "federated-meta-stores"):
        list_path = _join(path, "federated-meta-stores")
        for i, raw in enumerate(_list(ctx, list_path, section["federated-meta-stores"])):
            federated.append(
                _parse_metastore(ctx, _at(list_path, i), raw, primary=False, waggle_dance=waggle_dance)
            )
    return primary, federated, section


def _check_federation(
    ctx: _Ctx, resolution: DatabaseResolution, metastores: list[_Parsed]
) -> None:
    """Checks across metastores: unique names, and unique prefixes in PREFIXED mode."""
    by_name: dict[str, _Parsed] = {}
    for parsed in metastores:
        name = parsed.metastore.name
        if name in by_name:
            raise ctx.error(
                _join(parsed.path, "name"),
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
                    _join(parsed.path, "database-prefix"),
                    message + "; prefixes must be unique in PREFIXED mode",
                )
            ctx.warn(
                _join(parsed.path, "database-prefix"),
                message + " (unused in MANUAL mode, but Waggle Dance would refuse it)",
            )
        else:
            by_prefix[prefix] = parsed

    if resolution is DatabaseResolution.PREFIXED:
        for prefix, parsed in by_prefix.items():
            if not _HIVE_NAME_CHARS_RE.match(prefix):
                ctx.warn(
                    _join(parsed.path, "database-prefix"),
                    f"prefix {prefix!r} holds characters Hive does not allow in database names "
                    "(letters, digits and _); clients may be unable to use it",
                )
        prefixes = [p for p in by_prefix if p]
        for a in prefixes:
            for b in prefixes:
                if a != b and b.startswith(a):
                    ctx.warn(
                        _join(by_prefix[b].path, "database-prefix"),
                        f"prefix {b!r} starts with the prefix {a!r} of metastore "
                        f"{by_prefix[a].metastore.name!r}; database names starting with {b!r} "
                        "match both",
                    )


# --------------------------------------------------------------------------------------
# hmsproxy's own format

_OWN_TOP_KEYS = (
    "server", "database-resolution", "primary-meta-store", "federated-meta-stores",
    "http", "audit", "store", "remotes",
)  # fmt: skip
_OWN_SERVER_KEYS = (
    "host",
    "port",
    "transport",
    "fanout-timeout-ms",
    "connect-timeout-s",
    "backend-timeout-s",
    "tls",
    "workers",
)
_TLS_KEYS = ("cert-file", "key-file", "client-ca-file")
_HTTP_KEYS = ("host", "port")
_AUDIT_KEYS = ("enabled", "file", "level", "max-arg-chars")
_AUDIT_LEVELS = ("all", "writes", "errors")
_STORE_KEYS = ("url",)
_REMOTES_KEYS = ("creators", "databases", "tables")
_REMOTE_DB_KEYS = ("name", "remote-database", "factory", "uris", "properties")
_REMOTE_TABLE_KEYS = ("database", "name", "remote-database", "remote-table", "factory", "uris", "properties")


def _parse_tls(ctx: _Ctx, path: str, raw: Any) -> TlsConfig:
    section = _section(ctx, path, _mapping(ctx, path, raw), _TLS_KEYS)
    for key in ("cert-file", "key-file"):
        if not _present(section, key):
            raise ctx.error(_join(path, key), "required when tls is given")
    files = {}
    for key in _TLS_KEYS:
        if _present(section, key):
            value = _str(ctx, _join(path, key), section[key])
            if not Path(value).is_file():
                raise ctx.error(_join(path, key), f"no such file: {value}")
            files[key] = value
    return TlsConfig(files["cert-file"], files["key-file"], files.get("client-ca-file"))


def _parse_http(ctx: _Ctx, raw: Any) -> HttpConfig:
    path = "http"
    section = _section(ctx, path, _mapping(ctx, path, raw), _HTTP_KEYS)
    kwargs: dict[str, Any] = {}
    if _present(section, "host"):
        kwargs["host"] = _str(ctx, _join(path, "host"), section["host"])
    if _present(section, "port"):
        kwargs["port"] = _int(ctx, _join(path, "port"), section["port"], minimum=0, maximum=65535)
    return HttpConfig(**kwargs)


def _parse_audit(ctx: _Ctx, raw: Any) -> AuditConfig:
    path = "audit"
    section = _section(ctx, path, _mapping(ctx, path, raw), _AUDIT_KEYS)
    kwargs: dict[str, Any] = {"enabled": True}
    if _present(section, "enabled"):
        kwargs["enabled"] = _bool(ctx, _join(path, "enabled"), section["enabled"])
    if _present(section, "file"):
        kwargs["file"] = _str(ctx, _join(path, "file"), section["file"])
    if _present(section, "level"):
        kwargs["level"] = _choice(ctx, _join(path, "level"), section["level"], _AUDIT_LEVELS)
    if _present(section, "max-arg-chars"):
        kwargs["max_arg_chars"] = _int(ctx, _join(path, "max-arg-chars"), section["max-arg-chars"], minimum=16)
    return AuditConfig(**kwargs)


def _parse_store(ctx: _Ctx, raw: Any) -> StoreConfig:
    path = "store"
    section = _section(ctx, path, _mapping(ctx, path, raw), _STORE_KEYS)
    if not _present(section, "url"):
        return StoreConfig()
    url = _str(ctx, _join(path, "url"), section["url"])
    if "://" not in url:
        raise ctx.error(_join(path, "url"), f"{url!r} is not a database URL such as sqlite:///hmsproxy.db or postgresql://host/db")
    return StoreConfig(url)


def _parse_remotes(ctx: _Ctx, raw: Any) -> RemotesConfig:
    path = "remotes"
    section = _section(ctx, path, _mapping(ctx, path, raw), _REMOTES_KEYS)
    creators = None
    if _present(section, "creators"):
        raw_creators = _list(ctx, _join(path, "creators"), section["creators"])
        creators = tuple(_str(ctx, _at(_join(path, "creators"), i), c) for i, c in enumerate(raw_creators))
    databases, tables = [], []
    for key, keys, out in (("databases", _REMOTE_DB_KEYS, databases), ("tables", _REMOTE_TABLE_KEYS, tables)):
        if _present(section, key):
            list_path = _join(path, key)
            for i, entry in enumerate(_list(ctx, list_path, section[key])):
                out.append(_parse_static_remote(ctx, _at(list_path, i), entry, keys))
    _check_unique(ctx, path, databases, tables)
    return RemotesConfig(creators, tuple(databases), tuple(tables))


def _parse_static_remote(ctx: _Ctx, path: str, raw: Any, keys: tuple[str, ...]):
    """One `remotes.databases` / `remotes.tables` entry; its factory validates its properties."""
    from hmsproxy.remotes.factories import URIS_PROPERTY, UnknownFactory, get_factory

    section = _section(ctx, path, _mapping(ctx, path, raw), keys)
    text = {k: _str(ctx, _join(path, k), section[k]) for k in keys if k != "properties" and _present(section, k)}
    props = {}
    if _present(section, "properties"):
        raw_props = _mapping(ctx, _join(path, "properties"), section["properties"])
        props = {_str(ctx, _join(path, "properties"), k): str(v) for k, v in raw_props.items()}
    if "uris" in text:
        props[URIS_PROPERTY] = text["uris"]
    for required in ("name", "database") if "database" in keys else ("name",):
        if required not in text:
            raise ctx.error(_join(path, required), "is required")
    factory = text.get("factory", "thrift")
    try:
        get_factory("thrift" if factory.lower().endswith("thrifthivemetastoreclientfactory") else factory).validate(props)
    except (ValueError, UnknownFactory) as e:
        raise ctx.error(path, str(e)) from None
    name = text["name"].lower()
    if "database" not in keys:
        return RemoteDatabase(name, text.get("remote-database", name).lower(), factory, props, owner=STATIC_OWNER)
    db = text["database"].lower()
    return RemoteTable(db, name, text.get("remote-database", db).lower(), text.get("remote-table", name).lower(),
                       factory, props, owner=STATIC_OWNER)  # fmt: skip


def _check_unique(ctx: _Ctx, path: str, databases: list, tables: list) -> None:
    seen: set = set()
    for kind, entries, key in (("databases", databases, lambda d: d.local_name), ("tables", tables, lambda t: (t.local_db, t.local_name))):
        for i, entry in enumerate(entries):
            if key(entry) in seen:
                raise ctx.error(_at(_join(path, kind), i), f"{key(entry)!r} is defined twice")
            seen.add(key(entry))
    remote_dbs = {d.local_name for d in databases}
    for i, t in enumerate(tables):
        if t.local_db in remote_dbs:
            raise ctx.error(_at(_join(path, "tables"), i), f"database {t.local_db!r} is a remote database; remote tables go in local ones")


def _parse_own_server(ctx: _Ctx, raw: Any) -> ServerConfig:
    path = "server"
    section = _section(ctx, path, _mapping(ctx, path, raw), _OWN_SERVER_KEYS)
    kwargs: dict[str, Any] = {}
    if _present(section, "host"):
        kwargs["host"] = _str(ctx, _join(path, "host"), section["host"])
    if _present(section, "port"):
        kwargs["port"] = _int(ctx, _join(path, "port"), section["port"], minimum=1, maximum=65535)
    if _present(section, "transport"):
        kwargs["transport"] = _choice(ctx, _join(path, "transport"), section["transport"], _TRANSPORTS)
    if _present(section, "fanout-timeout-ms"):
        kwargs["fanout_timeout_ms"] = _int(
            ctx, _join(path, "fanout-timeout-ms"), section["fanout-timeout-ms"], minimum=1
        )
    if _present(section, "connect-timeout-s"):
        kwargs["connect_timeout_s"] = _positive_number(
            ctx, _join(path, "connect-timeout-s"), section["connect-timeout-s"]
        )
    if _present(section, "backend-timeout-s"):
        kwargs["backend_timeout_s"] = _positive_number(
            ctx, _join(path, "backend-timeout-s"), section["backend-timeout-s"]
        )
    if _present(section, "tls"):
        kwargs["tls"] = _parse_tls(ctx, _join(path, "tls"), section["tls"])
    if _present(section, "workers"):
        kwargs["workers"] = _int(ctx, _join(path, "workers"), section["workers"], minimum=1, maximum=64)
    return dataclasses.replace(ServerConfig(), **kwargs)


def load_config(path: str | PathLike[str]) -> Config:
    """Load hmsproxy's own YAML configuration file (see config/hmsproxy.example.yml)."""
    data = _read_yaml(path)
    ctx = _Ctx(str(path), strict=True)
    primary, federated, section = _parse_federation(ctx, data, "", _OWN_TOP_KEYS, waggle_dance=False)

    server = ServerConfig()
    if _present(section, "server"):
        server = _parse_own_server(ctx, section["server"])

    resolution = DEFAULT_RESOLUTION
    if _present(section, "database-resolution"):
        resolution = _enum(ctx, "database-resolution", section["database-resolution"], DatabaseResolution)

    _check_federation(ctx, resolution, [primary, *federated])
    sections = {
        "http": ("http", _parse_http),
        "audit": ("audit", _parse_audit),
        "store": ("store", _parse_store),
        "remotes": ("remotes", _parse_remotes),
    }
    extras = {field: parse(ctx, section[key]) for key, (field, parse) in sections.items() if _present(section, key)}
    return Config(
        server=server,
        database_resolution=resolution,
        primary=primary.metastore,
        federated=tuple(p.metastore for p in federated),
        sources=(str(path),),
        **extras,
    )


# --------------------------------------------------------------------------------------
# Waggle Dance's format

_WD_SERVER_USED = ("port", "database-resolution")
_WD_SERVER_IGNORED: dict[str, Callable[[_Ctx, str, Any], None]] = {
    "verbose": _ignored_bool(False, "hmsproxy's logging is set by its own options"),
    "disconnect-connection-delay": _ignored_int(
        5, "hmsproxy manages idle backend connections itself", minimum=1
    ),
    "disconnect-time-unit": _ignored_time_unit(
        "MINUTES", "hmsproxy manages idle backend connections itself"
    ),
    "status-polling-delay": _ignored_int(5, "hmsproxy checks metastore status itself", minimum=1),
    "status-polling-delay-time-unit": _ignored_time_unit(
        "MINUTES", "hmsproxy checks metastore status itself"
    ),
    "configuration-properties": _ignored_mapping(
        "hmsproxy does not apply Hive client configuration properties "
        "(no SASL/Kerberos, SSL or other HiveConf settings towards the metastores)"
    ),
    "query-functions-across-all-metastores": _ignored_bool(
        True, "hmsproxy decides itself where get_all_functions goes"
    ),
    "thrift-server-stop-timeout-val-in-seconds": _ignored_int(60, "hmsproxy's own server setting"),
    "thrift-server-request-timeout": _ignored_int(20, "hmsproxy's own server setting"),
    "thrift-server-request-timeout-unit": _ignored_time_unit("SECONDS", "hmsproxy's own server setting"),
    # hmsproxy never writes the federation file back, whatever this says.
    "yaml-storage": _ignore_silently,
    # Spring Boot, metrics and extension settings of the Java service.
    "graphite": _ignored_mapping("hmsproxy does not send Graphite metrics"),
    "prometheus": _ignored_mapping("hmsproxy does not serve Waggle Dance's Prometheus endpoint"),
    "management": _ignored_mapping("Spring Boot actuator settings"),
    "endpoints": _ignored_mapping("Spring Boot actuator settings"),
    "logging": _ignored_mapping("Spring Boot logging settings"),
    "server": _ignored_mapping("Spring Boot's HTTP server settings"),
    "spring": _ignored_mapping("Spring Boot settings"),
    "waggledance": _ignored_mapping("Waggle Dance extension settings (e.g. rate limiting)"),
}
_WD_FEDERATION_TOP = ("primary-meta-store", "federated-meta-stores")


def _misplaced_server_key(ctx: _Ctx, path: str, value: Any) -> None:
    ctx.warn(path, "ignored: this is a server setting; it belongs in waggle-dance-server.yml")


_WD_FEDERATION_IGNORED = {key: _misplaced_server_key for key in _WD_SERVER_USED}


def _parse_wd_server(
    server_yml: str | PathLike[str] | None,
) -> tuple[int, DatabaseResolution]:
    if server_yml is None:
        return WAGGLE_DANCE_DEFAULT_PORT, WAGGLE_DANCE_DEFAULT_RESOLUTION
    data = _read_yaml(server_yml)
    ctx = _Ctx(str(server_yml), strict=False)
    section = _section(ctx, "", data, _WD_SERVER_USED, _WD_SERVER_IGNORED)
    port = WAGGLE_DANCE_DEFAULT_PORT
    if _present(section, "port"):
        port = _int(ctx, "port", section["port"], minimum=1, maximum=65535)
    resolution = WAGGLE_DANCE_DEFAULT_RESOLUTION
    if _present(section, "database-resolution"):
        resolution = _enum(ctx, "database-resolution", section["database-resolution"], DatabaseResolution)
    return port, resolution


def load_waggle_dance(
    server_yml: str | PathLike[str] | None, federation_yml: str | PathLike[str]
) -> Config:
    """Load a Waggle Dance configuration pair as Waggle Dance would read it.

    `server_yml` may be None, which means all of Waggle Dance's server defaults
    (port 48869, MANUAL resolution).  hmsproxy listens on all interfaces, like Waggle Dance.
    """
    port, resolution = _parse_wd_server(server_yml)
    data = _read_yaml(federation_yml)
    ctx = _Ctx(str(federation_yml), strict=False)
    primary, federated, _ = _parse_federation(
        ctx, data, "", _WD_FEDERATION_TOP, waggle_dance=True, ignored_top=_WD_FEDERATION_IGNORED
    )
    _check_federation(ctx, resolution, [primary, *federated])
    sources = (str(federation_yml),) if server_yml is None else (str(server_yml), str(federation_yml))
    return Config(
        server=ServerConfig(host=WAGGLE_DANCE_HOST, port=port),
        database_resolution=resolution,
        primary=primary.metastore,
        federated=tuple(p.metastore for p in federated),
        sources=sources,
    )


# --------------------------------------------------------------------------------------
# Choosing a loader


def load_from_paths(
    config: str | PathLike[str] | None = None,
    server_config: str | PathLike[str] | None = None,
    federation_config: str | PathLike[str] | None = None,
) -> Config:
    """hmsproxy's own file (`config`), or Waggle Dance's pair; not both.

    `server_config` alone is not enough: Waggle Dance's metastores live in the federation file.
    """
    where = "command line"
    if config is not None and (server_config is not None or federation_config is not None):
        raise ConfigError(
            where,
            "",
            "give either hmsproxy's own configuration file or Waggle Dance's "
            "server/federation files, not both",
        )
    if config is not None:
        return load_config(config)
    if federation_config is not None:
        return load_waggle_dance(server_config, federation_config)
    if server_config is not None:
        raise ConfigError(
            where,
            "",
            "a Waggle Dance server file needs its federation file "
            "(waggle-dance-federation.yml) as well",
        )
    raise ConfigError(
        where,
        "",
        "no configuration given: pass hmsproxy's configuration file, "
        "or Waggle Dance's federation file (and optionally its server file)",
    )


def load(args: Any) -> Config:
    """:func:`load_from_paths` from an argparse namespace with `config`, `server_config`,
    `federation_config` attributes (missing attributes count as not given)."""
    return load_from_paths(
        config=getattr(args, "config", None),
        server_config=getattr(args, "server_config", None),
        federation_config=getattr(args, "federation_config", None),
    )


# --------------------------------------------------------------------------------------
# Describing


def _describe_access(ms: MetastoreConfig) -> list[tuple[str, str]]:
    access = ms.access_control_type
    rows = [("access control", access.value)]
    if access is AccessControlType.READ_ONLY:
        rows.append(("writes", "none (read only)"))
    elif access is AccessControlType.READ_AND_WRITE_AND_CREATE:
        rows.append(("writes", "all databases; may create databases"))
    else:
        listed = ", ".join(ms.writable_database_white_list) or "(empty: no database is writable)"
        creates = (
            "may create databases (they become writable)"
            if access is AccessControlType.READ_AND_WRITE_AND_CREATE_ON_DATABASE_WHITELIST
            else "may not create databases"
        )
        rows.append(("writable databases", listed))
        rows.append(("creates", creates))
    return rows


def _describe_operations(config: Config) -> list[str]:
    server, http, audit = config.server, config.http, config.audit
    tls = "off"
    if server.tls is not None:
        tls = f"on (cert {server.tls.cert_file}, key {server.tls.key_file}"
        tls += f"; clients need a certificate from {server.tls.client_ca_file})" if server.tls.client_ca_file else ")"
    ops = "off" if http.port is None else f"http://{http.host}:{http.port or '<any free port>'} (/metrics, /healthz, /readyz)"
    if audit.enabled:
        where = audit.file or "standard error"
        audit_text = f"{audit.level} calls to {where} (arguments cut at {audit.max_arg_chars} chars)"
    else:
        audit_text = "off"
    creators = "everyone" if config.remotes.creators is None else ", ".join(config.remotes.creators) or "nobody"
    return [
        f"TLS: {tls}",
        f"Workers: {server.workers} process{'es' if server.workers > 1 else ''}",
        f"Operations endpoint: {ops}",
        f"Audit: {audit_text}",
        f"Store: {config.store.url}",
        f"Remote database creators: {creators}",
    ]


def describe(config: Config) -> str:
    """The resolved federation as readable text (for `hmsproxy check-config`)."""
    server = config.server
    prefixed = config.database_resolution is DatabaseResolution.PREFIXED
    lines = []
    if config.sources:
        lines.append(f"Configuration: {', '.join(config.sources)}")
    lines.append(
        f"Listening on: {server.host}:{server.port} ({server.transport} transport)"
    )
    lines.append(
        f"Timeouts: fan-out {server.fanout_timeout_ms} ms (+ each metastore's latency), "
        f"connect {server.connect_timeout_s:g} s, backend call {server.backend_timeout_s:g} s"
    )
    lines.extend(_describe_operations(config))
    if prefixed:
        lines.append(
            "Database resolution: PREFIXED (clients name databases as <prefix><database>; "
            "names matching no prefix go to the primary)"
        )
    else:
        lines.append(
            "Database resolution: MANUAL (databases keep their names; a database not "
            "mapped to a federated metastore goes to the primary)"
        )
    lines.append(f"Metastores: {len(config.metastores)} (1 primary, {len(config.federated)} federated)")

    for ms in config.metastores:
        rows: list[tuple[str, str]] = []
        rows.append(("uris", ", ".join(ms.uris)))
        if ms.read_only_uris:
            rows.append(("read-only uris", ", ".join(ms.read_only_uris) + " (get_* calls go here)"))
        prefix = repr(ms.database_prefix) + (" (no prefix)" if not ms.database_prefix else "")
        if not prefixed:
            prefix += " (not used in MANUAL mode)"
        rows.append(("database prefix", prefix))
        if ms.mapped_databases is None:
            rows.append(("mapped databases", "all"))
        elif not ms.mapped_databases:
            rows.append(("mapped databases", "none (no database of this metastore is visible)"))
        else:
            rows.append(("mapped databases", ", ".join(ms.mapped_databases)))
        if ms.mapped_tables:
            for i, mt in enumerate(ms.mapped_tables):
                rows.append(
                    ("mapped tables" if i == 0 else "", f"{mt.database}: {', '.join(mt.patterns)}")
                )
            rows.append(("", "(tables of other databases: all)"))
        else:
            rows.append(("mapped tables", "all"))
        if ms.database_name_mapping:
            for i, (remote, shown) in enumerate(ms.database_name_mapping.items()):
                rows.append(
                    (
                        "database name mapping" if i == 0 else "",
                        f"{remote} -> also shown as {ms.database_prefix if prefixed else ''}{shown}",
                    )
                )
        else:
            rows.append(("database name mapping", "none"))
        rows.extend(_describe_access(ms))
        deadline = server.fanout_timeout_ms + ms.latency_ms
        rows.append(("latency", f"{ms.latency_ms} ms (fan-out deadline {deadline} ms)"))
        rows.append(("hive version", ms.hive_version or "probed on first connect"))

        role = "primary" if ms.primary else "federated"
        lines.append("")
        lines.append(f"[{role}] {ms.name}")
        width = max(len(label) for label, _ in rows)
        for label, value in rows:
            label_text = f"{label}:" if label else ""
            lines.append(f"  {label_text:<{width + 1}}  {value}")
    return "\n".join(lines) + "\n"

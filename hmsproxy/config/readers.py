"""Readers a key definition names (config/keys.py): fields.py's checks with their bounds bound,
and the checks of one key's value that only some keys need (files, principals, QOPs, ...).

Each returns a reader `(ctx, path, raw) -> value` that raises ConfigError on bad input.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hmsproxy.config.auth_to_local import Rule, RuleError, parse_rule
from hmsproxy.config.errors import Ctx, at_index, join_key, kind_of
from hmsproxy.config.fields import (
    read_bool,
    read_choice,
    read_enum,
    read_int,
    read_list,
    read_mapping,
    read_non_negative_number,
    read_positive_number,
    read_regex_list,
    read_str,
    read_uris,
)
from hmsproxy.config.keys import listed

Reader = Callable[[Ctx, str, Any], Any]

QOPS = ("auth", "auth-int", "auth-conf")
_HIVE_VERSION_RE = re.compile(r"^[1-9]\d*\.\d+(\.\d+)?$")

# The plain ones, as readers.
boolean: Reader = read_bool
positive: Reader = read_positive_number
non_negative: Reader = read_non_negative_number
uris: Reader = read_uris
regexes: Reader = read_regex_list


def text(*, allow_empty: bool = False, lower: bool = False) -> Reader:
    def read(ctx: Ctx, path: str, raw: Any) -> str:
        value = read_str(ctx, path, raw, allow_empty=allow_empty)
        return value.lower() if lower else value

    return read


def whole(minimum: int | None = None, maximum: int | None = None) -> Reader:
    def read(ctx: Ctx, path: str, raw: Any) -> int:
        return read_int(ctx, path, raw, minimum=minimum, maximum=maximum)

    return read


def choice(*choices: str) -> Reader:
    def read(ctx: Ctx, path: str, raw: Any) -> str:
        return read_choice(ctx, path, raw, choices)

    return read


def enum_of(enum_cls: type) -> Reader:
    def read(ctx: Ctx, path: str, raw: Any) -> Any:
        return read_enum(ctx, path, raw, enum_cls)

    return read


def existing_file(ctx: Ctx, path: str, raw: Any) -> str:
    value = read_str(ctx, path, raw)
    if not Path(value).is_file():
        raise ctx.error(path, f"no such file: {value}")
    return value


def readable_file(ctx: Ctx, path: str, raw: Any) -> str:
    """A file this process can read, checked at start, not when the first client needs it."""
    value = existing_file(ctx, path, raw)
    if not os.access(value, os.R_OK):
        raise ctx.error(path, f"{value} is not readable by this process (uid {os.getuid()})")
    return value


def principal(example: str) -> Reader:
    """A Kerberos principal (user/host@REALM); `example` is shown when it is not one."""

    def read(ctx: Ctx, path: str, raw: Any) -> str:
        value = read_str(ctx, path, raw)
        if "@" not in value:
            raise ctx.error(path, f"{value!r} is not a Kerberos principal such as {example}")
        return value

    return read


def qop_list(ctx: Ctx, path: str, raw: Any) -> tuple[str, ...]:
    """One QOP, a list, or Hive's comma list ("auth-conf,auth-int,auth"): the port offers them all."""
    items = raw.split(",") if isinstance(raw, str) else read_list(ctx, path, raw)
    qops = tuple(read_choice(ctx, at_index(path, i) if not isinstance(raw, str) else path, item, QOPS) for i, item in enumerate(items))
    if not qops:
        raise ctx.error(path, f"names no QOP (one or more of {', '.join(QOPS)})")
    if len(set(qops)) != len(qops):
        raise ctx.error(path, f"{', '.join(qops)} names a QOP twice")
    return qops


def auth_to_local_rules(ctx: Ctx, path: str, raw: Any) -> tuple[Rule, ...]:
    rules: list[Rule] = []
    for i, text_rule in enumerate(read_list(ctx, path, raw)):
        try:
            rules.append(parse_rule(read_str(ctx, at_index(path, i), text_rule)))
        except RuleError as e:
            raise ctx.error(at_index(path, i), f"{text_rule!r}: {e}") from None
    return tuple(rules)


def user_name(ctx: Ctx, path: str, raw: Any) -> str:
    """A user (short) name, as Hadoop's hadoop.proxyuser.* names them: a principal there would never
    match, since sessions and token owners are compared by their short names."""
    name = read_str(ctx, path, raw)
    if "@" in name:
        short = name.split("@", 1)[0].split("/", 1)[0]
        raise ctx.error(path, f"{name!r} is a Kerberos principal; name its user (its short name, e.g. {short!r})")
    return name


def host_or_network(ctx: Ctx, path: str, raw: Any) -> str:
    host = read_str(ctx, path, raw).strip()
    if host != "*":
        try:
            ipaddress.ip_network(host, strict=False)
        except ValueError:
            raise ctx.error(path, f"{host!r} is not an IP address, a CIDR such as 10.0.0.0/8, or *") from None
    return host


def hive_version(ctx: Ctx, path: str, raw: Any) -> str:
    if not isinstance(raw, str):
        raise ctx.error(path, f'must be a quoted version string such as "2.3" or "4.0.1", got {kind_of(raw)}')
    version = raw.strip()
    if not _HIVE_VERSION_RE.match(version):
        raise ctx.error(path, f'{version!r} is not a Hive version such as "2.3", "3.1" or "4.0.1"')
    return version


def database_url(ctx: Ctx, path: str, raw: Any) -> str:
    url = read_str(ctx, path, raw)
    if "://" not in url:
        raise ctx.error(path, f"{url!r} is not a database URL such as sqlite:///hmsproxy.db or postgresql://host/db")
    return url


def percentile(ctx: Ctx, path: str, raw: Any) -> float:
    value = read_positive_number(ctx, path, raw)
    if not 0 < value < 100:
        raise ctx.error(path, f"must be above 0 and below 100 (95 is the 95th percentile), got {value:g}")
    return value


def non_empty(reader: Reader, reason: str) -> Reader:
    """`reader`'s value, refused with `reason` when it is empty."""

    def read(ctx: Ctx, path: str, raw: Any) -> Any:
        value = reader(ctx, path, raw)
        if not value:
            raise ctx.error(path, reason)
        return value

    return read


def unique_databases(entry: Reader) -> Reader:
    """A list of `entry` values that each name a `database`: one entry per database (a later one
    replaces an earlier one, with a warning; an error in hmsproxy's own strict format)."""

    def read(ctx: Ctx, path: str, raw: Any) -> tuple:
        entries: dict[str, Any] = {}
        first_path: dict[str, str] = {}
        for i, item in enumerate(read_list(ctx, path, raw)):
            entry_path = at_index(path, i)
            value = entry(ctx, entry_path, item)
            if value.database in entries:
                message = f"database {value.database!r} is already listed at {first_path[value.database]}"
                if ctx.strict:
                    raise ctx.error(join_key(entry_path, "database"), message)
                ctx.warn(join_key(entry_path, "database"), message + "; this later entry replaces it")
            entries[value.database] = value
            first_path.setdefault(value.database, entry_path)
        return tuple(entries.values())

    return listed(read, entry)


def name_mapping(ctx: Ctx, path: str, raw: Any) -> dict[str, str]:
    """Remote database name -> the name shown for it, both lower-cased; two may not share a name."""
    result: dict[str, str] = {}
    shown_by: dict[str, str] = {}
    for key_raw, target in read_mapping(ctx, path, raw).items():
        key_text = read_str(ctx, path, key_raw)
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
        result[remote] = shown
        shown_by[shown] = remote
    return result

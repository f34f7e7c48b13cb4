"""The `remotes` section of hmsproxy's YAML: who may create remotes, and remotes the admin defines."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hmsproxy.config.errors import Ctx, at_index, join_key
from hmsproxy.config.fields import present, read_list, read_mapping, read_section, read_str
from hmsproxy.features.remotes.factories import URIS_PROPERTY, UnknownFactory, get_factory
from hmsproxy.features.remotes.model import RemoteDatabase, RemoteTable
from hmsproxy.pipeline.platform import ConfigSection

#: The owner shown for remotes the admin defines in the config file.
STATIC_OWNER = "config"

_REMOTES_KEYS = ("creators", "databases", "tables")
_REMOTE_DB_KEYS = ("name", "remote-database", "factory", "uris", "properties")
_REMOTE_TABLE_KEYS = ("database", "name", "remote-database", "remote-table", "factory", "uris", "properties")


@dataclass(frozen=True)
class RemotesConfig:
    #: Users (from set_ugi) who may create remote databases and tables; None: everyone.
    creators: tuple[str, ...] | None = None
    #: Remotes the admin defines in the config; they win over the store's and can't be dropped.
    databases: tuple[RemoteDatabase, ...] = ()
    tables: tuple[RemoteTable, ...] = ()


def parse_remotes(ctx: Ctx, raw: Any) -> RemotesConfig:
    path = "remotes"
    section = read_section(ctx, path, read_mapping(ctx, path, raw), _REMOTES_KEYS)
    creators = None
    if present(section, "creators"):
        raw_creators = read_list(ctx, join_key(path, "creators"), section["creators"])
        creators = tuple(read_str(ctx, at_index(join_key(path, "creators"), i), c) for i, c in enumerate(raw_creators))
    databases, tables = [], []
    for key, keys, out in (("databases", _REMOTE_DB_KEYS, databases), ("tables", _REMOTE_TABLE_KEYS, tables)):
        if present(section, key):
            list_path = join_key(path, key)
            for i, entry in enumerate(read_list(ctx, list_path, section[key])):
                out.append(_parse_static_remote(ctx, at_index(list_path, i), entry, keys))
    _check_unique(ctx, path, databases, tables)
    return RemotesConfig(creators, tuple(databases), tuple(tables))


def _parse_static_remote(ctx: Ctx, path: str, raw: Any, keys: tuple[str, ...]):
    """One `remotes.databases` / `remotes.tables` entry; its factory validates its properties."""
    section = read_section(ctx, path, read_mapping(ctx, path, raw), keys)
    text = {k: read_str(ctx, join_key(path, k), section[k]) for k in keys if k != "properties" and present(section, k)}
    props = {}
    if present(section, "properties"):
        raw_props = read_mapping(ctx, join_key(path, "properties"), section["properties"])
        props = {read_str(ctx, join_key(path, "properties"), k): str(v) for k, v in raw_props.items()}
    if "uris" in text:
        props[URIS_PROPERTY] = text["uris"]
    for required in ("name", "database") if "database" in keys else ("name",):
        if required not in text:
            raise ctx.error(join_key(path, required), "is required")
    factory = text.get("factory", "thrift")
    try:
        get_factory("thrift" if factory.lower().endswith("thrifthivemetastoreclientfactory") else factory).validate(props)
    except (ValueError, UnknownFactory) as e:
        raise ctx.error(path, str(e)) from None
    name = text["name"].lower()
    if "database" not in keys:
        return RemoteDatabase(name, text.get("remote-database", name).lower(), factory, props, owner=STATIC_OWNER)
    db = text["database"].lower()
    return RemoteTable(
        db, name, text.get("remote-database", db).lower(), text.get("remote-table", name).lower(), factory, props, owner=STATIC_OWNER
    )


def _check_unique(ctx: Ctx, path: str, databases: list, tables: list) -> None:
    seen: set = set()
    for kind, entries, key in (("databases", databases, lambda d: d.local_name), ("tables", tables, lambda t: (t.local_db, t.local_name))):
        for i, entry in enumerate(entries):
            if key(entry) in seen:
                raise ctx.error(at_index(join_key(path, kind), i), f"{key(entry)!r} is defined twice")
            seen.add(key(entry))
    remote_dbs = {d.local_name for d in databases}
    for i, t in enumerate(tables):
        if t.local_db in remote_dbs:
            raise ctx.error(
                at_index(join_key(path, "tables"), i), f"database {t.local_db!r} is a remote database; remote tables go in local ones"
            )


def _describe(settings: RemotesConfig) -> list[str]:
    creators = "everyone" if settings.creators is None else ", ".join(settings.creators) or "nobody"
    lines = [f"Remote database creators: {creators}"]
    if settings.databases or settings.tables:
        lines.append(f"Remotes in the config: {len(settings.databases)} databases, {len(settings.tables)} tables")
    return lines


SECTION = ConfigSection("remotes", parse_remotes, RemotesConfig(), _describe)


def remotes_settings(config) -> RemotesConfig:
    """The `remotes` section of a config snapshot (its default when the file has none)."""
    return config.sections.get(SECTION.key, SECTION.default)

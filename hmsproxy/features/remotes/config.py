"""The `remotes` section of hmsproxy's YAML: who may create remotes, and remotes the admin defines."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hmsproxy.config import readers as r
from hmsproxy.config.errors import Ctx, at_index, join_key
from hmsproxy.config.fields import read_mapping, read_str
from hmsproxy.config.keys import build, each, key
from hmsproxy.config.sections import keyed_section
from hmsproxy.features.remotes.factories import URIS_PROPERTY, UnknownFactory, get_factory
from hmsproxy.features.remotes.model import RemoteDatabase, RemoteTable

#: The owner shown for remotes the admin defines in the config file.
STATIC_OWNER = "config"


def _properties(ctx: Ctx, path: str, raw: Any) -> dict[str, str]:
    return {read_str(ctx, path, k): str(v) for k, v in read_mapping(ctx, path, raw).items()}


@dataclass(frozen=True, kw_only=True)
class _StaticDatabase:
    """A `remotes.databases` entry as the file spells it (read into a RemoteDatabase)."""

    name: str = key("name", r.text(), "its name here (lower-cased)", required="is required")
    remote_database: str | None = key(
        "remote-database", r.text(), "the database's name in the remote catalog", default=None, shown_default="the local one"
    )
    factory: str = key("factory", r.text(), "the catalog factory that reaches the remote", default="thrift")
    uris: str | None = key("uris", r.text(), "the remote's URIs (the factory's uris property)", default=None)
    properties: dict[str, str] = key("properties", _properties, "the factory's properties", default_factory=dict)

    def checked_properties(self, ctx: Ctx, path: str) -> dict[str, str]:
        """The factory's properties, `uris` among them, as its factory validates them."""
        props = dict(self.properties)
        if self.uris is not None:
            props[URIS_PROPERTY] = self.uris
        factory = "thrift" if self.factory.lower().endswith("thrifthivemetastoreclientfactory") else self.factory
        try:
            get_factory(factory).validate(props)
        except (ValueError, UnknownFactory) as e:
            raise ctx.error(path, str(e)) from None
        return props


@dataclass(frozen=True, kw_only=True)
class _StaticTable(_StaticDatabase):
    """A `remotes.tables` entry: a remote table shown in a local database."""

    database: str = key("database", r.text(), "the local database it is shown in", required="is required")
    remote_table: str | None = key("remote-table", r.text(), "the table's name in the remote catalog", default=None, shown_default="name")


def _remote_database(ctx: Ctx, path: str, raw: Any) -> RemoteDatabase:
    entry = build(ctx, path, raw, _StaticDatabase)
    props = entry.checked_properties(ctx, path)
    name = entry.name.lower()
    return RemoteDatabase(name, (entry.remote_database or name).lower(), entry.factory, props, owner=STATIC_OWNER)


def _remote_table(ctx: Ctx, path: str, raw: Any) -> RemoteTable:
    entry = build(ctx, path, raw, _StaticTable)
    props = entry.checked_properties(ctx, path)
    name, db = entry.name.lower(), entry.database.lower()
    return RemoteTable(
        db, name, (entry.remote_database or db).lower(), (entry.remote_table or name).lower(), entry.factory, props, owner=STATIC_OWNER
    )


@dataclass(frozen=True)
class RemotesConfig:
    creators: tuple[str, ...] | None = key(
        "creators",
        each(r.text()),
        "users (from set_ugi) who may create remote databases and tables",
        default=None,
        shown_default="everyone",
    )
    # Config-file remotes win over the store's and can't be dropped.
    databases: tuple[RemoteDatabase, ...] = key(
        "databases", each(_remote_database), "remote databases the admin defines", default=(), nested=_StaticDatabase
    )
    tables: tuple[RemoteTable, ...] = key(
        "tables", each(_remote_table), "remote tables the admin defines, in local databases", default=(), nested=_StaticTable
    )


def _check_unique(ctx: Ctx, path: str, remotes: RemotesConfig) -> None:
    databases, tables = remotes.databases, remotes.tables
    seen: set = set()
    for kind, entries, identity in (
        ("databases", databases, lambda d: d.local_name),
        ("tables", tables, lambda t: (t.local_db, t.local_name)),
    ):
        for i, entry in enumerate(entries):
            if identity(entry) in seen:
                raise ctx.error(at_index(join_key(path, kind), i), f"{identity(entry)!r} is defined twice")
            seen.add(identity(entry))
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


SECTION = keyed_section("remotes", RemotesConfig, _describe, check=_check_unique)


def remotes_settings(config) -> RemotesConfig:
    """The `remotes` section of a config snapshot (its default when the file has none)."""
    return config.sections.get(SECTION.key, SECTION.default)

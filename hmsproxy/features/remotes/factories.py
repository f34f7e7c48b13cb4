"""Client factories: what `VIA 'name'` in a remote's DDL connects with.

A factory turns a remote's properties (TBLPROPERTIES / DBPROPERTIES) into the
metastore the proxy should call. `thrift`, `iceberg-rest` and `glue` are built in; others load by dotted
path ("package.module:Class") or by the entry point group `hmsproxy.client_factories`.
"""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points
from typing import Protocol

from hmsproxy.catalogs.glue_factory import GlueFactory
from hmsproxy.catalogs.iceberg_rest.factory import IcebergRestFactory
from hmsproxy.catalogs.metastore import catalog_metastore as catalog_metastore  # plug-in factories' way to it, kept here
from hmsproxy.config.model import AccessControlType, MetastoreConfig
from hmsproxy.config.waggle_dance_kerberos import client_sasl
from hmsproxy.upstream.wire import parse_uri

ENTRY_POINT_GROUP = "hmsproxy.client_factories"
DEFAULT_FACTORY = "thrift"
URIS_PROPERTY = "hive.metastore.uris"
VERSION_PROPERTY = "hive.metastore.version"
#: The writes a link that takes commits lets through to its catalog: an Iceberg writer's swap of metadata_location.
COMMIT_METHODS = frozenset({"alter_table", "alter_table_with_environment_context"})


class UnknownFactory(ValueError):
    pass


class ClientFactory(Protocol):
    def validate(self, properties: dict[str, str]) -> None:
        """Raise ValueError naming the property that is missing or wrong."""

    # Optional: `where(properties) -> str`, the target as status and messages name it (a URI, a region;
    # never a secret), and what tells one target from another (Targets.key). Without it: every property.
    # Optional: `commits(properties) -> bool`, whether the link takes Iceberg writers' commits
    # (COMMIT_METHODS, their lock held on the primary); its catalog client then has `commit`.

    def metastore(self, key: str, properties: dict[str, str]) -> MetastoreConfig:
        """The (read-only) metastore a remote with these properties lives in; `key` names it. A
        catalog without a Thrift API returns catalog_metastore(...): its client (catalogs/client.py)
        answers the read methods."""


class ThriftFactory:
    """A Hive metastore reached over Thrift at `hive.metastore.uris`; a Kerberized one with Hive's
    own keys (hive.metastore.sasl.enabled, hive.metastore.kerberos.principal, hadoop.rpc.protection),
    reached as the proxy's own principal."""

    def validate(self, properties: dict[str, str]) -> None:
        client_sasl(properties)
        uris = properties.get(URIS_PROPERTY, "").strip()
        if not uris:
            raise ValueError(f"property '{URIS_PROPERTY}' is required (thrift://host:port[,thrift://...])")
        for uri in uris.split(","):
            try:
                parse_uri(uri)
            except ValueError as e:
                raise ValueError(f"property '{URIS_PROPERTY}': {e}") from None

    def metastore(self, key: str, properties: dict[str, str]) -> MetastoreConfig:
        self.validate(properties)
        uris = tuple(u.strip() for u in properties[URIS_PROPERTY].split(",") if u.strip())
        return MetastoreConfig(
            name=key,
            uris=uris,
            access_control_type=AccessControlType.READ_ONLY,
            hive_version=properties.get(VERSION_PROPERTY) or None,
            sasl=client_sasl(properties),
        )


_BUILT_IN: dict[str, ClientFactory] = {
    DEFAULT_FACTORY: ThriftFactory(),
    "iceberg-rest": IcebergRestFactory(),
    "glue": GlueFactory(),
}


def get_factory(name: str | None) -> ClientFactory:
    """The factory `VIA name` refers to: built in, an entry point, or "module:Class" / "module.Class"."""
    name = (name or DEFAULT_FACTORY).strip()
    if name.lower() in _BUILT_IN:
        return _BUILT_IN[name.lower()]
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == name:
            return ep.load()()
    module_name, sep, attr = name.replace(":", ".").rpartition(".")
    if not sep:
        raise UnknownFactory(
            f"unknown client factory '{name}': not built in ({', '.join(_BUILT_IN)}), "
            f"not an entry point in '{ENTRY_POINT_GROUP}', not a dotted path"
        )
    try:
        return getattr(importlib.import_module(module_name), attr)()
    except (ImportError, AttributeError) as e:
        raise UnknownFactory(f"client factory '{name}' can't be loaded: {e}") from None

"""The metastore a catalog without a Thrift API is, for the proxy (a remote factory's answer)."""

from __future__ import annotations

from hmsproxy.catalogs.client import CatalogMaker
from hmsproxy.catalogs.connection import SERVED_VERSION, connector
from hmsproxy.config.model import AccessControlType, MetastoreConfig


def catalog_metastore(key: str, where: str, maker: CatalogMaker) -> MetastoreConfig:
    """The read-only metastore of a catalog without a Thrift API: `where` names it in messages and
    status (never a secret), `maker` makes its client per connection. Here, below the features, so
    catalog packages build it without importing the remotes feature that imports them."""
    return MetastoreConfig(
        name=key, uris=(where,), access_control_type=AccessControlType.READ_ONLY, hive_version=SERVED_VERSION, connect=connector(maker)
    )

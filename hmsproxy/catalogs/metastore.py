"""The metastore a catalog without a Thrift API is, for the proxy (a remote factory's answer)."""

from __future__ import annotations

from hmsproxy.catalogs.client import CatalogMaker
from hmsproxy.catalogs.connection import SERVED_VERSION, connector
from hmsproxy.config.model import AccessControlType, MetastoreConfig


def catalog_metastore(key: str, where: str, maker: CatalogMaker, *, commits: bool = False) -> MetastoreConfig:
    """The metastore of a catalog without a Thrift API: `where` names it in messages and status
    (never a secret), `maker` makes its client per connection. Read-only, unless its client takes
    commits (`commits`): then its databases are writable, and the remotes feature lets only a
    commit's alter_table through (features/remotes/protection.py). Here, below the features, so
    catalog packages build it without importing the remotes feature that imports them."""
    if commits:
        access, writable = AccessControlType.READ_AND_WRITE_ON_DATABASE_WHITELIST, (".*",)
    else:
        access, writable = AccessControlType.READ_ONLY, ()
    return MetastoreConfig(
        name=key,
        uris=(where,),
        access_control_type=access,
        writable_database_white_list=writable,
        hive_version=SERVED_VERSION,
        connect=connector(maker),
    )

"""The composition root: which features a proxy runs, and the one place that builds a handler.

Every entry point (``hmsproxy serve``, ``dev up``, the tests' proxy) builds its handler
here. FEATURES is in hook order: limits refuse or hold a call before any work, access
control refuses before anything is answered, the catalog lists what the features after it contribute, audit and metrics observe
everything. Adding a feature is one line here (see docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from os import PathLike

from hmsproxy import config
from hmsproxy.config.model import Config
from hmsproxy.features.access import AccessControl
from hmsproxy.features.audit import Audit
from hmsproxy.features.catalog import Catalog
from hmsproxy.features.dependent.feature import Dependent
from hmsproxy.features.indexes.feature import Indexes
from hmsproxy.features.limits.feature import Limits
from hmsproxy.features.metrics import Metrics
from hmsproxy.features.notifications.feature import Notifications
from hmsproxy.features.remotes.feature import Remotes
from hmsproxy.features.skew.feature import Skew
from hmsproxy.features.statements import Statements
from hmsproxy.features.tokens.feature import Tokens
from hmsproxy.features.transactions.feature import Transactions
from hmsproxy.pipeline.handler import Handler
from hmsproxy.pipeline.platform import ConfigSection, Feature
from hmsproxy.store import Store

FEATURES: tuple[type[Feature], ...] = (
    Limits,  # rates per user, address and method class, metastores' concurrency caps: before any work
    Tokens,  # the proxy's own delegation tokens (server.sasl): answered before any other feature sees the call
    AccessControl,  # who may write where (Waggle Dance's access-control types)
    Audit,  # one JSON line per call
    Metrics,  # /metrics
    Statements,  # hmsproxy_execute(_script): every feature's statements
    Catalog,  # virtual databases and tables in every listing
    Remotes,  # remote databases and tables
    Skew,  # skewed tables: statements, validation, skew kept against clients that drop it
    Dependent,  # dependent tables: served as views the proxy writes, drop protection, lineage
    Indexes,  # indexes: proxy-owned metadata for every backend, index tables kept safe
    Transactions,  # transaction, lock and write ids go to the metastore they belong to
    Notifications,  # one merged notification log of every metastore (notifications.federate)
)


def config_sections(features: Sequence[type[Feature]] = FEATURES) -> list[ConfigSection]:
    """The top-level config keys the features own (the config loader reads them)."""
    return [f.config_section for f in features if f.config_section is not None]


def build_handler(config: Config, features: Sequence[type[Feature]] = FEATURES, *, connect=None) -> Handler:
    """A handler running `features`, with the store at `config.store.url` migrated for them.

    `connect`: how backend connections are made (hmsproxy.testing's fakes; default Thrift).
    """
    store = Store(config.store.url, [f.store_schema for f in features if f.store_schema is not None])
    handler = Handler(config, store=store, connect=connect)
    try:
        handler.install(*features)
    except BaseException:
        handler.close()
        raise
    return handler


def load_config(path: str | PathLike[str], features: Sequence[type[Feature]] = FEATURES) -> Config:
    """hmsproxy's own config file, with the config sections of `features`."""
    return config.load_config(path, config_sections(features))

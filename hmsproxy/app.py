"""The composition root: which features a handler runs, built from one config.

Every entry point (``hmsproxy serve``, ``dev up``, the tests' proxy) builds its
handler here, so a feature is wired in exactly one place. Features are added
in the order their hooks should run.
"""

from __future__ import annotations

from hmsproxy.config_model import Config
from hmsproxy.features.audit import Audit
from hmsproxy.features.ddl import DdlStatements
from hmsproxy.features.metrics import Metrics
from hmsproxy.features.remotes.feature import Remotes
from hmsproxy.handler import Handler
from hmsproxy.ops.readiness import default_readiness
from hmsproxy.store import Store, store_check


def build_handler(config: Config) -> Handler:
    handler = Handler(config)
    try:
        handler.store = Store(config.store.url)  # one per handler: remotes, ...; closed by handler.close()
    except BaseException:
        handler.close()
        raise
    handler.closers.append(handler.store.close)
    # Feature wiring goes here, one line each, e.g. handler.add_feature(Audit(config.audit)).
    handler.audit = handler.add_feature(Audit())  # reads config.audit per call, so reloads apply
    handler.closers.append(handler.audit.close)
    handler.metrics = handler.add_feature(Metrics(handler.backends))  # served on /metrics
    handler.store.on_error = handler.metrics.store_errors.inc
    handler.readiness = default_readiness(handler)  # /readyz; the store adds its check here
    handler.readiness.add(store_check(handler.store))
    handler.ddl = handler.add_feature(DdlStatements(handler.store, lambda: handler.config))  # hmsproxy_execute
    handler.remotes = handler.add_feature(Remotes(handler, handler.store))  # remote databases and tables
    handler.ddl.exists_locally = handler.remotes.exists_locally  # CREATE REMOTE ... name clashes
    handler.ddl.table_exists_locally = handler.remotes.table_exists_locally
    return handler

"""The composition root: which features a handler runs, built from one config.

Every entry point (``hmsproxy serve``, ``dev up``, the tests' proxy) builds its
handler here, so a feature is wired in exactly one place. Features are added
in the order their hooks should run.
"""

from __future__ import annotations

from hmsproxy.config_model import Config
from hmsproxy.handler import Handler


def build_handler(config: Config) -> Handler:
    handler = Handler(config)
    # Feature wiring goes here, one line each, e.g. handler.add_feature(Audit(config.audit)).
    return handler

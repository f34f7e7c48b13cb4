"""One derived copy of a metastore config per key, the same object while its source is.

Remotes derive configs call by call: a tunnel's copy (its URIs the tunnel's local end), a renamed
link's copy (a database named otherwise to the client). Backends.stack finds a config's policies by
identity first, so each copy is made once and handed out again until its source or its changes
differ (a rebuilt tunnel listens on a new port; a reload gives a new source object)."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Hashable

from hmsproxy.config.model import MetastoreConfig


class DerivedConfigs:
    def __init__(self):
        self._kept: dict[Hashable, tuple[MetastoreConfig, dict, MetastoreConfig]] = {}
        self._lock = threading.Lock()

    def of(self, key: Hashable, source: MetastoreConfig, **changes) -> MetastoreConfig:
        """`source` with `changes`, the object returned last time for `key` if both are unchanged."""
        kept = self._kept.get(key)
        if kept is not None and kept[0] is source and kept[1] == changes:
            return kept[2]
        with self._lock:
            kept = self._kept.get(key)
            if kept is None or kept[0] is not source or kept[1] != changes:
                kept = self._kept[key] = (source, changes, dataclasses.replace(source, **changes))
            return kept[2]

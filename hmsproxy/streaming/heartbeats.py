"""Heartbeats for an open batch: its transactions and its held lock stay alive while it is open.

The metastore aborts a transaction (and drops a lock) that has not been heartbeated for
`hive.txn.timeout`; the seed's rule of thumb is a heartbeat every half of it. They go on a
connection of their own (as Hive's heartbeat thread's), so a long write never delays them.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from thriftpy2.thrift import TException

from hmsproxy.protocol import idl
from hmsproxy.streaming.metastore import Metastore

log = logging.getLogger(__name__)
hive = idl.hive

DEFAULT_TXN_TIMEOUT_S = 300.0
_UNITS = {"ms": 0.001, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}


def parse_duration_s(text: str | None, default_s: float = DEFAULT_TXN_TIMEOUT_S) -> float:
    """Hive's time values: '300', '300s', '5m', '1500ms' (seconds when no unit)."""
    text = (text or "").strip().lower()
    number = text.rstrip("abcdefghijklmnopqrstuvwxyz")
    unit = text[len(number) :] or "s"
    try:
        return float(number) * _UNITS[unit]
    except (ValueError, KeyError):
        return default_s


def txn_timeout_s(ms: Metastore) -> float:
    try:
        return parse_duration_s(ms.call("get_config_value", "hive.txn.timeout", "300"))
    except (TException, OSError):
        return DEFAULT_TXN_TIMEOUT_S


class Heartbeats:
    """A daemon thread calling `beat(ms)` every `interval_s` until stopped; `now()` beats at once."""

    def __init__(self, uri: str, user: str, interval_s: float, beat: Callable[[Metastore], None], *, sasl_principal: str | None = None):
        self.interval_s = interval_s
        self._beat = beat
        self._ms = Metastore(uri, user, sasl_principal=sasl_principal)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="hmsproxy-stream-heartbeats", daemon=True)
        self._thread.start()

    def now(self) -> None:
        self._beat(self._ms)

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self._beat(self._ms)
            except Exception as e:  # noqa: BLE001 - a missed heartbeat shows at commit, as the metastore's error
                log.warning("streaming heartbeat failed: %s", e)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=self.interval_s + 30)
        self._ms.close()

"""Live reload: re-read the config files and swap the snapshot, or keep the old one.

`hmsproxy serve` reloads on SIGHUP; `hmsproxy reload` finds the server through
the pid file serve writes and sends it that signal. Routing, access control,
fan-out timeouts, backend timeouts and audit settings change at once (open
client connections stay); the listening address, transport, TLS, Kerberos on
the proxy's port, workers and the HTTP port are bound when the process starts,
so changes to them are logged as needing a restart.
"""

from __future__ import annotations

import logging
import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # no config loaders at import
    from hmsproxy.config.model import Config

log = logging.getLogger(__name__)


_RESTART_ONLY = {
    "server.host": lambda c: c.server.host,
    "server.port": lambda c: c.server.port,
    "server.transport": lambda c: c.server.transport,
    "server.tls": lambda c: c.server.tls,
    # Kerberos on the proxy's port is set up when the listener starts; the identity the proxy uses
    # towards Kerberized metastores (principal, keytab) applies to their next connections at once.
    "server.sasl (the proxy's port)": lambda c: c.server.sasl if c.server.sasl is not None and c.server.sasl.enabled else None,
    "server.workers": lambda c: c.server.workers,
    "http": lambda c: c.http,
    "store": lambda c: c.store,
}


def reload_config(handler, load: Callable[[], Config]) -> bool:
    """Apply what `load()` returns; on ConfigError keep serving the current config. True if applied."""
    from hmsproxy.config import ConfigError

    try:
        new = load()
    except ConfigError as e:
        log.error("reload rejected, still serving the previous configuration: %s", e)
        return False
    old = handler.config
    pending = [key for key, get in _RESTART_ONLY.items() if get(old) != get(new)]
    handler.apply_config(new)
    log.info("configuration reloaded from %s", ", ".join(new.sources) or "code")
    if pending:
        log.warning("reload: %s changed; that takes effect after a restart", ", ".join(pending))
    return True


def signal_reload(pid_file: str | os.PathLike) -> int:
    """SIGHUP the server whose pid is in `pid_file`; returns that pid."""
    try:
        pid = int(Path(pid_file).read_text().strip())
    except (OSError, ValueError) as e:
        raise SystemExit(f"hmsproxy: can't read a server pid from {pid_file}: {e}") from e
    try:
        os.kill(pid, signal.SIGHUP)
    except ProcessLookupError:
        raise SystemExit(f"hmsproxy: no process {pid} (from {pid_file}); is the server running?") from None
    return pid

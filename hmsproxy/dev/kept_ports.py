"""The ports ``hmsproxy dev up`` keeps across restarts of one state directory.

A remote made against the dev stack names a metastore by its URI, and Spark sessions and
scripts name the proxy by its port: a restart on the same state directory must not move
them. ``<state>/ports.json`` records each one the first time it is chosen; later starts use
the recorded port, and if something else holds it they say so and stop rather than move.
All ports are checked before any metastore JVM starts.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from hmsproxy.dev.ports import free_port, port_is_free

PORTS_FILE = "ports.json"
DEFAULT_PROXY_PORT = 9083


class PortTaken(Exception):
    """A port dev up needs is in use by another process."""


@dataclass
class KeptPorts:
    path: Path
    ports: dict[str, int]

    @classmethod
    def load(cls, state_dir: Path) -> KeptPorts:
        path = Path(state_dir) / PORTS_FILE
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            data = {}
        except (OSError, ValueError) as e:
            raise ValueError(f"can't read the kept ports in {path}: {e}; fix or delete the file") from None
        return cls(path, {k: v for k, v in data.items() if isinstance(v, int) and not isinstance(v, bool)})

    def save(self, ports: dict[str, int]) -> None:
        """Record `ports` (with those already kept); written whole, so a crash leaves the old file."""
        self.ports = {**self.ports, **ports}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{PORTS_FILE}.{os.getpid()}")
        tmp.write_text(json.dumps(self.ports, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, self.path)

    def proxy_port(self, asked: int | None, host: str) -> int:
        """--port N is N; no --port (or 0) is the kept port, else 9083 (0: any free port)."""
        if asked:
            return asked
        kept = self.ports.get("proxy")
        if kept:
            return kept
        return free_port(host) if asked == 0 else DEFAULT_PROXY_PORT

    def http_port(self, asked: int | None, host: str) -> int | None:
        """No --http-port: no endpoint; --http-port N: N; --http-port 0: the kept port, else a free one."""
        if asked is None or asked:
            return asked
        return self.ports.get("http") or free_port(host)

    def metastore_ports(self, names: list[str], proxy_port: int | None = None, host: str = "") -> list[int | None]:
        """Each metastore's kept port; where it has none yet, None (a free one is picked at start) — but
        beside the default proxy port the ones after it (9084, 9085, …) where free, so that a first
        `make up` gives the URIs the README's tour writes."""
        ports = [self.ports.get(name) for name in names]
        if proxy_port == DEFAULT_PROXY_PORT:
            ports = [
                p if p is not None or not port_is_free(DEFAULT_PROXY_PORT + 1 + i, host) else DEFAULT_PROXY_PORT + 1 + i
                for i, p in enumerate(ports)
            ]
        return ports

    def check_free(self, name: str, what: str, port: int, host: str = "") -> None:
        """PortTaken, with the way out, if `port` can't be listened on."""
        if port_is_free(port, host):
            return
        if self.ports.get(name) == port:
            raise PortTaken(
                f"port {port} of {what} is in use by another process. dev up keeps its ports in {self.path} "
                "so that remotes and clients made against this dev stack keep working after a restart; "
                f"stop what uses the port (another `hmsproxy dev up --state-dir {self.path.parent}`?), or delete "
                f'"{name}" from that file to let dev up pick a new port (links to the old one then need re-creating)'
            )
        raise PortTaken(f"port {port} of {what} is in use by another process: stop it, or choose another port")

"""SSH tunnels to remote metastores behind bastion hosts (paramiko).

A remote's properties may ask for a tunnel, as in Waggle Dance and the Hive
remotes proposal::

    'ssh.tunnel.route'        = 'bastionuser@bastion -> user@cluster-node'
    'ssh.tunnel.private.keys' = '/keys/bastion.pem,/keys/node.pem'   (one per hop; the last is reused)
    'ssh.tunnel.known.hosts'  = '/home/me/.ssh/known_hosts'

The proxy connects to the first hop, reaches each next hop through a
`direct-tcpip` channel of the previous one, and listens on a local port on
127.0.0.1; every connection to that port becomes a channel from the last hop to
the metastore's host:port (resolved by the last hop, so `localhost` means the
node itself). One tunnel per target is shared by all sessions; a tunnel whose
SSH connection died is rebuilt on next use; `close()` ends them all.
"""

from __future__ import annotations

import logging
import select
import socket
import threading
from dataclasses import dataclass

from hmsproxy.ops.sockets import shut_down

log = logging.getLogger(__name__)

ROUTE_PROPERTY = "ssh.tunnel.route"
KEYS_PROPERTY = "ssh.tunnel.private.keys"
KNOWN_HOSTS_PROPERTY = "ssh.tunnel.known.hosts"
#: "no" accepts unknown host keys (Waggle Dance's strict-host-key-checking); default "yes".
STRICT_PROPERTY = "ssh.tunnel.strict.host.key.checking"
PORT_PROPERTY = "ssh.tunnel.port"

TUNNEL_PROPERTIES = (ROUTE_PROPERTY, KEYS_PROPERTY, KNOWN_HOSTS_PROPERTY, STRICT_PROPERTY, PORT_PROPERTY)


class TunnelError(Exception):
    """The tunnel could not be set up; the message names the hop and why."""


@dataclass(frozen=True)
class Hop:
    user: str | None
    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.user + '@' if self.user else ''}{self.host}:{self.port}"


@dataclass(frozen=True)
class TunnelSpec:
    hops: tuple[Hop, ...]
    keys: tuple[str, ...]
    known_hosts: str | None
    strict: bool

    def key_for(self, index: int) -> str | None:
        if not self.keys:
            return None
        return self.keys[min(index, len(self.keys) - 1)]

    @property
    def route(self) -> str:
        return " -> ".join(str(h) for h in self.hops)


def parse_route(route: str, default_port: int = 22) -> tuple[Hop, ...]:
    """'user@bastion -> user@node:2222' -> (Hop, Hop); raises ValueError naming the bad hop."""
    hops = []
    for raw in route.split("->"):
        text = raw.strip()
        if not text:
            raise ValueError(f"property '{ROUTE_PROPERTY}': empty hop in {route!r}")
        user, _, hostport = text.rpartition("@")
        host, port = hostport, default_port
        if ":" in hostport and not hostport.startswith("["):
            host, _, port_text = hostport.rpartition(":")
            if not port_text.isdigit():
                raise ValueError(f"property '{ROUTE_PROPERTY}': bad port in hop {text!r}")
            port = int(port_text)
        if not host:
            raise ValueError(f"property '{ROUTE_PROPERTY}': no host in hop {text!r}")
        hops.append(Hop(user or None, host, port))
    return tuple(hops)


def tunnel_spec(properties: dict[str, str]) -> TunnelSpec | None:
    """The tunnel a remote's properties ask for, or None."""
    route = (properties.get(ROUTE_PROPERTY) or "").strip()
    if not route:
        return None
    port = properties.get(PORT_PROPERTY, "22").strip() or "22"
    if not port.isdigit():
        raise ValueError(f"property '{PORT_PROPERTY}': {port!r} is not a port number")
    keys = tuple(k.strip() for k in (properties.get(KEYS_PROPERTY) or "").split(",") if k.strip())
    known = (properties.get(KNOWN_HOSTS_PROPERTY) or "").strip() or None
    strict = (properties.get(STRICT_PROPERTY) or "yes").strip().lower() not in ("no", "false")
    return TunnelSpec(parse_route(route, int(port)), keys, known, strict)


class Tunnel:
    """One hop chain and a local listening port forwarding to (host, port) behind it."""

    def __init__(self, spec: TunnelSpec, host: str, port: int, connect_timeout_s: float):
        self.spec, self.host, self.port = spec, host, port
        self.timeout = connect_timeout_s
        self._clients: list = []
        self._listener: socket.socket | None = None
        self._closed = threading.Event()
        self.local_port: int | None = None

    def open(self) -> None:
        import paramiko

        sock = None
        try:
            for i, hop in enumerate(self.spec.hops):
                client = paramiko.SSHClient()
                if self.spec.known_hosts:
                    client.load_host_keys(self.spec.known_hosts)
                else:
                    client.load_system_host_keys()
                client.set_missing_host_key_policy(paramiko.RejectPolicy() if self.spec.strict else paramiko.WarningPolicy())
                key = self.spec.key_for(i)
                try:
                    client.connect(
                        hop.host,
                        hop.port,
                        username=hop.user,
                        key_filename=key,
                        sock=sock,
                        timeout=self.timeout,
                        banner_timeout=self.timeout,
                        auth_timeout=self.timeout,
                        allow_agent=False,
                        look_for_keys=key is None,
                    )
                except (paramiko.SSHException, OSError, EOFError) as e:
                    client.close()
                    raise TunnelError(f"ssh hop {i + 1} ({hop}) of '{self.spec.route}': {_reason(e)}") from None
                self._clients.append(client)
                if i + 1 < len(self.spec.hops):
                    nxt = self.spec.hops[i + 1]
                    try:
                        sock = client.get_transport().open_channel(
                            "direct-tcpip", (nxt.host, nxt.port), ("127.0.0.1", 0), timeout=self.timeout
                        )
                    except (paramiko.SSHException, OSError) as e:
                        raise TunnelError(f"ssh hop {i + 1} ({hop}) can't reach {nxt}: {_reason(e)}") from None
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind(("127.0.0.1", 0))
            listener.listen(64)
            self._listener = listener
            self.local_port = listener.getsockname()[1]
        except Exception:
            self.close()
            raise
        threading.Thread(target=self._accept_loop, name=f"tunnel-{self.local_port}", daemon=True).start()
        log.info("ssh tunnel 127.0.0.1:%s -> %s -> %s:%s is up", self.local_port, self.spec.route, self.host, self.port)

    @property
    def active(self) -> bool:
        if self._closed.is_set() or self._listener is None or not self._clients:
            return False
        return all(c.get_transport() is not None and c.get_transport().is_active() for c in self._clients)

    def _accept_loop(self) -> None:
        listener = self._listener
        while not self._closed.is_set():
            try:
                conn, peer = listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn, peer), daemon=True).start()

    def _serve(self, conn: socket.socket, peer) -> None:
        try:
            transport = self._clients[-1].get_transport()
            chan = transport.open_channel("direct-tcpip", (self.host, self.port), peer, timeout=self.timeout)
        except Exception as e:
            log.warning("ssh tunnel %s: can't open a channel to %s:%s: %s", self.spec.route, self.host, self.port, _reason(e))
            conn.close()
            return
        try:
            _pump(conn, chan, self._closed)
        except (EOFError, OSError) as e:  # the SSH connection or the client went mid-copy: only this connection ends
            log.debug("ssh tunnel %s: a connection ended: %s", self.spec.route, _reason(e))
        finally:
            try:
                chan.close()
            except (EOFError, OSError):  # the SSH connection went first (the tunnel closed): nothing to tell it
                pass
            conn.close()

    def close(self) -> None:
        self._closed.set()
        if self._listener is not None:
            shut_down(self._listener)  # wakes the thread blocked in accept()
            try:
                self._listener.close()
            except OSError:
                pass
        for client in reversed(self._clients):
            try:
                client.close()
            except Exception:
                pass
        self._clients = []


def _pump(conn: socket.socket, chan, closed: threading.Event) -> None:
    """Copy bytes both ways until either side closes."""
    while not closed.is_set():
        readable, _, _ = select.select([conn, chan], [], [], 1.0)
        if conn in readable:
            data = conn.recv(65536)
            if not data:
                return
            chan.sendall(data)
        if chan in readable:
            data = chan.recv(65536)
            if not data:
                return
            conn.sendall(data)


def _reason(e: BaseException) -> str:
    return str(e) or type(e).__name__


class TunnelManager:
    """The tunnels of one handler, shared per (route, keys, known hosts, target)."""

    def __init__(self):
        self._tunnels: dict[tuple, Tunnel] = {}
        self._lock = threading.Lock()
        #: One lock per target, so a slow or dead bastion only delays its own tunnel.
        self._opening: dict[tuple, threading.Lock] = {}

    def local_address(self, spec: TunnelSpec, host: str, port: int, connect_timeout_s: float) -> tuple[str, int]:
        """('127.0.0.1', port) forwarding to host:port through `spec`'s hops; opened on first use."""
        key = (spec, host.lower(), port)
        with self._lock:
            tunnel = self._tunnels.get(key)
            if tunnel is not None and tunnel.active:
                return "127.0.0.1", tunnel.local_port
            opening = self._opening.setdefault(key, threading.Lock())
        with opening:
            tunnel = self._tunnels.get(key)
            if tunnel is not None and tunnel.active:
                return "127.0.0.1", tunnel.local_port
            if tunnel is not None:
                log.warning("ssh tunnel %s to %s:%s is down; reconnecting", spec.route, host, port)
                tunnel.close()
                with self._lock:
                    self._tunnels.pop(key, None)
            tunnel = Tunnel(spec, host, port, connect_timeout_s)
            tunnel.open()
            with self._lock:
                self._tunnels[key] = tunnel
            return "127.0.0.1", tunnel.local_port

    def close(self) -> None:
        with self._lock:
            tunnels, self._tunnels = list(self._tunnels.values()), {}
        for t in tunnels:
            t.close()

"""A real OpenSSH server on loopback for tunnel tests: a child `sshd -D` with a temp config.

Host key, client key, authorized_keys and known_hosts are generated in a temp
dir; the server listens on 127.0.0.1:<free port> and allows TCP forwarding, so
remotes can reach a metastore through it (one hop, or several hops through the
same server). Without an sshd binary, `require_sshd()` skips the test, or fails
it when CI=true (`make test` installs openssh-server there).
"""

from __future__ import annotations

import getpass
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from hmsproxy.dev.ports import free_port
from tests.support.children import terminate
from tests.support.required import unavailable

SSHD = shutil.which("sshd") or "/usr/sbin/sshd"


def sshd_available() -> bool:
    return Path(SSHD).exists() and shutil.which("ssh-keygen") is not None


def require_sshd() -> None:
    """Skip (or, with CI=true, fail) the calling test when there is no OpenSSH server here."""
    if not sshd_available():
        unavailable(f"no OpenSSH server ({SSHD} and ssh-keygen); `make test` installs it")


@dataclass
class LocalSshd:
    root: Path
    port: int
    user: str
    client_key: Path
    known_hosts: Path
    process: subprocess.Popen

    def route(self, hops: int = 1) -> str:
        return " -> ".join([f"{self.user}@127.0.0.1:{self.port}"] * hops)

    def stop(self) -> None:
        terminate(self.process)


def _keygen(path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)


def start_sshd(root: Path, timeout_s: float = 15.0) -> LocalSshd:
    root.mkdir(parents=True, exist_ok=True)
    host_key, client_key = root / "host_key", root / "client_key"
    _keygen(host_key)
    _keygen(client_key)
    authorized = root / "authorized_keys"
    authorized.write_text(Path(f"{client_key}.pub").read_text())
    authorized.chmod(0o600)
    port = free_port()
    user = getpass.getuser()
    host_pub = Path(f"{host_key}.pub").read_text().split()
    known_hosts = root / "known_hosts"
    known_hosts.write_text(f"[127.0.0.1]:{port} {host_pub[0]} {host_pub[1]}\n")
    config = root / "sshd_config"
    config.write_text(
        "\n".join(
            [
                f"Port {port}",
                "ListenAddress 127.0.0.1",
                f"HostKey {host_key}",
                f"AuthorizedKeysFile {authorized}",
                "PidFile none",
                "UsePAM no",
                "StrictModes no",
                "PasswordAuthentication no",
                "KbdInteractiveAuthentication no",
                "PubkeyAuthentication yes",
                "PermitRootLogin prohibit-password",
                "AllowTcpForwarding yes",
                "LogLevel ERROR",
                "",
            ]
        )
    )
    try:
        Path("/run/sshd").mkdir(parents=True, exist_ok=True)  # privilege separation dir, needed as root
    except OSError:
        pass  # not root: sshd runs without privilege separation
    log = open(root / "sshd.log", "wb")
    process = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    log.close()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"sshd exited with {process.returncode}: {(root / 'sshd.log').read_text()[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                break
        except OSError:
            time.sleep(0.1)
    else:
        process.kill()
        raise RuntimeError(f"sshd did not listen on 127.0.0.1:{port} within {timeout_s} s")
    return LocalSshd(root, port, user, client_key, known_hosts, process)

"""The SSH tunnel really carries a remote's traffic: the direct path is blocked.

The remote's `hive.metastore.uris` names `hms-behind-bastion.invalid`, a host
only the sshd can resolve: the sshd runs in its own mount namespace where a
bind-mounted /etc/hosts maps the name to 127.0.0.1, and in its own PID
namespace, so stopping it also ends its per-connection children (OpenSSH keeps
those running when only the listener stops). The proxy's process cannot
resolve the name, so the only way to the metastore is through the sshd.
Needs root (or CAP_SYS_ADMIN) for the namespaces: without it the test skips,
or fails with CI=true (tests/support/required.py).
"""

from __future__ import annotations

import getpass
import socket
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest
import thriftpy2.rpc

from hmsproxy.dev.ports import free_port
from hmsproxy.protocol import idl
from tests.integration.test_remotes import SOURCE_DB, add_source, link_db
from tests.support.federation import stored_in
from tests.support.required import unavailable
from tests.support.served import served
from tests.support.sshd import SSHD, require_sshd

hive = idl.hive

#: Only the sshd's /etc/hosts knows it; `.invalid` never resolves anywhere else (RFC 6761).
HIDDEN_HOST = "hms-behind-bastion.invalid"

# Runs its arguments in new mount and PID namespaces with $1 bind-mounted over /etc/hosts.
# --kill-child: when unshare dies, the namespace's first process (and so all of it) dies too.
NAMESPACE_PREFIX = ["unshare", "--mount", "--pid", "--kill-child", "--propagation", "private", "sh", "-c"]
BEHIND_SCRIPT = 'mount --bind "$1" /etc/hosts && shift && exec "$@"'


def behind(hosts_file: Path, *command: str) -> list[str]:
    return [*NAMESPACE_PREFIX, BEHIND_SCRIPT, "behind-bastion", str(hosts_file), *command]


def write_hosts(path: Path) -> Path:
    path.write_text(Path("/etc/hosts").read_text() + f"\n127.0.0.1 {HIDDEN_HOST}\n")
    return path


def require_namespaces(hosts_file: Path) -> None:
    """Skip (or fail in CI) unless this machine lets us make the namespaces."""
    try:
        probe = subprocess.run(behind(hosts_file, "getent", "hosts", HIDDEN_HOST), capture_output=True, text=True, timeout=30)
    except FileNotFoundError:
        unavailable("no `unshare` (util-linux) to run the sshd in its own namespaces")
    if probe.returncode != 0 or "127.0.0.1" not in probe.stdout:
        unavailable(f"can't run sshd with its own /etc/hosts (unshare --mount --pid needs root/CAP_SYS_ADMIN): {probe.stderr.strip()}")


@dataclass
class BastionSshd:
    root: Path
    port: int
    client_key: Path
    known_hosts: Path
    process: subprocess.Popen

    @property
    def route(self) -> str:
        return f"{getpass.getuser()}@127.0.0.1:{self.port}"

    def tunnel_properties(self) -> dict[str, str]:
        return {
            "ssh.tunnel.route": self.route,
            "ssh.tunnel.private.keys": str(self.client_key),
            "ssh.tunnel.known.hosts": str(self.known_hosts),
        }

    def stop(self, timeout_s: float = 30.0) -> None:
        """Kill unshare; its --kill-child kills the namespace's first process, and the kernel
        lets that one finish dying only after every other process of the namespace is gone."""
        first = _children(self.process.pid)
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout_s)
        deadline = time.monotonic() + timeout_s
        while any(_alive(pid) for pid in first):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the bastion's processes {first} outlived it")
            time.sleep(0.05)


def _children(pid: int) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def _alive(pid: int) -> bool:
    """Running, not a zombie (a zombie of the namespace's first process means the namespace is empty)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _keygen(path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)


def _accepts(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def start_bastion(root: Path, hosts_file: Path, timeout_s: float = 15.0) -> BastionSshd:
    host_key, client_key = root / "host_key", root / "client_key"
    _keygen(host_key)
    _keygen(client_key)
    authorized = root / "authorized_keys"
    authorized.write_text(Path(f"{client_key}.pub").read_text())
    port = free_port()
    key_type, key = Path(f"{host_key}.pub").read_text().split()[:2]
    known_hosts = root / "known_hosts"
    known_hosts.write_text(f"[127.0.0.1]:{port} {key_type} {key}\n")
    config = root / "sshd_config"
    config.write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {host_key}\nAuthorizedKeysFile {authorized}\n"
        "PidFile none\nUsePAM no\nStrictModes no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
        "PubkeyAuthentication yes\nPermitRootLogin prohibit-password\nAllowTcpForwarding yes\nLogLevel ERROR\n"
    )
    Path("/run/sshd").mkdir(parents=True, exist_ok=True)  # privilege separation dir (we are root here)
    with open(root / "sshd.log", "wb") as log:
        process = subprocess.Popen(
            behind(hosts_file, SSHD, "-D", "-e", "-f", str(config)), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
    deadline = time.monotonic() + timeout_s
    while not _accepts(port):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            process.wait(30)
            raise RuntimeError(f"sshd did not listen on 127.0.0.1:{port}: {(root / 'sshd.log').read_text()[-2000:]}")
        time.sleep(0.1)
    return BastionSshd(root, port, client_key, known_hosts, process)


@pytest.fixture
def bastion(tmp_path):
    require_sshd()
    hosts = write_hosts(tmp_path / "hosts")
    require_namespaces(hosts)
    server = start_bastion(tmp_path, hosts)
    yield server
    server.stop()


@pytest.fixture
def own_proxy(default_config, tmp_path):
    """A proxy of its own, so its tunnels are not shared with other tests."""
    with served(stored_in(default_config, tmp_path)) as server:
        client = thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", server.port, timeout=60000)
        yield client
        client.close()


@pytest.fixture
def hidden_source(metastores, tmp_path_factory):
    """The session's federated metastore under a name only the bastion resolves."""
    add_source(metastores[1], tmp_path_factory.mktemp("rsrc"))
    return f"thrift://{HIDDEN_HOST}:{metastores[1].port}"


def test_the_tunnel_carries_the_traffic_when_the_direct_path_is_blocked(bastion, own_proxy, hidden_source, metastores):
    # The proxy's process can't resolve the name: no direct path.
    with pytest.raises(socket.gaierror):
        socket.getaddrinfo(HIDDEN_HOST, metastores[1].port)
    direct, tunnelled = f"direct_{uuid.uuid4().hex[:8]}", f"tunnelled_{uuid.uuid4().hex[:8]}"
    with pytest.raises(hive.MetaException, match=f"can't create remote database {direct}: metastore .* is unavailable"):
        own_proxy.create_database(link_db(direct, hidden_source))  # links are checked when made
    own_proxy.create_database(link_db(direct, hidden_source, **{"hmsproxy.remote.check": "false"}))
    own_proxy.create_database(link_db(tunnelled, hidden_source, **bastion.tunnel_properties()))
    try:
        with pytest.raises(hive.MetaException, match=f"remote database {direct}: metastore .* is unavailable"):
            own_proxy.get_all_tables(direct)

        # Through the bastion, which resolves the name, the remote answers.
        assert set(own_proxy.get_all_tables(tunnelled)) == {"items", "plain"}
        table = own_proxy.get_table(tunnelled, "items")
        assert (table.dbName, table.tableName) == (tunnelled, "items")
        assert table.parameters["hmsproxy.remote.uris"] == hidden_source

        # Without the bastion the remote fails with the declared exception ...
        bastion.stop()
        assert not _accepts(bastion.port)  # nothing of the bastion is left
        with pytest.raises(hive.MetaException) as err:
            own_proxy.get_all_tables(tunnelled)
        # The wording around these depends on whether the old connection or a new tunnel was tried.
        message = err.value.message
        assert message.startswith(f"hmsproxy: remote database {tunnelled}: metastore "), message
        assert hidden_source in message and f"via ssh {bastion.route}" in message and "is unavailable" in message
        # ... although the metastore itself is still up.
        client = metastores[1].client()
        try:
            assert "items" in client.get_all_tables(SOURCE_DB)
        finally:
            client.close()
    finally:
        for name in (direct, tunnelled):
            own_proxy.drop_database(name, False, False)

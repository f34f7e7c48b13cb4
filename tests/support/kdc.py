"""A real MIT Kerberos KDC on loopback for tests: a realm in a temp dir, principals, keytabs.

Debian's `krb5-kdc` (`make kerberos` installs it, with `krb5-user` and `libkrb5-dev`, which the
`gssapi` binding builds against). `start_kdc(root)` writes the realm's own `kdc.conf` and
`krb5.conf` (KDC on 127.0.0.1 and a free port, TCP only: `udp_preference_limit = 1`; no DNS:
`rdns = false`, `dns_canonicalize_hostname = false`, so `hive/localhost` stays `localhost`),
creates the database (`kdb5_util create -s`) and runs `krb5kdc -n` in the foreground until
`stop()`. `add_principal` makes a principal with a random key and exports it to a keytab
(`kadmin.local ktadd`). Nothing touches /etc/krb5.conf: programs find the realm through
`KRB5_CONFIG` (`env()`), the JVM through `-Djava.security.krb5.conf`.

Without the binaries `require_kdc()` skips the test, or fails it with CI=true; a KDC that is
there but cannot start raises (a broken setup is never a skip).

Fixtures (pytest plugin: `pytest_plugins = ["tests.support.kdc"]`):

* ``kdc`` -- module: a running realm, stopped after the module.
* ``kerberos_env`` -- a test's KRB5_CONFIG and its own empty ticket cache (KRB5CCNAME).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from hmsproxy.dev.ports import free_port
from tests.support.children import terminate
from tests.support.required import unavailable

REALM = "HMSPROXY.TEST"
BINARIES = ("krb5kdc", "kdb5_util", "kadmin.local", "kinit", "klist")
SBIN = ("/usr/sbin", "/usr/bin")
START_TIMEOUT_S = 30.0
#: AES only: what Java 17 and MIT agree on without weak-crypto switches.
ENCTYPES = "aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal"


def _binary(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for folder in SBIN:
        candidate = Path(folder) / name
        if candidate.exists():
            return str(candidate)
    return None


def require_kdc() -> None:
    """Skip (or, with CI=true, fail) the calling test without the MIT KDC and the gssapi binding."""
    missing = [name for name in BINARIES if _binary(name) is None]
    if missing:
        unavailable(f"no MIT Kerberos ({', '.join(missing)} missing); `make kerberos` installs krb5-kdc, krb5-user, libkrb5-dev")
    try:
        import gssapi  # noqa: F401
    except ImportError as exc:
        unavailable(f"no Python gssapi binding ({exc}); `make .venv/bin/.installed` installs it after `make kerberos`")


@dataclass
class Kdc:
    root: Path
    realm: str
    port: int
    process: subprocess.Popen
    principals: dict[str, Path] = field(default_factory=dict)

    @property
    def krb5_conf(self) -> Path:
        return self.root / "krb5.conf"

    @property
    def kdc_conf(self) -> Path:
        return self.root / "kdc.conf"

    def env(self, ccache: Path | str | None = None) -> dict[str, str]:
        """Environment for a Kerberos program of this realm (a private ticket cache if given)."""
        env = {"KRB5_CONFIG": str(self.krb5_conf), "KRB5_KDC_PROFILE": str(self.kdc_conf)}
        if ccache is not None:
            env["KRB5CCNAME"] = f"FILE:{ccache}" if not str(ccache).startswith(("FILE:", "MEMORY:", "DIR:")) else str(ccache)
        return env

    def principal(self, name: str) -> str:
        return name if "@" in name else f"{name}@{self.realm}"

    def add_principal(self, name: str, keytab: Path | None = None, *, options: str = "") -> Path:
        """A principal with a random key, exported to `keytab` (default: <root>/<name>.keytab); returns the
        keytab. `options`: more of addprinc's, e.g. '-maxlife "10 seconds"'."""
        keytab = keytab or self.root / f"{name.replace('/', '_')}.keytab"
        self._kadmin(f"addprinc -randkey {options} {self.principal(name)}")
        self._kadmin(f"ktadd -k {keytab} {self.principal(name)}")
        self.principals[name] = keytab
        return keytab

    def _kadmin(self, query: str) -> None:
        _run([_binary("kadmin.local"), "-r", self.realm, "-q", query], self.env(), f"kadmin.local -q {query!r}")

    def kinit(self, name: str, ccache: Path) -> None:
        """`kinit -kt` the principal's keytab into `ccache`."""
        _run([_binary("kinit"), "-kt", str(self.principals[name]), self.principal(name)], self.env(ccache), f"kinit {name}")

    def log_tail(self) -> str:
        try:
            return (self.root / "kdc.log").read_text(errors="replace")[-2000:]
        except OSError:
            return ""

    def stop(self) -> None:
        terminate(self.process)


def _run(cmd: list, env: dict[str, str], what: str) -> str:
    done = subprocess.run(cmd, env={**os.environ, **env}, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise RuntimeError(f"{what} failed ({done.returncode}): {done.stderr.strip() or done.stdout.strip()}")
    return done.stdout


def _krb5_conf(realm: str, port: int) -> str:
    return f"""[libdefaults]
  default_realm = {realm}
  dns_lookup_realm = false
  dns_lookup_kdc = false
  rdns = false
  dns_canonicalize_hostname = false
  udp_preference_limit = 1
  ticket_lifetime = 24h
  renew_lifetime = 7d
  forwardable = true
  default_tkt_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96
  default_tgs_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96
  permitted_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96

[realms]
  {realm} = {{
    kdc = 127.0.0.1:{port}
  }}

[domain_realm]
  localhost = {realm}
  127.0.0.1 = {realm}
"""


def _kdc_conf(realm: str, port: int, root: Path) -> str:
    return f"""[kdcdefaults]
  kdc_listen = 127.0.0.1:{port}
  kdc_tcp_listen = 127.0.0.1:{port}

[realms]
  {realm} = {{
    database_name = {root}/principal
    key_stash_file = {root}/stash
    acl_file = {root}/kadm5.acl
    max_life = 24h
    max_renewable_life = 7d
    supported_enctypes = {ENCTYPES}
    kdc_listen = 127.0.0.1:{port}
    kdc_tcp_listen = 127.0.0.1:{port}
  }}

[logging]
  kdc = FILE:{root}/kdc.log
"""


def start_kdc(root: Path, realm: str = REALM, timeout_s: float = START_TIMEOUT_S) -> Kdc:
    """A new realm in `root` and its KDC listening on 127.0.0.1 (TCP and UDP, one free port)."""
    root.mkdir(parents=True, exist_ok=True)
    port = free_port()
    (root / "krb5.conf").write_text(_krb5_conf(realm, port))
    (root / "kdc.conf").write_text(_kdc_conf(realm, port, root))
    (root / "kadm5.acl").write_text("")
    env = {"KRB5_CONFIG": str(root / "krb5.conf"), "KRB5_KDC_PROFILE": str(root / "kdc.conf")}
    _run([_binary("kdb5_util"), "create", "-s", "-r", realm, "-P", "hmsproxy-test-master"], env, "kdb5_util create")
    log = open(root / "krb5kdc.out", "wb")
    process = subprocess.Popen(
        [_binary("krb5kdc"), "-n", "-r", realm],
        env={**os.environ, **env},
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    log.close()
    kdc = Kdc(root, realm, port, process)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            output = (root / "krb5kdc.out").read_text(errors="replace")[-2000:]
            raise RuntimeError(f"krb5kdc exited with {process.returncode}: {output} {kdc.log_tail()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return kdc
        except OSError:
            time.sleep(0.1)
    kdc.stop()
    raise RuntimeError(f"krb5kdc did not listen on 127.0.0.1:{port} within {timeout_s} s: {kdc.log_tail()}")


@pytest.fixture(scope="module")
def kdc(tmp_path_factory):
    """A running realm for the module (KRB5_CONFIG set for the module's process too), stopped after it."""
    require_kdc()
    kdc = start_kdc(tmp_path_factory.mktemp("kdc"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KRB5_CONFIG", str(kdc.krb5_conf))
        try:
            yield kdc
        finally:
            kdc.stop()


@pytest.fixture
def kerberos_env(kdc, tmp_path, monkeypatch):
    """This test's KRB5_CONFIG and an empty ticket cache of its own (KRB5CCNAME); returns the cache's path."""
    ccache = tmp_path / "krb5cc"
    for key, value in kdc.env(ccache).items():
        monkeypatch.setenv(key, value)
    return ccache

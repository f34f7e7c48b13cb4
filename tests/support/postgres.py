"""A throwaway PostgreSQL cluster for the test session, and a fresh database per test.

No PostgreSQL service runs on developer machines or in CI, so the session makes its
own: `initdb` into a temp dir (trust auth), `postgres` on a free loopback port with
its unix socket in that dir, stopped and deleted at session end. The binaries come
from Debian's `postgresql` package (`make postgresql` installs it). initdb and the
server refuse to run as root, so as root they run as the `postgres` OS user the
package creates, in a temp dir that user owns.

Fixtures (registered in tests/support/fixtures.py):

* ``postgres_server`` -- session: the running cluster (or why there is none).
* ``pg_url`` -- a SQLAlchemy URL to a database created for this test and dropped
  after it. Without a cluster the test is skipped, or fails when ``CI=true``.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from hmsproxy.dev.ports import free_port
from tests.support.required import unavailable

SUPERUSER = "postgres"
OS_USER_WHEN_ROOT = "postgres"
START_TIMEOUT_S = 60.0


class PostgresUnavailable(RuntimeError):
    """The cluster could not be made; the message says why."""


@dataclass
class PostgresServer:
    root: Path
    port: int
    process: subprocess.Popen

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg2://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def log_tail(self) -> str:
        try:
            return (self.root / "postgres.log").read_text(errors="replace")[-2000:]
        except OSError:
            return ""

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)  # "fast" shutdown: ends sessions, no wait for clients
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        shutil.rmtree(self.root, ignore_errors=True)


def find_bindir() -> Path | None:
    """The newest Debian PostgreSQL bin dir with initdb and postgres, else one on PATH."""
    candidates = sorted(
        glob.glob("/usr/lib/postgresql/*/bin"),
        key=lambda p: int(Path(p).parent.name) if Path(p).parent.name.isdigit() else 0,
        reverse=True,
    )
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(str(Path(on_path).parent))
    for bindir in candidates:
        if os.access(Path(bindir) / "initdb", os.X_OK) and os.access(Path(bindir) / "postgres", os.X_OK):
            return Path(bindir)
    return None


def _run_as() -> dict:
    """Popen keyword arguments that drop root to the postgres OS user (nothing when not root)."""
    if os.geteuid() != 0:
        return {}
    try:
        entry = pwd.getpwnam(OS_USER_WHEN_ROOT)
    except KeyError:
        raise PostgresUnavailable(
            f"running as root and there is no '{OS_USER_WHEN_ROOT}' OS user to run PostgreSQL as "
            "(Debian's postgresql package creates it; `make postgresql` installs it)"
        ) from None
    return {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}


def _wait_until_accepting(process: subprocess.Popen, port: int, log: Path) -> None:
    import psycopg2

    deadline = time.monotonic() + START_TIMEOUT_S
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise PostgresUnavailable(f"postgres exited with {process.returncode}: {log.read_text(errors='replace')[-2000:]}")
        try:
            psycopg2.connect(host="127.0.0.1", port=port, user=SUPERUSER, dbname="postgres", connect_timeout=2).close()
            return
        except psycopg2.OperationalError as e:
            last_error = e
            time.sleep(0.1)
    process.kill()
    process.wait(10)
    raise PostgresUnavailable(f"postgres did not accept connections on 127.0.0.1:{port} within {START_TIMEOUT_S} s: {last_error}")


def start_postgres(attempts: int = 3) -> PostgresServer:
    """initdb + postgres on a free loopback port; raises PostgresUnavailable with the reason."""
    bindir = find_bindir()
    if bindir is None:
        raise PostgresUnavailable(
            "no PostgreSQL binaries (initdb, postgres) in /usr/lib/postgresql/*/bin or on PATH; `make postgresql` installs them"
        )
    as_user = _run_as()
    # Not pytest's tmp dir: that one is 0700 root-owned, so the postgres user could not enter it.
    root = Path(tempfile.mkdtemp(prefix="hmsproxy-pg-"))
    if as_user:
        os.chown(root, as_user["user"], as_user["group"])
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C", "LANG": "C"}
    try:
        init = subprocess.run(
            [str(bindir / "initdb"), "-D", str(root / "data"), "-U", SUPERUSER, "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync"],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            **as_user,
        )
        if init.returncode != 0:
            raise PostgresUnavailable(f"initdb failed ({init.returncode}): {(init.stderr or init.stdout)[-2000:]}")
        for _ in range(attempts):
            # Another process may take the free port before postgres binds it: then retry on a new one.
            port = free_port()
            log_path = root / "postgres.log"
            with open(log_path, "ab") as log:
                process = subprocess.Popen(
                    [str(bindir / "postgres"), "-D", str(root / "data"), "-h", "127.0.0.1", "-p", str(port), "-k", str(root)]
                    + ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"],
                    cwd=root,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    **as_user,
                )
            try:
                _wait_until_accepting(process, port, log_path)
                return PostgresServer(root, port, process)
            except PostgresUnavailable as e:
                error = e
        raise error
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise


@pytest.fixture(scope="session")
def postgres_server():
    """The session's cluster, or the reason it could not start (asked once per session)."""
    try:
        server = start_postgres()
    except (PostgresUnavailable, OSError, subprocess.SubprocessError) as e:
        yield f"no throwaway PostgreSQL cluster: {e}"
        return
    yield server
    server.stop()


@pytest.fixture
def pg_url(postgres_server):
    """A SQLAlchemy URL to a database of its own for this test, dropped afterwards."""
    from sqlalchemy import create_engine, text

    if isinstance(postgres_server, str):
        unavailable(postgres_server)
    name = f"hmsproxy_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(postgres_server.url(), isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as c:
            c.execute(text(f'CREATE DATABASE "{name}" TEMPLATE template0'))
        yield postgres_server.url(name)
        with admin.connect() as c:
            # FORCE: a Store the test forgot to close must not keep the database alive.
            c.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()

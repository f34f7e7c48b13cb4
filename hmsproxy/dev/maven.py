"""Fetching a Hive metastore's jars with Maven, once; later starts run offline.

Each version has a small pom in ``hmsproxy/dev/poms/hive-<version>.xml``. Its
``dependency`` plugin executions are run with ``-Dhmsproxy.home=<home>``:
``copy-dependencies@lib`` puts every jar into ``<home>/lib``, and (Hive 4)
``unpack@scripts`` takes the schema tool's Derby scripts out of the binary release.

``<home>`` is ``$HMSPROXY_HIVE_CACHE/hive-<version>`` (default
``~/.cache/hmsproxy/hive-<version>``). A stamp file holding the pom's digest is
written last, so an interrupted download is redone and a changed pom refetches;
while the stamp matches, :func:`fetch` never runs Maven.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from pathlib import Path

POMS_DIR = Path(__file__).with_name("poms")
CACHE_ENV = "HMSPROXY_HIVE_CACHE"
STAMP_NAME = ".complete"


class FetchError(RuntimeError):
    """Maven is missing or could not download the jars (no network, no such artifact)."""


def cache_root() -> Path:
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "hmsproxy").expanduser()


def pom_path(version: str) -> Path:
    return POMS_DIR / f"hive-{version}.xml"


def hive_home(version: str) -> Path:
    """Where the fetched jars (``lib/``) and scripts of ``version`` live."""
    return cache_root() / f"hive-{version}"


def _pom_digest(version: str) -> str:
    return hashlib.sha256(pom_path(version).read_bytes()).hexdigest()


def is_fetched(version: str) -> bool:
    stamp = hive_home(version) / STAMP_NAME
    try:
        return stamp.read_text().strip() == _pom_digest(version)
    except OSError:
        return False


def dir_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


@contextmanager
def _locked(home: Path):
    # Two processes (a test run and `dev hms`) may fetch the same version at once.
    home.parent.mkdir(parents=True, exist_ok=True)
    with open(home.parent / f".{home.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def fetch(
    version: str,
    goals: Sequence[str],
    *,
    mvn: str | None = None,
    say: Callable[[str], None] | None = None,
    timeout_s: float = 1200,
) -> Path:
    """Make sure ``version``'s jars are in :func:`hive_home`; returns that directory.

    Runs ``mvn -q -B -f <pom> <goals> -Dhmsproxy.home=<home>`` unless the stamp
    says a complete download is there. Raises :class:`FetchError` if Maven is
    missing or fails (the error carries the end of Maven's output).
    """
    home = hive_home(version)
    if is_fetched(version):
        return home
    with _locked(home):
        if is_fetched(version):  # another process finished it while we waited
            return home
        mvn = mvn or shutil.which("mvn")
        if not mvn:
            raise FetchError(f"Hive {version}: jars not in {home} and no 'mvn' on PATH to fetch them")
        if home.exists():
            shutil.rmtree(home)  # a partial or outdated download
        cmd = [mvn, "-q", "-B", "-f", str(pom_path(version)), *goals, f"-Dhmsproxy.home={home}"]
        if say:
            say(f"Hive {version}: fetching jars with Maven into {home} (first use only)")
        t0 = time.monotonic()
        try:
            done = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout_s)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise FetchError(f"Hive {version}: {' '.join(cmd)} failed: {exc}") from exc
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).splitlines()[-30:])
            raise FetchError(f"Hive {version}: {' '.join(cmd)} exited with {done.returncode}:\n{tail}")
        (home / STAMP_NAME).write_text(_pom_digest(version) + "\n")
        if say:
            jars = len(list((home / "lib").glob("*.jar")))
            say(f"Hive {version}: fetched {jars} jars, {dir_size(home) / 2**20:.0f} MiB, in {time.monotonic() - t0:.0f}s")
    return home

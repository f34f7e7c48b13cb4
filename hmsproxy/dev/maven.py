"""Fetching a Hive metastore's jars (and Waggle Dance's, for the benchmark) with Maven, once;
later starts run offline.

Each version has a small pom in ``hmsproxy/dev/poms/hive-<version>.xml``. Its
``dependency`` plugin executions are run with ``-Dhmsproxy.home=<home>``:
``copy-dependencies@lib`` puts every jar into ``<home>/lib``, and (Hive 4)
``unpack@scripts`` takes the schema tool's Derby scripts out of the binary release.

``<home>`` is ``$HMSPROXY_HIVE_CACHE/hive-<version>`` (default
``~/.cache/hmsproxy/hive-<version>``). A stamp file holding the pom's digest is
written last, so an interrupted download is redone and a changed pom refetches;
while the stamp matches, :func:`fetch` never runs Maven.

:func:`fetch_pom` is the same for any pom of that folder, by its name without ``.xml``
(``waggle-dance-3.13.3``: :mod:`hmsproxy.dev.waggle_dance`), cached in ``<cache>/<name>``.
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
    return _pom(f"hive-{version}")


def hive_home(version: str) -> Path:
    """Where the fetched jars (``lib/``) and scripts of ``version`` live."""
    return artifact_home(f"hive-{version}")


def artifact_home(name: str) -> Path:
    """Where the files of pom ``poms/<name>.xml`` are fetched to."""
    return cache_root() / name


def _pom(name: str) -> Path:
    return POMS_DIR / f"{name}.xml"


def _pom_digest(name: str) -> str:
    return hashlib.sha256(_pom(name).read_bytes()).hexdigest()


def is_fetched(version: str) -> bool:
    return _is_fetched(f"hive-{version}")


def _is_fetched(name: str) -> bool:
    stamp = artifact_home(name) / STAMP_NAME
    try:
        return stamp.read_text().strip() == _pom_digest(name)
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
    return fetch_pom(f"hive-{version}", goals, label=f"Hive {version}", mvn=mvn, say=say, timeout_s=timeout_s)


def fetch_pom(
    name: str,
    goals: Sequence[str],
    *,
    label: str,
    mvn: str | None = None,
    say: Callable[[str], None] | None = None,
    timeout_s: float = 1200,
) -> Path:
    """:func:`fetch` for pom ``poms/<name>.xml`` into :func:`artifact_home`; ``label`` names it in messages."""
    home = artifact_home(name)
    if _is_fetched(name):
        return home
    with _locked(home):
        if _is_fetched(name):  # another process finished it while we waited
            return home
        mvn = mvn or shutil.which("mvn")
        if not mvn:
            raise FetchError(f"{label}: jars not in {home} and no 'mvn' on PATH to fetch them")
        if home.exists():
            shutil.rmtree(home)  # a partial or outdated download
        cmd = [mvn, "-q", "-B", "-f", str(_pom(name)), *goals, f"-Dhmsproxy.home={home}"]
        if say:
            say(f"{label}: fetching jars with Maven into {home} (first use only)")
        t0 = time.monotonic()
        try:
            done = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout_s)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise FetchError(f"{label}: {' '.join(cmd)} failed: {exc}") from exc
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).splitlines()[-30:])
            raise FetchError(f"{label}: {' '.join(cmd)} exited with {done.returncode}:\n{tail}")
        (home / STAMP_NAME).write_text(_pom_digest(name) + "\n")
        if say:
            jars = len(list((home / "lib").glob("*.jar")))
            say(f"{label}: fetched {jars} jars, {dir_size(home) / 2**20:.0f} MiB, in {time.monotonic() - t0:.0f}s")
    return home

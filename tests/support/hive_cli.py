"""The real Hive 2.3 CLI as a test client: ``hive_cli(uri, sql_text) -> CompletedProcess``.

Runs ../shared/tools/hive-cli/run_hive.sh (beside the repo, as in CI's clone) with
pyspark's jars. Its first run downloads ~320 MB once into the cache dir, so the
cache is stable across runs: $HIVE_CLI_CACHE, else ~/.cache/hmsproxy-hive-cli.
Each run gets its own run dir (conf, scratch, logs) in pytest's temp dir.

Skipped only where Java is missing; a missing tool is a broken checkout and fails.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TOOL = REPO.parent / "shared" / "tools" / "hive-cli" / "run_hive.sh"
DEFAULT_TIMEOUT_S = 900.0  # the first run downloads ~320 MB; later runs take ~10 s + ~1 s a statement


def cache_dir() -> Path:
    return Path(os.environ.get("HIVE_CLI_CACHE") or Path.home() / ".cache" / "hmsproxy-hive-cli")


def missing_java(cache: Path) -> str | None:
    """Why the tool cannot run here, or None. javac/jar only matter until the cache holds the stub jar."""
    needed = ["java"]
    if not (cache / "lib" / "hive-llap-client-stub.jar").is_file():
        needed += ["javac", "jar"]
    missing = [tool for tool in needed if shutil.which(tool) is None]
    return f"the Hive CLI needs a JDK 17 ({', '.join(missing)} not found)" if missing else None


def pyspark_jars() -> str:
    import pyspark

    return str(Path(pyspark.__file__).parent / "jars")


def _run(
    tool: Path, cache: Path, uri: str, sql_file: Path, run_dir: Path, timeout_s: float, args=(), env=None
) -> subprocess.CompletedProcess:
    env = dict(os.environ, **(env or {}), PYSPARK_JARS=pyspark_jars(), HIVE_CLI_CACHE=str(cache), HIVE_RUN_DIR=str(run_dir))
    # Own process group: on timeout the whole tree (bash, pip download, java) is killed, not just bash.
    process = subprocess.Popen(
        [str(tool), uri, str(sql_file), *args],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        stderr += f"\n[hive_cli fixture] killed after {timeout_s} s"
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def run_file(uri: str, sql_file: Path, run_dir: Path, timeout_s: float = DEFAULT_TIMEOUT_S, args=()) -> subprocess.CompletedProcess:
    """The tool on `sql_file` outside the fixture (a test that must not be skipped for it checks missing_java itself)."""
    return _run(TOOL, cache_dir(), uri, sql_file, run_dir, timeout_s, args)


@pytest.fixture(scope="session")
def hive_cli(tmp_path_factory):
    """``run(uri, sql_text, timeout_s=900, *, args=(), env=None, conf=None) -> CompletedProcess`` (returncode,
    stdout, stderr). `args`: more CliDriver arguments (--hiveconf k=v); `env`: more environment;
    `conf`: {file name: text} put in the run's conf dir, which is on the classpath (core-site.xml)."""
    if not TOOL.is_file():
        pytest.fail(f"the Hive CLI tool is not at {TOOL} (the repo expects ../shared beside it)", pytrace=False)
    cache = cache_dir()
    reason = missing_java(cache)
    if reason:
        pytest.skip(reason)

    def run(uri: str, sql_text: str, timeout_s: float = DEFAULT_TIMEOUT_S, *, args=(), env=None, conf=None) -> subprocess.CompletedProcess:
        work = tmp_path_factory.mktemp("hive-cli")
        sql_file = work / "script.sql"
        sql_file.write_text(sql_text)
        (work / "run" / "conf").mkdir(parents=True)
        for name, text in (conf or {}).items():
            (work / "run" / "conf" / name).write_text(text)
        return _run(TOOL, cache, uri, sql_file, work / "run", timeout_s, args, env)

    return run

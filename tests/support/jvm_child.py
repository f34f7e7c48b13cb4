"""A server JVM a test session starts (s3proxy, the HDFS minicluster): started in its own process
group with its log in a file, waited for with a bounded loop, stopped with `children.terminate_group`."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from hmsproxy.dev import maven
from hmsproxy.dev.jvm import LEAKY_ENV_VARS
from tests.support.children import terminate_group
from tests.support.required import unavailable

Fetched = TypeVar("Fetched")
Server = TypeVar("Server")


def start_or_unavailable(what: str, fetch: Callable[[], Fetched], start: Callable[[Fetched], Server]) -> Server:
    """`start(fetch())`; `unavailable` (skip, or fail in CI) when Maven can't fetch it or it does not start."""
    try:
        fetched = fetch()
    except maven.FetchError as exc:
        unavailable(f"cannot fetch {what} with Maven: {exc}")
    try:
        return start(fetched)
    except (RuntimeError, OSError) as exc:
        unavailable(f"{what} did not start: {exc}")


class JvmChild:
    def __init__(self, name: str, cmd: list[str], log: Path, cwd: Path):
        self.name, self.cmd, self.log, self.cwd = name, cmd, log, cwd
        self.process: subprocess.Popen | None = None

    def start(self, ready: Callable[[], bool], timeout_s: float) -> None:
        """Launch and return once `ready()` holds; RuntimeError with the log's tail if the JVM exits or
        `timeout_s` passes first."""
        import os

        env = {k: v for k, v in os.environ.items() if k not in LEAKY_ENV_VARS}
        with open(self.log, "ab") as out:
            self.process = subprocess.Popen(
                self.cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, cwd=self.cwd, env=env, start_new_session=True
            )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                break
            if ready():
                return
            time.sleep(0.2)
        self.stop()
        tail = "\n".join(self.log.read_text(errors="replace").splitlines()[-20:])
        raise RuntimeError(f"{self.name} did not start within {timeout_s:.0f}s:\n{tail}")

    def stop(self) -> None:
        if self.process is not None:
            terminate_group(self.process)
            self.process = None

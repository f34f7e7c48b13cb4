"""A server JVM the dev stack starts beside its metastores (s3proxy, the HDFS minicluster).

Started in its own process group with its log in a file, waited for with a bounded loop, and
stopped as a group (SIGTERM, then SIGKILL). Like the metastores (`lifetime`), it never outlives
the Python process that started it: an atexit hook and a watchdog stop it if that process ends
without stopping it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from hmsproxy.dev import lifetime
from hmsproxy.dev.jvm import LEAKY_ENV_VARS


class ServerFailed(RuntimeError):
    """A server JVM that did not start: one line naming its log (what `dev up` prints); the log's last
    lines in `tail`, for a test's failure report."""

    def __init__(self, message: str, log: Path, tail: str = ""):
        super().__init__(f"{message}; read its log: {log}")
        self.log, self.tail = log, tail


class ServerJvm:
    def __init__(self, name: str, cmd: list[str], log: Path, cwd: Path, env: dict[str, str] | None = None):
        self.name, self.cmd, self.log, self.cwd = name, cmd, log, cwd
        self.env = dict(env or {})  # on top of this process's (servers configured by environment)
        self.process: subprocess.Popen | None = None
        self._watchdog: subprocess.Popen | None = None

    def start(self, ready: Callable[[], bool], timeout_s: float) -> None:
        """Launch and return once `ready()` holds; ServerFailed (stopped, its log named) if the JVM exits
        or `timeout_s` passes first."""
        env = {**{k: v for k, v in os.environ.items() if k not in LEAKY_ENV_VARS}, **self.env}
        with open(self.log, "ab") as out:
            self.process = subprocess.Popen(
                self.cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, cwd=self.cwd, env=env, start_new_session=True
            )
        lifetime.register(self)
        try:
            self._watchdog = lifetime.start_watchdog(self.process.pid)
        except OSError:
            self._watchdog = None  # no sh: the atexit hook alone guards
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                break
            if ready():
                return
            time.sleep(0.2)
        code = self.process.poll()
        self.stop()
        tail = "\n".join(self.log.read_text(errors="replace").splitlines()[-20:])
        what = f"exited with code {code}" if code is not None else f"did not answer within {timeout_s:.0f}s"
        raise ServerFailed(f"{self.name} {what}", self.log, tail)

    def stop(self, grace_s: float = 10.0) -> None:
        process, self.process = self.process, None
        lifetime.unregister(self)
        lifetime.stop_watchdog(self._watchdog)
        self._watchdog = None
        if process is not None:
            stop_group(process, grace_s)


def stop_group(process: subprocess.Popen, grace_s: float = 10.0) -> None:
    """Stop every process of `process`'s group (it leads its own session): SIGTERM, SIGKILL to what
    is left after `grace_s`; reaps the leader."""
    group = process.pid
    lifetime.killpg(group, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while _group_alive(group) and time.monotonic() < deadline:
        process.poll()  # reaps the leader once it exits, so it stops counting as alive
        time.sleep(0.05)
    lifetime.killpg(group, signal.SIGKILL)
    process.wait(grace_s)


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True

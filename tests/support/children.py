"""Ending a server a test started as a child process (sshd, krb5kdc): SIGTERM, then SIGKILL.

`terminate_group` is for a child started under a wrapper that forks and waits rather than exec
(`faketime`): SIGTERM to the wrapper alone would leave the server running, orphaned. Such a
child is started with `start_new_session=True` and its whole process group is stopped.
"""

from __future__ import annotations

import os
import signal
import subprocess

from hmsproxy.dev.server_jvm import stop_group


def terminate(process: subprocess.Popen, grace_s: float = 10.0) -> None:
    """Stop `process` if it still runs: SIGTERM, and SIGKILL after `grace_s`; reaps it either way."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(grace_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(grace_s)


def terminate_group(process: subprocess.Popen, grace_s: float = 10.0) -> None:
    """Stop every process of `process`'s group (it must lead its own session): SIGTERM, SIGKILL to
    what is left after `grace_s`; reaps the leader (the dev stack's own way: server_jvm.stop_group)."""
    stop_group(process, grace_s)


def run_in_group(argv: list[str], env: dict[str, str], cwd, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run `argv` to its end in a process group of its own, then kill the group: a Spark JVM the
    command started dies with it even when its Python did not stop it."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd, env=env, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)

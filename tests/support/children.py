"""Ending a server a test started as a child process (sshd, krb5kdc): SIGTERM, then SIGKILL."""

from __future__ import annotations

import subprocess


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

"""The server's pid file: how `hmsproxy reload` finds a running `serve` (or `dev up`).

A server writes it only once it listens, and a server that fails to start never touches it:
the file of a live server stays its own. `serve` refuses to start while the file names a live
process, so two servers in one directory never share one file.
"""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_PID_FILE = ".state/hmsproxy.pid"


def recorded_pid(path: str | os.PathLike) -> int | None:
    """The pid the file names, or None (no file, or not a number)."""
    try:
        return int(Path(path).read_text().strip())
    except (OSError, ValueError):
        return None


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def refuse_if_running(path: str | os.PathLike) -> None:
    """One line and exit when `path` names another live process: a server runs from this directory."""
    pid = recorded_pid(path)
    if pid is not None and pid != os.getpid() and alive(pid):
        raise SystemExit(
            f"hmsproxy: can't start: {path} names a running server (pid {pid}); stop it, or give this one its own --pid-file (and --port)"
        )


def write_pid_file(path: str | os.PathLike) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    # Written aside and renamed: a reader (`hmsproxy reload`, a script waiting for the server) never
    # sees the file empty or half written.
    aside = p.with_name(f".{p.name}.{os.getpid()}")
    aside.write_text(f"{os.getpid()}\n")
    os.replace(aside, p)
    return p


def remove_pid_file(path: Path) -> None:
    # Only our own: another server may have taken the file over since.
    if recorded_pid(path) == os.getpid():
        try:
            path.unlink()
        except OSError:
            pass

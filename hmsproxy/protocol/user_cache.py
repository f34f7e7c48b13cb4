"""Files a process may keep for the next one: the loaded Thrift IDL, the statements' parser.

Each is made from inputs that rarely change and costs a new process (every `hmsproxy sql`)
far more to make than to read. They live in $XDG_CACHE_HOME/hmsproxy (~/.cache/hmsproxy),
or $HMSPROXY_CACHE_DIR; "off" there turns them off. A file's name carries a digest of what
it was made from, so a changed input or library version makes a new file rather than reading
a stale one. Nothing here may fail the caller: an unwritable or damaged cache costs the time
it would have saved, nothing else.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import BinaryIO

CACHE_DIR_ENV = "HMSPROXY_CACHE_DIR"


def cache_dir() -> Path | None:
    """Where the files go; None when caching is off."""
    own = os.environ.get(CACHE_DIR_ENV)
    if own:
        return None if own.lower() == "off" else Path(own)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "hmsproxy"


def cache_file(kind: str, inputs: Iterable[str | bytes], suffix: str = ".pickle") -> Path | None:
    """The file for `kind` made from `inputs` (with this Python's version in the digest), or None when off."""
    where = cache_dir()
    if where is None:
        return None
    digest = hashlib.sha256(f"{sys.version_info[:2]}".encode())
    for part in inputs:
        digest.update(part.encode() if isinstance(part, str) else part)
        digest.update(b"\0")
    return where / f"{kind}-{digest.hexdigest()[:24]}{suffix}"


def open_own(path: Path) -> BinaryIO:
    """`path` for reading, if this user wrote it and no one else may have: the files are pickles,
    and reading someone else's would run their code. OSError otherwise (FileNotFoundError: not made yet)."""
    fh = open(path, "rb")
    st = os.fstat(fh.fileno())
    if st.st_uid != os.getuid() or st.st_mode & 0o022:
        fh.close()
        raise PermissionError(f"{path} is not this user's own file")
    return fh


def write_atomically(path: Path, write: Callable[[BinaryIO], None]) -> bool:
    """Write `path` whole or not at all (a reader never sees half a file); False if it can't be written."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as fh:
            write(fh)
        os.replace(tmp, path)
        return True
    except Exception:  # noqa: BLE001 - unwritable, full disk, unpicklable: the caller has what it needs
        try:
            tmp.unlink()
        except OSError:
            pass
        return False

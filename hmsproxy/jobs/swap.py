"""Replace a partition's (or unpartitioned table's) files atomically, through the metastore.

Readers find data by the location the metastore gives them, so the only atomic
step available is changing that location:

1. the new files are written into a fresh sibling directory (the old ones are not touched);
2. the job checks what it wrote (row count) before anything is switched;
3. just before switching, the partition is read again: if its location or files
   changed meanwhile (a concurrent INSERT), the swap is abandoned rather than
   dropping someone else's data;
4. `alter_partition` / `alter_table` points the location at the new directory;
5. only once the metastore accepted it is the old directory removed.

Any failure before 4 completes deletes the new directory and leaves the old
location and its files exactly as they were. If the metastore call fails in a way
that leaves it unknown whether it was applied, both directories are kept.
"""

from __future__ import annotations

import copy
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from hmsproxy.files.storage import Entry, Storage, data_files
from hmsproxy.jobs.errors import JobError, error_text, one_line
from hmsproxy.jobs.tables import Target

#: Marks directories written by a job; a later run strips it so names don't grow with every rewrite.
MARKER = ".hmsproxy-"


@dataclass(frozen=True)
class Written:
    """What the job put into the new directory (checked before the swap)."""

    rows: int
    files: int
    bytes: int


@dataclass(frozen=True)
class Swapped:
    target: Target
    old_location: str
    new_location: str
    written: Written
    #: Set when the swap succeeded but the old directory could not be removed.
    warning: str | None = None


class Catalog(Protocol):
    """The metastore calls a swap makes (MetastoreClient; a fake in tests)."""

    def get_partition(self, db: str, table: str, values: list[str]) -> Any: ...

    def alter_partition(self, db: str, table: str, partition: Any) -> None: ...

    def get_table(self, db: str, table: str) -> Any: ...

    def alter_table(self, db: str, table: str, new_table: Any) -> None: ...


def new_token(now: datetime | None = None) -> str:
    """Time-ordered and unique enough that two runs never pick the same directory."""
    now = now or datetime.now(UTC)
    return f"{now:%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"


def sibling_location(location: str, job: str, token: str) -> str:
    """'…/t/ds=1' -> '…/t/ds=1.hmsproxy-compact-<token>': beside the old one, so on the same file system and
    inside the table's directory (dropping a managed table still removes it)."""
    trimmed = location.rstrip("/")
    parent, sep, base = trimmed.rpartition("/")
    if not sep or not base:
        raise JobError(f"can't place new files beside {location!r}")
    stem = base.split(MARKER, 1)[0]
    return f"{parent}/{stem}{MARKER}{job}-{token}"


def relocated(obj: Any, location: str, written: Written) -> Any:
    """A copy of the Partition/Table pointing at `location`, with the file statistics of the new files."""
    new = copy.deepcopy(obj)
    new.sd.location = location
    serde_params = new.sd.serdeInfo.parameters if new.sd.serdeInfo else None
    if serde_params and "path" in serde_params:
        serde_params["path"] = location  # Spark's data source tables read their location from here
    params = new.parameters
    if params is not None:
        # Stale numFiles/totalSize would mislead planners (broadcast decisions); rows are unchanged.
        if "numFiles" in params:
            params["numFiles"] = str(written.files)
        if "totalSize" in params:
            params["totalSize"] = str(written.bytes)
    return new


def fetch(catalog: Catalog, target: Target) -> Any:
    """The target's Partition, or the Table itself when it is unpartitioned."""
    if target.is_partition:
        return catalog.get_partition(target.db, target.table, list(target.values or ()))
    return catalog.get_table(target.db, target.table)


def _store(catalog: Catalog, target: Target, obj: Any) -> None:
    if target.is_partition:
        catalog.alter_partition(target.db, target.table, obj)
    else:
        catalog.alter_table(target.db, target.table, obj)


def _file_set(entries: list[Entry]) -> set[tuple[str, int]]:
    return {(e.name, e.size) for e in data_files(entries)}


def check_unchanged(current: Any, target: Target, storage: Storage, snapshot: list[Entry]) -> None:
    if current.sd.location != target.location:
        raise JobError(f"its location changed to {current.sd.location} while the job ran; left as it was")
    if _file_set(storage.list(target.location)) != _file_set(snapshot):
        raise JobError("its files changed while the job ran (a concurrent write?); left as it was")


def _location_now(catalog: Catalog, target: Target) -> str | None:
    try:
        return fetch(catalog, target).sd.location
    except Exception:
        return None


def swap_in(
    target: Target,
    write: Callable[[str], Written],
    *,
    storage: Storage,
    catalog: Catalog,
    snapshot: list[Entry],
    job: str,
    token: str | None = None,
) -> Swapped:
    """Write the target's new files with `write(new_location)` and swap them in (see the module doc)."""
    old = target.location
    new = sibling_location(old, job, token or new_token())
    if storage.exists(new):
        raise JobError(f"{new} already exists; not overwriting it")
    try:
        written = write(new)
        current = fetch(catalog, target)
        check_unchanged(current, target, storage, snapshot)
        updated = relocated(current, new, written)
    except BaseException as e:
        discard(storage, new, e)
        raise
    try:
        _store(catalog, target, updated)
    except BaseException as e:
        now = _location_now(catalog, target)
        if now != new:  # not applied (or unknown)
            if now is None:
                raise JobError(
                    f"the metastore call failed ({error_text(e)}) and it can't be told whether it was "
                    f"applied; both {old} and {new} are kept"
                ) from e
            discard(storage, new, e)
            if isinstance(e, Exception):
                raise JobError(f"the metastore refused the new location: {one_line(error_text(e))}") from e
            raise
        # The call failed after the metastore applied it (e.g. the answer was lost): the swap happened.
    try:
        storage.delete(old)
    except Exception as e:  # the data is consistent; only an unreferenced directory is left behind
        return Swapped(target, old, new, written, warning=f"could not remove the old directory {old}: {one_line(e)}")
    return Swapped(target, old, new, written)


def discard(storage: Storage, new: str, cause: BaseException) -> None:
    """Delete a half-written or rejected new directory; if even that fails, say where it is."""
    try:
        if storage.exists(new):
            storage.delete(new)
    except Exception as e:
        if isinstance(cause, Exception):
            raise JobError(f"{one_line(cause)}; and its new directory {new} could not be removed: {one_line(e)}") from cause

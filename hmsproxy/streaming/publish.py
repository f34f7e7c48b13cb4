"""How a transaction's rows become visible at commit, all at once, and never otherwise.

Readers (Spark, Hive) list a partition's (or unpartitioned table's) directory and skip names that
start with `_` or `.`. So a transaction writes its files into `<location>/_hmsproxy_stream/<txnid>/`,
where no reader looks. At commit the metastore commits the transaction first; then the directory is
marked `_COMMITTED`, each file is renamed into `<location>`, and the directory is removed.

- Before the commit, nothing is visible; an abort deletes the directory.
- Rows are visible exactly when the directory was marked: only after the metastore committed. A
  writer that dies between the metastore's commit and the mark (milliseconds) never saw `commit()`
  return, so it treats the transaction as failed and sends its rows again; the proxy deletes them.
- A transaction of one file (an unbucketed table) appears with one rename: atomic on a local or
  HDFS file system. A bucketed table's transaction has a file per bucket that got rows, renamed one
  after another: a reader listing the location during those renames can see some of them.
- A writer that dies leaves its directory behind. `recover` (run by the next batch of that
  location, and by `hmsproxy job compact`) leaves alone every directory whose writer still holds its
  batch's lock (the lock names the batch's transactions: `publish_agent`), since that writer may be
  renaming right now. Of the others, it finishes a marked directory's renames; an unmarked one is left while
  the metastore lists its transaction as open and deleted once it does not (aborted, by the writer
  or by the metastore's timeout).
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Callable

from hmsproxy.files.storage import arrow_filesystem, is_hidden

log = logging.getLogger(__name__)

STAGING = "_hmsproxy_stream"
COMMITTED = "_COMMITTED"
EXTENSIONS = {"parquet": "parquet", "orc": "orc"}

_PUBLISHING = re.compile(r"publishing txns (\d+)-(\d+)$")

#: txn_state(txnid) -> "open", "aborted" or "gone" (the metastore lists it no more); only "open" matters here.
TxnState = Callable[[int], str]


class TxnFiles:
    """One transaction's files under one location."""

    def __init__(self, location: str, txnid: int, file_format: str):
        self.location = location
        self.fs, self.root = arrow_filesystem(location)
        self.root = self.root.rstrip("/")
        self.txnid = txnid
        self.staging = f"{self.root}/{STAGING}/{txnid}"
        self._name = f"stream-{txnid}-{uuid.uuid4().hex[:8]}.{EXTENSIONS[file_format]}"
        self._made = False

    def staged_path(self, bucket: int) -> str:
        """Where bucket `bucket`'s file of this transaction is written (the staging directory is made)."""
        if not self._made:
            self.fs.create_dir(self.staging, recursive=True)
            self._made = True
        return f"{self.staging}/{bucket:06d}_{self._name}"

    def publish(self) -> list[str]:
        """The metastore committed: mark the staged files committed, then rename them into the location."""
        self.mark()
        return self.move_in()

    def mark(self) -> None:
        """From here on the files are the table's: recover publishes a marked directory, never deletes it."""
        if self._made:
            with self.fs.open_output_stream(f"{self.staging}/{COMMITTED}"):
                pass

    def move_in(self) -> list[str]:
        """Rename the marked files into the location."""
        return _publish(self.fs, self.staging, self.root) if self._made else []

    def discard(self) -> None:
        if self._made or _exists(self.fs, self.staging):
            _delete(self.fs, self.staging)


def publish_agent(agent: str, first: int, last: int) -> str:
    """The agent info of a batch's lock on its location: it tells recover that these transactions'
    writer is alive."""
    return f"{agent} publishing txns {first}-{last}"


def publishing(agent_infos) -> frozenset[int]:
    """The transactions of batches whose locks these are (show_locks' agentInfo of a location's locks)."""
    found = (_PUBLISHING.search(info or "") for info in agent_infos)
    return frozenset(t for m in found if m for t in range(int(m.group(1)), int(m.group(2)) + 1))


def recover(
    location: str, txn_state: TxnState, *, skip: frozenset[int] = frozenset(), alive: Callable[[], frozenset[int]] = frozenset
) -> tuple[list[int], list[int]]:
    """Publish or delete what dead writers left under `location` (see the module doc); `skip`: the
    caller's own transactions; `alive()`: those of writers holding their batch's lock (asked only when
    something was left). Returns (published, deleted) txn ids."""
    from pyarrow import fs as pafs

    filesystem, root = arrow_filesystem(location)
    root = root.rstrip("/")
    staging_root = f"{root}/{STAGING}"
    published, deleted = [], []
    left = [
        info
        for info in filesystem.get_file_info(pafs.FileSelector(staging_root, allow_not_found=True))
        if info.type == pafs.FileType.Directory and info.base_name.isdigit() and int(info.base_name) not in skip
    ]
    if left:
        skip = skip | alive()
    for info in left:
        txnid = int(info.base_name)
        if txnid in skip:
            continue
        if _exists(filesystem, f"{info.path}/{COMMITTED}"):
            _publish(filesystem, info.path, root)
            published.append(txnid)
        elif txn_state(txnid) != "open":
            _delete(filesystem, info.path)
            deleted.append(txnid)
    if published or deleted:
        log.info("%s: published the files of committed transactions %s, deleted those of %s", location, published, deleted)
    return published, deleted


def _publish(filesystem, staging: str, root: str) -> list[str]:
    from pyarrow import fs as pafs

    names = []
    for info in filesystem.get_file_info(pafs.FileSelector(staging)):
        if info.type == pafs.FileType.File and not is_hidden(info.base_name):
            filesystem.move(info.path, f"{root}/{info.base_name}")
            names.append(info.base_name)
    _delete(filesystem, staging)
    return names


def _exists(filesystem, path: str) -> bool:
    from pyarrow import fs as pafs

    return filesystem.get_file_info(path).type != pafs.FileType.NotFound


def _delete(filesystem, path: str) -> None:
    from pyarrow import fs as pafs

    if filesystem.get_file_info(path).type == pafs.FileType.Directory:
        filesystem.delete_dir(path)

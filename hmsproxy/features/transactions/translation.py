"""What a call's answer must get back: the client's ids (and table names) for the metastore's.

Messages: Hive writes ids into messages as ``txnid:12`` and ``lockid:7`` (JavaUtils.txnIdToString and
lockIdToString); the proxy swaps each real id it knows for the id the client holds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_ID = re.compile(r"\b(txnid|lockid):(\d+)\b", re.IGNORECASE)


def ids_in(message: str | None) -> tuple[set[int], set[int]]:
    """(transaction ids, lock ids) a message names."""
    txns: set[int] = set()
    locks: set[int] = set()
    for m in _ID.finditer(message or ""):
        (txns if m.group(1).lower() == "txnid" else locks).add(int(m.group(2)))
    return txns, locks


def rewrite_ids(message: str | None, txns: dict[int, int], locks: dict[int, int]) -> str | None:
    if not message or not (txns or locks):
        return message

    def swap(m: re.Match) -> str:
        known = txns if m.group(1).lower() == "txnid" else locks
        return f"{m.group(1)}:{known.get(int(m.group(2)), m.group(2))}"

    return _ID.sub(swap, message)


@dataclass
class Note:
    """What on_response must translate back for one call (kept in call.notes)."""

    metastore: str
    #: real id -> the client's id, for answers and messages.
    txns: dict[int, int] = field(default_factory=dict)
    locks: dict[int, int] = field(default_factory=dict)
    #: Encode the answer's lock id (a lock taken on a metastore other than the primary).
    encode_lock: bool = False
    #: "db.table" as the metastore knows it -> as the client named it (get_valid_write_ids).
    tables: dict[str, str] = field(default_factory=dict)

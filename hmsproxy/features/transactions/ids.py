"""How an id the proxy hands out names the metastore it belongs to.

- **Transaction ids** are the primary's: open_txns goes there. A transaction that then works on
  another metastore is *bound* to it (bindings.py: the store keeps proxy id -> metastore, real id);
  an id without a binding is the primary's own.
- **Lock ids** (and ids of other metastores' transactions the proxy did not open, seen in merged
  views) are encoded: ``slot << SLOT_SHIFT | real id``, where the slot is a small number the store
  gives each metastore name once (store.py). The primary's slot is 0: its ids are unchanged, so a
  federation whose locks all live on the primary sees exactly what Waggle Dance shows.

Real ids stay below 2**44 (17.6 trillion) on any metastore; slots fit the 19 bits above that.
"""

from __future__ import annotations

from dataclasses import dataclass

SLOT_SHIFT = 44
REAL_MASK = (1 << SLOT_SHIFT) - 1
MAX_SLOT = (1 << (63 - SLOT_SHIFT)) - 1
PRIMARY_SLOT = 0


@dataclass(frozen=True)
class Place:
    """Where an id lives: a metastore's name and the id that metastore knows."""

    metastore: str
    real: int


def encode(slot: int, real: int) -> int:
    if not 0 <= real <= REAL_MASK:
        raise ValueError(f"id {real} does not fit {SLOT_SHIFT} bits")
    if not 0 <= slot <= MAX_SLOT:
        raise ValueError(f"slot {slot} out of range")
    return (slot << SLOT_SHIFT) | real


def decode(proxy_id: int) -> tuple[int, int]:
    """(slot, real id) of an encoded id; slot 0 is the primary's plain id."""
    if proxy_id < 0:
        return PRIMARY_SLOT, proxy_id
    return proxy_id >> SLOT_SHIFT, proxy_id & REAL_MASK

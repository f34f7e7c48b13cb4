"""Where each transaction and lock id lives, and binding a transaction to the metastore it works on.

ids.py says how ids name metastores; this keeps the in-memory side (slots by name, bindings seen
before) over the store's rows (store.py). Bindings never change while their transaction runs, so a
binding seen once is kept here; an id *without* one is asked of the store every time, because
another process may have bound it meanwhile.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

from hmsproxy.features.transactions import ids
from hmsproxy.features.transactions.ids import Place
from hmsproxy.features.transactions.store import TxnRepository

#: Bindings kept in memory before the oldest half is dropped (each is a few dozen bytes).
MAX_KNOWN = 100_000


class UnknownId(Exception):
    """An encoded id whose slot names no metastore this store knows."""


class Crossing(Exception):
    """A transaction bound to one metastore was asked to work on another."""

    def __init__(self, proxy_txn: int, bound: str, wanted: str):
        super().__init__(
            f"hmsproxy: transaction {proxy_txn} works on metastore '{bound}'; it can't also work on metastore "
            f"'{wanted}': a transaction stays on one metastore (commit it, then open another for '{wanted}')"
        )


class Bindings:
    def __init__(self, repo: TxnRepository):
        self.repo = repo
        self._slots: dict[str, int] = {}
        self._names: dict[int, str] = {}
        self._known: dict[tuple[str, int], Place] = {}  # (primary, proxy id) -> place
        self._lock = threading.Lock()

    # -- slots: lock ids and other metastores' transactions ---------------------------------

    def slot(self, metastore: str, primary: str) -> int:
        if metastore == primary:
            return ids.PRIMARY_SLOT
        slot = self._slots.get(metastore)
        if slot is None:
            slot = self.repo.slot_for(metastore)
            with self._lock:
                self._slots[metastore], self._names[slot] = slot, metastore
        return slot

    def metastore_of_slot(self, slot: int, primary: str) -> str:
        if slot == ids.PRIMARY_SLOT:
            return primary
        name = self._names.get(slot)
        if name is None:
            known = self.repo.slots()
            with self._lock:
                self._slots.update(known)
                self._names.update({s: n for n, s in known.items()})
            name = self._names.get(slot)
        if name is None:
            raise UnknownId(f"slot {slot}")
        return name

    def encode(self, metastore: str, real: int, primary: str) -> int:
        return ids.encode(self.slot(metastore, primary), real)

    def locate_lock(self, proxy_lock: int, primary: str) -> Place:
        slot, real = ids.decode(proxy_lock)
        return Place(self.metastore_of_slot(slot, primary), real)

    # -- transactions ----------------------------------------------------------------------

    def bound(self, proxy_txn: int, primary: str) -> Place | None:
        """The transaction's binding, or None while it has none (it is then the primary's own)."""
        place = self._known.get((primary, proxy_txn))
        if place is None:
            place = self.repo.binding(primary, proxy_txn)
            if place is not None:
                self._remember(primary, proxy_txn, place)
        return place

    def placed(self, proxy_txn: int, primary: str) -> Place | None:
        """Where the transaction was placed: another metastore's id (its slot says so) or a binding;
        None for an unbound id of the primary's."""
        slot, real = ids.decode(proxy_txn)
        if slot != ids.PRIMARY_SLOT:  # another metastore's transaction, as a merged view showed it
            return Place(self.metastore_of_slot(slot, primary), real)
        return self.bound(proxy_txn, primary)

    def locate_txn(self, proxy_txn: int, primary: str) -> Place:
        return self.placed(proxy_txn, primary) or Place(primary, proxy_txn)

    def bind(self, proxy_txn: int, metastore: str, primary: str, open_there: Callable[[], int], drop: Callable[[int], None]) -> Place:
        """Bind an unbound transaction to `metastore`: `open_there()` opens its transaction there (not
        called for the primary, whose id it already is); `drop(real)` aborts one opened in vain because
        another process bound it first. Raises Crossing when that process bound it elsewhere."""
        place = Place(primary, proxy_txn) if metastore == primary else Place(metastore, open_there())
        won = self.repo.bind(primary, proxy_txn, place)
        if won != place and metastore != primary:
            drop(place.real)
        if won.metastore != metastore:
            raise Crossing(proxy_txn, won.metastore, metastore)
        self._remember(primary, proxy_txn, won)
        return won

    def forget(self, primary: str, proxy_txns: Iterable[int]) -> None:
        """The transactions are over and no client means them any more (sweep.py): their bindings go."""
        done = list(proxy_txns)
        with self._lock:
            for t in done:
                self._known.pop((primary, t), None)
        self.repo.unbind(primary, done)

    def proxy_txn_ids(self, metastore: str, reals: Iterable[int], primary: str) -> dict[int, int]:
        """real id -> the id clients know, for transactions of `metastore` (bound ones by their
        binding; the rest of another metastore's encoded, the primary's unchanged)."""
        reals = set(reals)
        if metastore == primary:
            return {r: r for r in reals}
        found = self.repo.proxy_ids(primary, metastore, reals) if reals else {}
        slot = self.slot(metastore, primary)
        return {r: found.get(r, ids.encode(slot, r)) for r in reals}

    def _remember(self, primary: str, proxy_txn: int, place: Place) -> None:
        with self._lock:
            if len(self._known) >= MAX_KNOWN:
                for key in list(self._known)[: MAX_KNOWN // 2]:
                    del self._known[key]
            self._known[(primary, proxy_txn)] = place

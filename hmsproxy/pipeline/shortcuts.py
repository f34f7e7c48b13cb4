"""Relay shortcuts: a read relayed once is relayed again without asking routing and features anew.

This module is the store of remembered decisions; when one is taken or kept is pipeline/fastpath.py
(step 1 of the fast-path decision).

Deciding that a call may be relayed as bytes (relay.py) takes routing, the table-visibility
check, every feature's on_request and on_routed hooks and the relay plan: most of what the proxy
spends on a call that it only forwards. For a read (`get_*`) that decision depends only on the
method, its arguments, who asks, the config snapshot and the features' records. So once a read
has been relayed, the next read of the same method with the same arguments (byte for byte, as the
client encoded them: nothing is decoded to find the shortcut) by the same caller (the set_ugi user
and groups) within `TTL_S` goes straight to the same metastore with the same plan, and its request
is forwarded as the client sent it (the backend answers with the client's own sequence id; nothing
is re-encoded). Its on_complete hooks (audit, metrics) run as on the full path, and the metastore's
circuit breaker still guards it. Only features that declare `memoizable_verdict` (their verdict
depends on nothing more) let the calls their hooks want be remembered; a rule on how often, when or
from where keeps the default, and its hooks see every call.

A shortcut is dropped when anything could change the decision:
- any call that is not a read (a write, a statement through `hmsproxy_execute`, ...): all
  shortcuts go when it starts and again when it ends, and a read decided meanwhile keeps nothing
  (`generation`);
- a reload (another config snapshot, so another router: the shortcut names the one it was made on);
- time: after `TTL_S`, the next read takes the full path and decides again. Features re-read their
  records from the store at most once a second (store/snapshot.py), so a change another proxy made
  to the shared store reaches calls here within about that long plus `TTL_S`.

Features may not change a read's arguments without routing it themselves (a routed call is never
remembered): the shortcut forwards what the client sent.
"""

from __future__ import annotations

import threading
import time
from functools import cache
from typing import NamedTuple

from hmsproxy.pipeline.plan import Plan
from hmsproxy.protocol._thriftwalk import Tally
from hmsproxy.protocol.framing import Message
from hmsproxy.routing.methods import METHOD_SPECS, TRANSACTION_CALLS, Kind
from hmsproxy.routing.router import Router

#: How long a decision is reused before a read takes the full path again.
TTL_S = 0.5
#: Shortcuts kept at most (a run of distinct calls beyond this starts over rather than growing).
MAX_SHORTCUTS = 10_000
#: Longer arguments are not kept as a key (a call with a long filter or list takes the full path).
MAX_KEY_BYTES = 1024


class Shortcut(NamedTuple):
    """A remembered decision. A tuple: the hit loop in C reads `plan`, `router` and `expires` by
    position (SHORTCUT_* in protocol/_thriftwalk.h; tests/contract/test_c_boundary.py checks them)."""

    #: The call's Plan (plan.py), executed again as it is, by Python or by the hit loop in C.
    plan: Plan
    router: Router
    expires: float
    #: What the call named, for its on_complete hooks (audit).
    client_db: str | None
    table: str | None


def shortcut_key(message: Message, caller: tuple = (None, ())) -> tuple[str, bytes, tuple] | None:
    """The call's method, its arguments' bytes and who asks (`Session.caller`), or None when the
    arguments are too long to keep."""
    header = message.header
    if len(message.data) - header.length > MAX_KEY_BYTES:
        return None
    return header.name, message.data[header.length :], caller


@cache  # asked on every call: answered from the cache without a Python frame
def is_read(method: str) -> bool:
    """Calls whose relay decision may be reused: reads routed by database or to the primary that name
    one database at most (the full path checks that a call naming several finds them on one metastore)."""
    spec = METHOD_SPECS[method]
    one_database = spec.second_db is None and spec.db_list is None
    return spec.reads and spec.kind in (Kind.ROUTED, Kind.PRIMARY) and one_database


#: Reads after which a client's next read must take the full path: after get_index_by_name, the
#: indexes feature looks at the next get_table (features/indexes/hive_rebuild.py).
DROPS_SHORTCUTS = frozenset({"get_index_by_name"})


@cache
def changes_nothing(method: str) -> bool:
    """Calls after which every shortcut still holds: reads (fb303's included) but DROPS_SHORTCUTS,
    set_ugi and the transaction manager's calls."""
    if method in DROPS_SHORTCUTS:
        return False
    return METHOD_SPECS[method].reads or method == "set_ugi" or method in TRANSACTION_CALLS


class Shortcuts:
    """Relay decisions by method, arguments and caller (`shortcut_key`)."""

    def __init__(self):
        self._known: dict[tuple, Shortcut] = {}
        self._lock = threading.Lock()  # remember() and forget_all(); find() reads without it
        #: Counts the times every shortcut was dropped; a read remembers its decision only if this
        #: has not moved since the read began.
        self.generation = 0
        #: Hits, counted here and by the hit loop in C.
        self.used_tally = Tally()

    @property
    def used(self) -> int:
        """How many calls a shortcut answered."""
        return self.used_tally.count

    @property
    def known(self) -> dict[tuple, Shortcut]:
        """The decisions by key (the hit loop in C reads them: downstream/hits.py)."""
        return self._known

    def find(self, key: tuple, router: Router) -> Shortcut | None:
        found = self._known.get(key)
        if found is None or found.router is not router or found.expires < time.monotonic():
            return None
        self.used_tally.add()
        return found

    def remember(self, key: tuple, call, plan: Plan, generation: int) -> None:
        """Keep `plan`, how `call` (handler.Call) was relayed, unless anything changed since `generation`."""
        shortcut = Shortcut(plan, call.router, time.monotonic() + TTL_S, call.client_db, call.table)
        with self._lock:
            if generation != self.generation:
                return  # something changed while this read was decided
            if len(self._known) >= MAX_SHORTCUTS:
                self._known.clear()
            self._known[key] = shortcut

    def forget_all(self) -> None:
        with self._lock:
            self.generation += 1
            self._known.clear()

    def __len__(self) -> int:
        return len(self._known)

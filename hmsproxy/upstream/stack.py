"""Each metastore's upstream policies composed once: cache → slots → breaker → hedging → wire.

A `Stack` is built per metastore when the configuration is read and again on every reload (and
when the limits feature changes the caps: Backends.rebuild_stacks), the way an HTTP client wraps
its transports: each layer only if that metastore has it (a `cache:`, a cap from `limits:`, a
`hedge:` over several URIs), so a call asks no dict and no config which policies apply.
Session.call, relay and relay_again run its three chains:

- `call`:        [cache] → [slots] → breaker → [hedging] → wire (decoded answer)
- `relay`:       [slots] → breaker → wire (the answer copied to the client undecoded: never
                 cached, never hedged, pipeline/fastpath.py)
- `relay_again`: [slots] → breaker (entered with the kept connection) → the connection

Every chain takes the session first: connections, identity and serve-stale are the session's.
Slots sit outside the breaker: time spent waiting for a slot is not taken for a hung metastore.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hmsproxy.config.model import MetastoreConfig
from hmsproxy.routing.methods import METHOD_SPECS
from hmsproxy.upstream.cache.calls import through_cache
from hmsproxy.upstream.wire import BackendUnavailable

if TYPE_CHECKING:
    from hmsproxy.upstream.backends import Backends


class Stack:
    """One metastore's three chains (the module doc), built by `build`."""

    __slots__ = ("metastore", "call", "relay", "relay_again")

    def __init__(self, metastore: MetastoreConfig, call, relay, relay_again):
        self.metastore = metastore
        #: (session, method, args, read_only) -> the `<method>_result` struct.
        self.call = call
        #: (session, method, args, sink, catalog_field) -> (message type, body start).
        self.relay = relay
        #: (session, conn, method, request, sink, catalog_field, exchanged) -> as relay, or None: take the full path.
        self.relay_again = relay_again


def build(backends: Backends, metastore: MetastoreConfig) -> Stack:
    """`metastore`'s stack with the policies `backends` has for it now."""
    name = metastore.name
    wire = _Wire(backends, metastore)
    to_wire = _Hedged(backends.hedging, metastore, wire.call) if _hedged(metastore) else wire.call
    call = _Guarded(backends.breaker, name, to_wire)
    relay = _Guarded(backends.breaker, name, wire.relay)
    relay_again = _Rewatched(backends, name)
    slots = backends.slots.capped.get(name)
    if slots is not None:
        call, relay, relay_again = _Slotted(slots, call), _Slotted(slots, relay), _Slotted(slots, relay_again)
    cache = backends.caches.get(name)
    if cache is not None:
        call = _Cached(cache, call)
    return Stack(metastore, call, relay, relay_again)


def _hedged(metastore: MetastoreConfig) -> bool:
    """Whether any call to `metastore` may be hedged (hedging.py; Hedging.applies decides per call)."""
    return metastore.hedge is not None and (len(metastore.uris) > 1 or len(metastore.read_only_uris) > 1)


class _Cached:
    """Answered from the metastore's cache, stored in it, or making it stale (cache/calls.py)."""

    __slots__ = ("_cache", "_inner")

    def __init__(self, cache, inner):
        self._cache, self._inner = cache, inner

    def __call__(self, session, method: str, args, read_only: bool):
        inner = self._inner
        return through_cache(self._cache, method, args, lambda: inner(session, method, args, read_only), session.note_served_stale)


class _Slotted:
    """Holding one of the metastore's concurrency slots (slots.py: raises BackendBusy)."""

    __slots__ = ("_slots", "_inner")

    def __init__(self, slots, inner):
        self._slots, self._inner = slots, inner

    def __call__(self, *args):
        with self._slots:
            return self._inner(*args)


class _Guarded:
    """Watched by the breaker from before it connects (a hung metastore may hang there too); the
    guard goes down to the wire, which registers the connection the call takes."""

    __slots__ = ("_breaker", "_name", "_inner")

    def __init__(self, breaker, name: str, inner):
        self._breaker, self._name, self._inner = breaker, name, inner

    def __call__(self, *args):
        with self._breaker.guard(self._name) as watched:
            return self._inner(*args, watched)


class _Hedged:
    """A read hedged on a second URI after the threshold (hedging.py); other calls straight on."""

    __slots__ = ("_hedging", "_metastore", "_inner")

    def __init__(self, hedging, metastore: MetastoreConfig, inner):
        self._hedging, self._metastore, self._inner = hedging, metastore, inner

    def __call__(self, session, method: str, args, read_only: bool, watched):
        if self._hedging.applies(self._metastore, method, read_only):
            return self._hedging.call(session, self._metastore, method, args, read_only, watched)
        return self._inner(session, method, args, read_only, watched)


class _Wire:
    """The bottom: the session's connection for the call (Session.connection_for), then Backends."""

    __slots__ = ("_backends", "_metastore")

    def __init__(self, backends: Backends, metastore: MetastoreConfig):
        self._backends, self._metastore = backends, metastore

    def call(self, session, method: str, args, read_only: bool, watched):
        conn, reopen = session.connection_for(self._metastore, method, read_only, watched)
        return self._backends.call(conn, method, args, reopen)

    def relay(self, session, method: str, args, sink, catalog_field, watched):
        conn, reopen = session.connection_for(self._metastore, method, METHOD_SPECS[method].reads, watched)
        return self._backends.relay(conn, method, args, sink, catalog_field, reopen)


class _Rewatched:
    """A repeated read on the connection an earlier relay left open: entered with the breaker as a
    guard would, without a guard object (every repeated read comes here)."""

    __slots__ = ("_backends", "_name")

    def __init__(self, backends: Backends, name: str):
        self._backends, self._name = backends, name

    def __call__(self, session, conn, method: str, request: bytes, sink, catalog_field, exchanged):
        backends, name = self._backends, self._name
        breaker = backends.breaker
        try:
            token = breaker.enter(name, conn)
        except BackendUnavailable:
            if exchanged is not None:  # its answer, unread, would be the next call's: the connection goes
                conn.close()
            raise
        try:
            answer = conn.relay(method, request, sink, catalog_field, exchanged)
        except BackendUnavailable as e:  # raised before anything reached the client
            if e.gone_before_answer or (e.cut and breaker.stalled(name, e.uri)):
                return None  # a read: the full path goes again on a new connection (another URI, if stalled)
            if not e.cut:
                backends.mark_down(name, e.reason)
            raise
        finally:
            breaker.leave(token)
        backends.relayed(name)
        return answer

"""Per-client-connection state (downstream: one client; upstream: its metastore connections):
the `set_ugi` identity and backend connections.

thriftpy2 connections are not thread-safe, so each session owns its own; a fan-out
leg (`Leg`) owns the connections it uses while it runs, so a straggler the fan-out stopped
waiting for never shares one with the session. Every backend call here runs inside the
metastore's circuit breaker (`breaker.guard`, breaker.py), which knows the connection it uses:
a trip cuts it. Each call also holds one of its metastore's concurrency slots when it has a cap
(slots.py: waiting for a slot is not the breaker's business). Which of these policies a call
goes through is decided once per metastore, not per call: its stack (stack.py).
"""

from __future__ import annotations

import copy
import logging
import threading
from collections.abc import Callable

from hmsproxy.config.auth_to_local import user_short_name
from hmsproxy.config.model import MetastoreConfig
from hmsproxy.protocol import idl
from hmsproxy.protocol.relay import CatalogFill
from hmsproxy.routing.methods import METHOD_SPECS
from hmsproxy.upstream.backends import Backends, Reopen
from hmsproxy.upstream.breaker import Guard
from hmsproxy.upstream.impersonation import refusal
from hmsproxy.upstream.wire import BackendUnavailable, Connection

log = logging.getLogger(__name__)


class Session:
    def __init__(self, backends: Backends, client_address: str = "-"):
        self.backends = backends
        self.client_address = client_address
        self.user: str | None = None
        self.groups: list[str] = []
        #: Who asks, as one hashable value: what a remembered decision is kept for (pipeline/fastpath.py).
        self.caller: tuple = (None, ())
        #: The Kerberos principal the client authenticated as (SASL on the proxy's port); None: unauthenticated.
        self.principal: str | None = None
        #: The principal's short name, the identity it authenticated as (set_ugi of a proxy user changes `user`, not this).
        self.principal_user: str | None = None
        #: A principal or user name -> the user it acts as, by the rules that made `principal_user`
        #: (server.sasl.auth-to-local: alice@REALM -> alice; a bare name stays); None: no rule applies.
        self.short_name: Callable[[str], str | None] = _without_rules
        #: The authenticated principal may act for others with set_ugi (server.sasl.impersonation).
        self.impersonates = False
        #: Whom it may act for, from where (config/model.ProxyUser; None: anyone, or no impersonation).
        self.proxy_user = None
        #: Authenticated with a delegation token (DIGEST-MD5), not Kerberos: it may not get new tokens.
        self.via_token = False
        self._conns: dict[tuple[str, bool], Connection] = {}
        self._lock = threading.Lock()
        #: Each feature's own state for this client (pipeline/platform.py: new_session_state).
        self._states: dict[str, object] = {}
        #: Set when a call was answered from the cache because its metastore is down (the audit log says so).
        self.served_stale = False
        #: Made by borrowed(): its connections are another session's, which closes them.
        self._borrowed = False

    def set_ugi(self, user: str, groups: list[str]) -> None:
        """The identity the client claims; ignored once Kerberos said who it is (authenticate),
        unless the principal may act for others."""
        if not self.accepts_set_ugi:
            return
        self.user, self.groups = user, list(groups or [])
        self.caller = (user, tuple(self.groups))

    @property
    def accepts_set_ugi(self) -> bool:
        """Whether set_ugi may set the identity: no Kerberos, or a principal allowed to impersonate."""
        return self.principal is None or self.impersonates

    def authenticate(self, user: str, principal: str, *, impersonates: bool = False, proxy_user=None, short_name=None) -> None:
        """The client proved to be `principal` (downstream/kerberos.py): `user`, its short name, is
        this session's identity; set_ugi can no longer change it, unless `impersonates` (the
        principal is in server.sasl.impersonation: a service acting for its users, within `proxy_user`'s
        limits, upstream/impersonation.py)."""
        self.user, self.groups, self.principal, self.impersonates = user, [], principal, impersonates
        self.principal_user = user
        self.short_name = short_name or _without_rules
        self.proxy_user = proxy_user
        self.caller = (user, ())

    def impersonation_refusal(self, user: str) -> str | None:
        """Why this session may not act as `user` (its proxy-user limits); None when it may."""
        if self.proxy_user is None:
            return None
        return refusal(self.proxy_user, user, self.client_address.rpartition(":")[0])

    def borrowed(self) -> Session:
        """A session for the calls the proxy makes for this client while handling one of its calls
        (pipeline/internal_client.py): the same identity, feature state and backend connections, so
        they open no connection this one has (connect, set_ugi, version probe); its own per-call
        state: its own served_stale, and "hmsproxy" as its address in the audit log (no reply sink:
        that is each call's, Call.reply_sink, and the proxy's own calls have none). Closing it
        closes nothing.

        Safe for thriftpy2's unshared connections because hooks run on the thread handling the
        call, while that call is not using a connection: before it forwards, after the answer.
        """
        twin = copy.copy(self)  # shares _conns, _lock and _states with this session
        twin.client_address, twin.served_stale, twin._borrowed = "hmsproxy", False, True
        return twin

    def state(self, feature):
        """The state `feature` keeps for this client, made by its new_session_state() on first use."""
        state = self._states.get(feature.name)
        if state is None:
            state = self._states.setdefault(feature.name, feature.new_session_state())
        return state

    def leg(self, metastore_name: str) -> Leg:
        """A session for one fan-out leg to `metastore_name`, made on this session's thread (Leg)."""
        return Leg(self, metastore_name)

    def _connection(self, metastore: MetastoreConfig, read_only: bool, watched: Guard) -> Connection:
        return self._kept_or_new(metastore, read_only, watched)[0]

    def _kept_or_new(self, metastore: MetastoreConfig, read_only: bool, watched: Guard) -> tuple[Connection, bool]:
        """(the connection, whether it was kept from an earlier call rather than opened now), registered
        with the breaker as the one the `watched` call goes over."""
        key = conn_key(metastore, read_only)
        uris = tuple(metastore.read_only_uris if key[1] else metastore.uris)
        moved = None
        with self._lock:
            conn = self._conns.get(key)
            if conn is not None and tuple(conn.uris) != uris:  # a reload moved the metastore: leave the old one
                moved, conn = conn, None
            if conn is None or not conn.is_open:
                conn = self.backends.new_connection(metastore, read_only=key[1])
                self._conns[key] = conn
        if moved is not None:
            moved.close()
        watched.uses(conn)
        kept = conn.is_open
        if not kept:
            try:
                conn.open()
            except BackendUnavailable as e:
                if not e.cut:  # a cut call says nothing new of the metastore
                    self.backends.mark_down(metastore.name, e.reason)
                raise
            self.backends.probe_version(conn)
            if self.user is not None:
                # The backend must see the same identity the client gave the proxy.
                self.backends.call(conn, "set_ugi", idl.HmsProxy.set_ugi_args(user_name=self.user, group_names=self.groups))
        return conn, kept

    def call(self, metastore: MetastoreConfig, method: str, args, *, read_only: bool = False):
        """Call `method` on `metastore`; returns the `<method>_result` struct.

        Goes through the metastore's stack (stack.py: cache, slots, breaker, hedging, each if it
        has them). Raises BackendUnavailable at once while the metastore is tripped (breaker.py);
        the breaker watches the call from before it connects (a hung metastore may hang there too).
        """
        return self.backends.stack(metastore).call(self, method, args, read_only)

    def relay(self, metastore: MetastoreConfig, method: str, args, sink, catalog_field: CatalogFill | None = None) -> tuple[int, bytes]:
        """Call `method` and copy its answer to `sink` undecoded, the catalog inserted where
        `catalog_field` says if given (relay.py): (message type, body start)."""
        return self.backends.stack(metastore).relay(self, method, args, sink, catalog_field)

    def relay_again(
        self, metastore: MetastoreConfig, method: str, request: bytes, sink, catalog_field: CatalogFill | None, exchanged=None
    ) -> tuple[int, bytes] | None:
        """relay() to `sink` for a read whose request goes as the client sent it (shortcuts.py), on the connection
        an earlier relay left open; None when there is none or the metastore had closed it (the full
        path opens one: set_ugi, version). Every repeated read takes this path: it is kept short.
        `exchanged`: the hit loop sent it already (downstream/hits.py) and its round trip did not end
        in a whole answer: wire.ThriftConnection.relay finishes it."""
        conn = self._conns.get((metastore.name, bool(metastore.read_only_uris)))  # a read's (conn_key), as relay() opened it
        if conn is None or not conn.is_open:
            return None
        return self.backends.stack(metastore).relay_again(self, conn, method, request, sink, catalog_field, exchanged)

    def note_served_stale(self) -> None:
        """The metastore was down and the cache answered with what it kept (serve-stale; the audit log marks it)."""
        self.served_stale = True

    def knows_catalogs(self, metastore: MetastoreConfig) -> bool:
        """Whether `metastore` understands Hive 3's "@catalog#db" names (Backends.knows_catalogs)."""
        known = self.backends.state(metastore.name).knows_catalogs
        if known is not None:  # the common case, on every relayed call: no connection needed to tell
            return known
        with self.backends.breaker.guard(metastore.name) as watched:  # it may connect and call, like call()
            return self.backends.knows_catalogs(self._connection(metastore, False, watched))

    def connection_for(self, metastore: MetastoreConfig, method: str, read_only: bool, watched: Guard) -> tuple[Connection, Reopen | None]:
        """The connection one call of `method` goes over now (the kept one, or one opened now with
        set_ugi and the version probe), registered with the breaker's `watched` call, and how the call
        goes again on a new connection if it may (Backends.send's `reopen`; None for a write). For code
        that sends a call itself rather than through call(): a hedged read's primary (hedging.py).
        call() and relay() take their connections here too.

        The call goes again on a new connection (only a read, or a call safe to repeat:
        MethodSpec.repeatable) when the metastore had closed its kept one
        (wire.BackendUnavailable.gone_before_answer), or when the breaker cut it because its URI of
        an HA set stalled (the new one goes to another URI; the stalled instance may still answer the
        first one later, into a closed socket: a read's answer, harmless). A write is never sent twice."""
        conn, kept = self._kept_or_new(metastore, read_only, watched)
        repeatable = METHOD_SPECS[method].repeatable
        if kept and not repeatable and conn.closed_by_peer():  # it can't go again: never over a dead one
            log.info("metastore '%s' had closed an idle connection: %s goes on a new one", metastore.name, method)
            conn.close()
            conn, kept = self._kept_or_new(metastore, read_only, watched)
        if not repeatable or not (kept or _several_uris(metastore)):
            return conn, None  # a fresh connection to a single URI: neither case can happen
        stalled = self.backends.breaker.stalled

        def again(e: BackendUnavailable) -> Connection:
            if kept and e.gone_before_answer:
                log.info("metastore '%s' had closed an idle connection: %s goes again on a new one", e.metastore, method)
            elif e.cut and stalled(e.metastore, e.uri):
                log.info("metastore '%s': %s stalled; %s goes again on another URI", e.metastore, e.uri, method)
            else:
                raise e
            return self._connection(metastore, read_only, watched)

        return conn, again

    @property
    def connections(self) -> dict[tuple[str, bool], Connection]:
        """The kept connections by (metastore, on its read-only URIs): the hit loop finds a hit's here."""
        return self._conns

    def kept_connection(self, metastore: MetastoreConfig, read_only: bool) -> Connection | None:
        """The connection a call to `metastore` would take now, if there is one (open or not)."""
        return self._conns.get(conn_key(metastore, read_only))

    def replace_connection(self, metastore: MetastoreConfig, read_only: bool, conn: Connection) -> None:
        """`conn` becomes the connection calls to `metastore` take; the one it replaces is closed
        (a hedged read's winner replaces the loser: hedging.py)."""
        with self._lock:
            old = self._conns.get(conn_key(metastore, read_only))
            self._conns[conn_key(metastore, read_only)] = conn
        if old is not None and old is not conn:
            old.close()

    def discard(self, metastore_name: str) -> None:
        """Forget connections to a metastore (after a timed-out call left one in an unknown state)."""
        with self._lock:
            doomed = [k for k in self._conns if k[0] == metastore_name]
            conns = [self._conns.pop(k) for k in doomed]
        for conn in conns:
            conn.close()

    def close(self) -> None:
        if not self._borrowed:
            self.close_connections()

    def close_connections(self) -> int:
        """Close every kept metastore connection; the next call opens one again (set_ugi replayed).
        Returns how many were closed."""
        with self._lock:
            conns, self._conns = list(self._conns.values()), {}
        for conn in conns:
            conn.close()
        return len(conns)


class Leg(Session):
    """One fan-out leg's session (pipeline/fanout.py): `run` calls its metastore on a worker thread
    while the client's session waits for it, at most until a deadline.

    It has the session's identity and feature state but connections of its own: made on the
    session's thread, it takes the session's kept connections to its metastore, and `run` gives
    them back when it ends, unless the fan-out stopped waiting first (`abandon`): then its
    connections are cut (the call ends at once) and closed by the leg itself. So a straggler
    never shares a connection with the session's later calls, and only its own thread closes one.
    """

    def __init__(self, session: Session, metastore_name: str):
        vars(self).update(vars(session))  # identity, feature state, served_stale goes to the session
        self._session = session
        self.note_served_stale = session.note_served_stale
        self._abandoned: str | None = None
        self._lock = threading.Lock()
        with session._lock:
            self._conns = {k: session._conns.pop(k) for k in [k for k in session._conns if k[0] == metastore_name]}

    def run(self, metastore: MetastoreConfig, method: str, args, *, read_only: bool = False):
        """Session.call on this leg's connections; they go back to the session afterwards (unless abandoned)."""
        try:
            return self.call(metastore, method, args, read_only=read_only)
        finally:
            self._end()

    def abandon(self, reason: str) -> None:
        """The fan-out stops waiting (another thread): the call ends now with `reason` (Connection.cut)
        and the leg's connections never go back to the session."""
        with self._session._lock:
            self._abandoned = reason
        with self._lock:
            conns = list(self._conns.values())
        for conn in conns:
            conn.cut(conn.uri or ", ".join(conn.uris), reason)

    def _kept_or_new(self, metastore: MetastoreConfig, read_only: bool, watched: Guard) -> tuple[Connection, bool]:
        if self._abandoned is not None:  # a leg that started after its deadline (the pool was busy)
            raise BackendUnavailable(metastore.name, ", ".join(metastore.uris), self._abandoned, cut=True)
        conn, kept = super()._kept_or_new(metastore, read_only, watched)
        if self._abandoned is not None:  # abandoned while it connected: abandon() may not have seen it
            conn.cut(conn.uri or ", ".join(conn.uris), self._abandoned)
        return conn, kept

    def _end(self) -> None:
        session, closing = self._session, []
        with self._lock:
            conns, self._conns = self._conns, {}
        with session._lock:
            for key, conn in conns.items():
                there = session._conns.get(key)
                if self._abandoned is None and conn.is_open and (there is None or not there.is_open):
                    session._conns[key] = conn
                else:
                    closing.append(conn)
        for conn in closing:
            conn.close()

    def close(self) -> None:
        pass  # run() gives its connections back or closes them


def _several_uris(metastore: MetastoreConfig) -> bool:
    """Whether `metastore` is an HA set, whose URIs the breaker may stall one by one (breaker.py)."""
    return len(metastore.uris) > 1 or len(metastore.read_only_uris) > 1


def conn_key(metastore: MetastoreConfig, read_only: bool) -> tuple[str, bool]:
    """Which of a session's connections a call takes: the metastore's, on its read-only URIs when it
    has them and the call may use them."""
    return metastore.name, read_only and bool(metastore.read_only_uris)


def _without_rules(name: str) -> str | None:
    """No auth-to-local rules: a principal's first component, a bare name as it is."""
    return user_short_name(name, (), None)

"""Backends: each metastore's health, Hive version and call translation.

The registry is shared by all sessions and holds only what is true of a
metastore (up or down, its version, calls it lacks) and its circuit breaker
(breaker.py: metastores that stop answering fail new calls at once).
Connections belong to sessions (see session.py).
"""

from __future__ import annotations

import functools
import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Protocol

from thriftpy2.thrift import TApplicationException

from hmsproxy.config.model import Config, MetastoreConfig
from hmsproxy.protocol import idl
from hmsproxy.protocol._thriftwalk import Gate
from hmsproxy.protocol.relay import CatalogFill
from hmsproxy.protocol.required import unset_required
from hmsproxy.protocol.results import declared_error, declared_fields, put_exception
from hmsproxy.upstream.breaker import Breaker
from hmsproxy.upstream.cache.follower import NotificationFollower
from hmsproxy.upstream.cache.metadata import MetadataCache
from hmsproxy.upstream.hedging import Hedging
from hmsproxy.upstream.kerberos import GssapiSettings, KerberosLogin
from hmsproxy.upstream.slots import BackendSlots
from hmsproxy.upstream.stack import Stack, build
from hmsproxy.upstream.translations import TRANSLATIONS, Translation, Untranslatable, check_catalog
from hmsproxy.upstream.wire import BackendUnavailable, Connection, SaslSettings, ThriftConnection, in_order

log = logging.getLogger(__name__)


#: What fb303 getVersion answers from every Hive metastore before 4 (HMSHandler returns it as a constant).
AMBIGUOUS_VERSION = "3.0"

#: Stacks kept per metastore name outside the config (Backends._stack_of_other): links and tunnels
#: to one target need a handful; the bound only matters to a caller that copies a config per call.
_OTHER_STACKS_PER_NAME = 32


@lru_cache(maxsize=64)
def version_tuple(version: str | None) -> tuple[int, ...]:
    """(4, 0, 0) from "4.0": always three parts, so "4.0" compares equal to 4.0.0, not below it."""
    if not version:
        return ()
    parts = tuple(int(x) for x in re.findall(r"\d+", version)[:3])
    return parts + (0,) * (3 - len(parts)) if parts else ()


#: How a call goes again on a new connection after an error, if it may (Session.connection_for).
Reopen = Callable[[BackendUnavailable], Connection]


def _again(e: BackendUnavailable, reopen: Reopen | None) -> Connection:
    """The new connection a call goes again on after `e`, where the caller allows it (`reopen`:
    Session.connection_for decides, for reads and calls safe to repeat only); else `e` raised."""
    if reopen is None:
        raise e
    return reopen(e)


class ConnectionFactory(Protocol):
    """Makes a (not yet open) connection to one metastore; the seam tests replace (hmsproxy.testing)."""

    def __call__(self, metastore_name: str, uris: tuple[str, ...], *, connect_timeout_s: float, call_timeout_s: float) -> Connection: ...


def thrift_connect(
    metastore_name: str, uris: tuple[str, ...], *, connect_timeout_s: float, call_timeout_s: float, sasl: SaslSettings | None = None
) -> Connection:
    """The default factory: a real Thrift connection (`sasl`: only for a Kerberized metastore, so
    factories that never see one need not take it)."""
    return ThriftConnection(metastore_name, uris, connect_timeout_s=connect_timeout_s, call_timeout_s=call_timeout_s, sasl=sasl)


@dataclass
class BackendState:
    """What the proxy knows about one metastore right now."""

    name: str
    up: bool | None = None  # None: not contacted yet
    last_error: str | None = None
    changed_at: float = field(default_factory=time.time)
    probed_version: str | None = None
    #: Whether it understands Hive 3's "@catalog#db" names; None until known.
    knows_catalogs: bool | None = None
    #: Methods the backend answered with "Invalid method name".
    missing_methods: set[str] = field(default_factory=set)
    #: Methods some Hive version lacks (translations.py) that this backend has answered.
    present_methods: set[str] = field(default_factory=set)
    #: Fan-out answers given without this metastore because it was too slow.
    fanout_timeouts: int = 0
    #: Answers forwarded as bytes by metastore (the Gate's count: Python and the hit loop add to it).
    relayed_counts: dict[str, int] = field(default_factory=dict, repr=False, compare=False)

    @property
    def relayed(self) -> int:
        """Answers forwarded as bytes, undecoded (relay.py)."""
        return self.relayed_counts.get(self.name, 0)


class Backends:
    """Health, versions and translations for every metastore of the current config."""

    def __init__(self, config: Config, connect: ConnectionFactory | None = None):
        self._lock = threading.Lock()
        self._connect: ConnectionFactory = connect or thrift_connect
        self.config = config
        self.states: dict[str, BackendState] = {}
        #: Metastores outside the config that calls go to (remote databases' and tables' targets).
        self.extra: dict[str, MetastoreConfig] = {}
        #: Admission (protocol/_gate.c): the breaker's calls and trips, the capped metastores, the
        #: relayed counts; the Python path and the hit loop in C (downstream/hits.py) both use it.
        self.gate = Gate(self.mark_up)
        #: Sessions enter() every call here; it trips metastores that stop answering.
        self.breaker = Breaker(
            self.probe,
            lambda: self.config.server.probe_after_s,
            on_trip=self.mark_down,
            on_recover=self.mark_up,
            uris=self._uris,
            gate=self.gate,
        )
        #: Each metastore's cap on concurrent calls (slots.py; the limits feature sets them).
        self.slots = BackendSlots(self.gate, on_configure=self.rebuild_stacks)
        #: Metastores with a `cache:`: their metadata caches and notification-log followers.
        self.caches: dict[str, MetadataCache] = {}
        self._followers: dict[str, NotificationFollower] = {}
        self._cached_uris: dict[str, tuple[str, ...]] = {}
        #: Hedged reads for metastores with several URIs and a `hedge:` (hedging.py).
        self.hedging = Hedging(self)
        #: The proxy's Kerberos logins by (principal, keytab): one ticket for every Kerberized metastore.
        self._logins: dict[tuple[str, str], KerberosLogin] = {}
        #: Each configured metastore's policies composed once (stack.py), by name; replaced whole.
        self.stacks: dict[str, Stack] = {}
        #: Stacks of config objects the map does not hold, by name, built on their first call: remote
        #: targets (`extra`), their tunneled and renamed copies (several per name: one per link's rename).
        self._other_stacks: dict[str, list[Stack]] = {}
        self.reconfigure(config)

    def reconfigure(self, config: Config) -> None:
        with self._lock:
            new = {m.name: m for m in config.metastores}
            for m in self.config.metastores:
                if new.get(m.name) != m:  # another metastore now, or none: its trip says nothing about it
                    self.breaker.forget(m.name)
            self.config = config
            self.states = {m.name: self.states.get(m.name) or self._new_state(m.name) for m in config.metastores}
            # The gate knows only what the states still say: a metastore dropped and added again is
            # marked up by its next answer, its relayed count starting afresh as its state does.
            self.gate.up.intersection_update([n for n, st in self.states.items() if st.up is True])
            for name in [n for n in self.gate.relayed_counts if n not in self.states]:
                self.gate.relayed_counts.pop(name, None)
        self._reconfigure_caches(config)

    def _reconfigure_caches(self, config: Config) -> None:
        """Keep each cache whose metastore and settings are unchanged; a changed one starts empty."""
        wanted = {m.name: m for m in config.metastores if m.cache is not None}
        for name in list(self.caches):
            m = wanted.get(name)
            if m is None or self.caches[name].config != m.cache or self._cached_uris.get(name) != m.uris:
                self._drop_cache(name)
        for name, m in wanted.items():
            if name in self.caches:
                continue
            cache = MetadataCache(name, m.cache)
            self.caches[name] = cache
            self._cached_uris[name] = m.uris
            if m.cache.follow_notifications:
                self._followers[name] = NotificationFollower(cache, lambda m=m: self.new_connection(m), m.cache.poll_interval_s).start()
        self.rebuild_stacks()

    def rebuild_stacks(self) -> None:
        """Every metastore's stack built anew from its config, cache and cap (at start, on reload,
        when the caps change): one reference swap, so a call reads either map whole."""
        self.stacks = {m.name: build(self, m) for m in self.config.metastores}
        self._other_stacks = {}

    def stack(self, metastore: MetastoreConfig) -> Stack:
        """The stack calls to `metastore` go through (stack.py)."""
        stack = self.stacks.get(metastore.name)
        if stack is not None and stack.metastore is metastore:
            return stack
        return self._stack_of_other(metastore)

    def _stack_of_other(self, metastore: MetastoreConfig) -> Stack:
        """A stack for a config object the map does not hold: a remote target's (`extra`), a copy of
        one (remotes keep one object per tunnel and per renamed link, so a call finds it by identity;
        two links renaming one target keep two stacks, not one replaced call by call), or an equal
        config from before a reload. Kept until the next rebuild_stacks."""
        configured = self.stacks.get(metastore.name)
        if configured is not None and configured.metastore == metastore:
            return configured
        kept = self._other_stacks.setdefault(metastore.name, [])
        for stack in kept:
            if stack.metastore is metastore:
                return stack
        for stack in kept:
            if stack.metastore == metastore:
                return stack
        stack = build(self, metastore)
        if len(kept) >= _OTHER_STACKS_PER_NAME:  # a caller making a new unequal copy per call: stay bounded
            del kept[0]
        kept.append(stack)
        return stack

    def follower(self, name: str) -> NotificationFollower | None:
        return self._followers.get(name)

    def _drop_cache(self, name: str) -> None:
        self.caches.pop(name, None)
        self._cached_uris.pop(name, None)
        follower = self._followers.pop(name, None)
        if follower is not None:
            follower.stop()

    def metastore(self, name: str) -> MetastoreConfig:
        for m in self.config.metastores:
            if m.name == name:
                return m
        if name in self.extra:
            return self.extra[name]
        raise KeyError(name)

    def state(self, name: str) -> BackendState:
        st = self.states.get(name)
        return st if st is not None else self.states.setdefault(name, self._new_state(name))

    def _new_state(self, name: str) -> BackendState:
        return BackendState(name, relayed_counts=self.gate.relayed_counts)

    def mark_up(self, name: str) -> None:
        st = self.state(name)
        if st.up is not True:
            if st.up is False:
                self.breaker.answered(name)
                log.warning("metastore '%s' is reachable again", name)
            st.up, st.changed_at = True, time.time()
        self.gate.up.add(name)  # its relayed answers are counted without asking again (Gate.relayed)

    def mark_down(self, name: str, reason: str) -> None:
        st = self.state(name)
        st.last_error = reason
        self.gate.up.discard(name)
        if st.up is not False:
            log.warning("metastore '%s' is down: %s", name, reason)
            st.up, st.changed_at = False, time.time()

    def note_timeout(self, name: str, reason: str) -> None:
        """A fan-out gave up waiting for this metastore (it is slow, not necessarily down)."""
        with self._lock:
            st = self.state(name)
            st.last_error = reason
            st.fanout_timeouts += 1

    def version(self, name: str) -> str | None:
        """The Hive version to decide by: configured, or probed. getVersion's "3.0" is said by every
        Hive before 4, so there the catalogs decide: "2.x" without them, "3.x" with them."""
        configured = self.metastore(name).hive_version
        st = self.state(name)
        if configured or st.probed_version != AMBIGUOUS_VERSION:
            return configured or st.probed_version
        if st.knows_catalogs is None:
            return None
        return "3.x" if st.knows_catalogs else "2.x"

    def version_label(self, name: str) -> str | None:
        """The metastore's Hive version for people (`hmsproxy status`): never a guess stated as fact.
        Every Hive before 4 answers getVersion with "3.0", so then whether it has catalogs tells
        3.x from older ones."""
        configured = self.metastore(name).hive_version
        st = self.state(name)
        if configured or st.probed_version != AMBIGUOUS_VERSION:
            return configured or st.probed_version
        said = f'getVersion says "{AMBIGUOUS_VERSION}"'
        if st.knows_catalogs is None:
            return f"unknown ({said}: any Hive before 4 does)"
        return f"3 or later ({said}; it has catalogs)" if st.knows_catalogs else f"before 3, e.g. 2.3 ({said}; it has no catalogs)"

    def translation_for(self, name: str, method: str) -> Translation | None:
        """The translation to use for `method` on metastore `name`, if it lacks the method."""
        tr = TRANSLATIONS.get(method)
        if tr is None:
            return None
        if method in self.state(name).missing_methods:
            return tr
        return tr if tr.needed_on(version_tuple(self.metastore(name).hive_version)) else None

    def new_connection(self, metastore: MetastoreConfig, *, read_only: bool = False) -> Connection:
        return self.connection_to(metastore, metastore.read_only_uris if (read_only and metastore.read_only_uris) else metastore.uris)

    def connection_to(self, metastore: MetastoreConfig, uris: tuple[str, ...]) -> Connection:
        """A (not yet open) connection to `metastore` tried over `uris` in that order."""
        server = self.config.server
        conn = self._connect_to(metastore, tuple(uris), server.connect_timeout_s, server.backend_timeout_s)
        if len(uris) > 1:  # an HA set: its stalled URIs are tried last (breaker.py)
            conn.avoid = functools.partial(self.breaker.stalled, metastore.name)
        return conn

    def _connect_to(self, metastore: MetastoreConfig, uris: tuple[str, ...], connect_timeout_s: float, call_timeout_s: float) -> Connection:
        """A connection by the metastore's own factory (a catalog's: catalogs/connection.py), else a Thrift one."""
        if metastore.connect is not None:
            return metastore.connect(metastore.name, uris, connect_timeout_s=connect_timeout_s, call_timeout_s=call_timeout_s)
        return self._connect(
            metastore.name, uris, connect_timeout_s=connect_timeout_s, call_timeout_s=call_timeout_s, **self.sasl_for(metastore)
        )

    def sasl_for(self, metastore: MetastoreConfig) -> dict[str, SaslSettings]:
        """The `sasl` argument of a connection to `metastore` (the factory's, ThriftConnection's) when
        it is Kerberized; none for the others."""
        identity = self.config.server.sasl
        if metastore.sasl is None or identity is None:  # the config refuses sasl without server.sasl
            return {}
        with self._lock:
            key = (identity.principal, identity.keytab)
            login = self._logins.get(key)
            if login is None:
                login = self._logins[key] = KerberosLogin(identity.principal, identity.keytab, self.config.server.host)
        return {"sasl": GssapiSettings(login, metastore.sasl.principal, metastore.sasl.qop)}

    def _uris(self, name: str) -> tuple[str, ...]:
        """Metastore `name`'s URIs, as the breaker probes them (none when it is no longer configured)."""
        try:
            return tuple(self.metastore(name).uris)
        except KeyError:
            return ()

    def probe(self, name: str, timeout_s: float, uri: str | None = None) -> None:
        """Raise BackendUnavailable unless metastore `name` (or only its `uri`) answers getVersion on a new
        connection within `timeout_s`. An HA set as a whole is asked URI by URI (a hung instance still
        accepts connections: a connection over the set would wait on it): it answers if one answers.

        getVersion is fb303's: a metastore answers it without touching its database, so the
        probe asks whether the metastore takes calls at all, not how fast its queries are.
        """
        uris = tuple(self.metastore(name).uris)
        if uri is not None or len(uris) == 1:
            self._probe_one(name, (uri,) if uri is not None else uris, timeout_s)
            return
        failures = []
        for one in in_order(uris, functools.partial(self.breaker.stalled, name)):  # a stalled URI last: it may still hang
            try:
                self._probe_one(name, (one,), timeout_s)
                return
            except BackendUnavailable as e:
                failures.append(f"{one}: {e.reason}")
        raise BackendUnavailable(name, ", ".join(uris), "; ".join(failures))

    def _probe_one(self, name: str, uris: tuple[str, ...], timeout_s: float) -> None:
        conn = self._connect_to(self.metastore(name), uris, timeout_s, timeout_s)
        try:
            conn.call("getVersion", idl.HmsProxy.getVersion_args())
        except TApplicationException:
            pass  # an answer all the same
        finally:
            conn.close()

    def close(self) -> None:
        self.breaker.close()
        self.hedging.close()
        for name in list(self.caches):
            self._drop_cache(name)

    def _watched(self, conn: Connection, method: str, reopen: Reopen | None, send: Callable[[Connection], Any]):
        """`send(conn)`'s answer, sent once more on a new connection where `reopen` allows (`_again`).
        The metastore is down when a call fails for want of an answer, up when one is answered."""
        try:
            try:
                answer = send(conn)
            except BackendUnavailable as e:  # for a relay: raised before anything reached the client
                answer = send(_again(e, reopen))
        except BackendUnavailable as e:
            if not e.cut:  # cut: the breaker tripped it (already down) or a fan-out stopped waiting (slow, not down)
                self.mark_down(conn.metastore, e.reason)
            raise
        self.mark_up(conn.metastore)
        return answer

    def call(self, conn: Connection, method: str, args, reopen: Reopen | None = None):
        """Call `method` over `conn`, translating for the backend's version; returns the result struct.
        `reopen`: a new connection for a read whose kept connection turns out closed from the other end."""
        return self._watched(conn, method, reopen, lambda c: self._call(c, method, args))

    def send(self, conn: Connection, method: str, args, reopen: Reopen | None = None):
        """call() that leaves the metastore's state alone when it fails: a hedged read's two attempts
        (hedging.py), one of which is cut on purpose; it marks the metastore down when neither answers."""
        try:
            answer = self._call(conn, method, args)
        except BackendUnavailable as e:
            answer = self._call(_again(e, reopen), method, args)
        self.mark_up(conn.metastore)
        return answer

    def _call(self, conn: Connection, method: str, args):
        name = conn.metastore
        tr = self.translation_for(name, method)
        if tr is not None:
            return self._translated(conn, method, args, tr)
        try:
            result = conn.call(method, args)
            if method in TRANSLATIONS:
                self.state(name).present_methods.add(method)
            return result
        except TApplicationException as e:
            tr = TRANSLATIONS.get(method)
            if tr is None or e.type != TApplicationException.UNKNOWN_METHOD:
                raise
            log.info("metastore '%s' lacks %s; translating it from now on", name, method)
            self.state(name).missing_methods.add(method)
            return self._translated(conn, method, args, tr)

    def relay(
        self, conn: Connection, method: str, args, sink, catalog_field: CatalogFill | None, reopen: Reopen | None = None
    ) -> tuple[int, bytes]:
        """Call `method` over `conn` and copy its answer to `sink` (wire.ThriftConnection.relay); `reopen` as for call()."""
        answer = self._watched(conn, method, reopen, lambda c: c.relay(method, args, sink, catalog_field))
        self.relayed(conn.metastore)
        return answer

    def relayed(self, name: str) -> None:
        """Metastore `name` answered a relayed call: it is up (mark_up, unless the gate knows), counted."""
        self.gate.relayed(name)

    @staticmethod
    def _translated(conn: Connection, method: str, args, tr: Translation):
        result = getattr(idl.HmsProxy, method + "_result")()
        try:
            check_catalog(args, declared_fields(result))
            target_args = tr.build(args)
        except Untranslatable as e:
            put_exception(result, e.error)
            return result
        except (AttributeError, TypeError, KeyError) as e:  # a request without the parts the older call needs
            if unset_required(args) is not None:
                raise  # the handler answers the protocol error a metastore would
            message = f"hmsproxy: {method} is answered here with this metastore's older call, and the request lacks what it needs ({e})"
            put_exception(result, idl.hive.MetaException(message=message))
            return result
        target = type(target_args).__name__.removesuffix("_args")
        inner = conn.call(target, target_args)
        error = declared_error(inner)
        if error is not None:
            if not (isinstance(error, idl.hive.NoSuchObjectException) and tr.ignores_missing(args)):
                put_exception(result, error)
        elif 0 in result.thrift_spec:  # the client's call returns something (maybe where the target is void)
            result.success = tr.unwrap(getattr(inner, "success", None), args)
        return result

    def knows_catalogs(self, conn: Connection) -> bool:
        """Whether the metastore understands "@catalog#db" names: Hive 3 and newer do, 2.3 does not.

        getVersion does not tell (2.3 and 3.1 both say "3.0"), so an unconfigured metastore is
        asked get_catalogs once: Hive 3 added catalogs together with that call.
        """
        st = self.state(conn.metastore)
        if st.knows_catalogs is None:
            configured = version_tuple(self.metastore(conn.metastore).hive_version)
            if configured:
                st.knows_catalogs = configured >= (3,)
            else:
                try:
                    conn.call("get_catalogs", idl.HmsProxy.get_catalogs_args())
                    st.knows_catalogs = True
                except TApplicationException as e:
                    if e.type != TApplicationException.UNKNOWN_METHOD:
                        return True  # unsure: send the names as the client wrote them; ask again next time
                    st.knows_catalogs = False
        return st.knows_catalogs

    def probe_version(self, conn: Connection) -> None:
        """Record what the backend reports as its version (fb303 getVersion), once; where that says
        nothing (AMBIGUOUS_VERSION), whether it has catalogs too."""
        st = self.state(conn.metastore)
        if st.probed_version is not None:
            return
        try:
            st.probed_version = conn.call("getVersion", idl.HmsProxy.getVersion_args()).success
        except TApplicationException:
            st.probed_version = "unknown"
        if st.probed_version == AMBIGUOUS_VERSION and not self.metastore(conn.metastore).hive_version:
            self.knows_catalogs(conn)

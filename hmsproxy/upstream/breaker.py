"""The circuit breaker: a metastore that stops answering fails its calls at once, waiting or new.

Sessions register every backend call while it runs (`with breaker.guard(name) as watched:`,
which is `enter`/`leave`: one dict entry, so the hot path stays cheap) and the connection it
uses (`watched.uses(conn)`); a relay shortcut, which has its connection before it starts, calls
`enter(name, conn)` and `leave` itself (no guard object on the path every repeated read takes). One watchdog thread per Backends looks at those calls a few times a
second. When a call has had no answer for `server.probe-after-s`, its metastore is probed on a
new connection that must answer within the same time. The probe decides, not the slow call:

- it answers: the metastore is slow but alive, nothing changes and no call is cut (it is probed
  again at most every probe-after-s while calls stay unanswered);
- it does not: the metastore is *tripped*: new calls fail at once with BackendUnavailable
  naming it, its URI and since when it has not answered, and so do the calls already waiting on
  it: their connections are cut (Connection.cut shuts the socket down, so the blocked read
  returns and the call raises the same error) and never used again. With the defaults
  (probe-after-s 3) the first call fails about 6 s after the metastore stopped answering. The
  watchdog keeps probing it (half-open), and the first answer, to a probe or to any call, lets
  calls through again.

A metastore with several URIs (an HA set) is probed URI by URI, since a hung instance still
accepts connections (a probe over the whole set would hang on it and never ask the next): the URI
the waiting call's connection uses first. It answers: nothing changes. It does not, but another
URI of the set does: only that URI is *stalled*: the calls waiting on it are cut with an error
naming it (session.py lets reads and calls safe to repeat go again on a new connection; a write
gets the error, it is never sent twice), new connections try it last (wire.in_order), and it is
probed again every RETRY_S until it answers. The metastore trips, as above, only when no URI
answers; `hmsproxy_backend_up` stays per metastore.

The watchdog starts with the first call and ends after a while without calls or trips, so an
idle or closed Backends has no thread.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from hmsproxy.protocol._thriftwalk import Gate, InFlight
from hmsproxy.upstream.wire import BackendUnavailable, Connection

log = logging.getLogger(__name__)

#: A tripped metastore is probed again this long after its last probe started (at least).
RETRY_S = 0.5
#: The watchdog looks at calls this often (or 4 times per probe-after-s, if that is shorter).
TICK_S = 0.25
#: The watchdog thread ends after this long with nothing in flight and nothing tripped.
IDLE_EXIT_S = 10.0


@dataclass(frozen=True)
class Trip:
    """Why a metastore's calls fail at once."""

    uri: str
    #: Wall-clock time of the oldest call it left unanswered.
    since: float
    reason: str

    def error(self, metastore: str) -> BackendUnavailable:
        return BackendUnavailable(metastore, self.uri, self.reason)


def _when(since: float) -> str:
    return datetime.fromtimestamp(since).astimezone().isoformat(timespec="seconds")


# InFlight (protocol/_gate.c): one backend call now in flight: its metastore, when it started
# (monotonic), the connection it uses (None until it has one) and whether a trip cut it.
__all__ = ["Breaker", "Guard", "InFlight", "Trip"]


def _spawn(name: str, fn: Callable[[], None]) -> None:
    threading.Thread(target=fn, daemon=True, name=f"hmsproxy-probe-{name}").start()


class Breaker:
    """Watches in-flight calls, probes metastores that leave them unanswered, keeps which are tripped.

    `probe(name, timeout_s)` raises BackendUnavailable unless metastore `name` answers in time
    (KeyError: it is no longer configured), `probe(name, timeout_s, uri)` likewise for one of its
    URIs; `uris(name)` are its URIs (one, or none known: it is probed as a whole, as ever);
    `probe_after_s()` is read on every tick, so reloads apply. `on_trip(name, reason)` /
    `on_recover(name)` tell the registry (Backends.mark_down/up).
    `watch=False`, a fake `clock` and a synchronous `spawn` let tests drive `tick()` themselves;
    `wall_clock` dates a trip, and `wait(seconds)` is the watchdog's pause between ticks (default:
    an Event that close() sets), so a test can step the watchdog's time instead of sleeping.
    `gate`: where calls are admitted (protocol/_gate.c), shared with the hit loop in C
    (Backends.gate); its own by default.
    """

    def __init__(
        self,
        probe: Callable[[str, float], None],
        probe_after_s: Callable[[], float],
        *,
        on_trip: Callable[[str, str], None],
        on_recover: Callable[[str], None],
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        wait: Callable[[float], object] | None = None,
        spawn: Callable[[str, Callable[[], None]], None] = _spawn,
        watch: bool = True,
        uris: Callable[[str], tuple[str, ...]] = lambda name: (),
        gate: Gate | None = None,
    ):
        self._uris = uris
        self._probe = probe
        self._probe_after_s = probe_after_s
        self._on_trip = on_trip
        self._on_recover = on_recover
        self._clock = clock
        self._wall_clock = wall_clock
        self._spawn = spawn
        self._watch = watch
        #: Admits calls: the Python path through enter(), the hit loop in C directly.
        self.gate = gate if gate is not None else Gate(lambda name: None)
        #: token -> every backend call now in flight; metastore -> why its calls are refused (the gate's).
        self._calls: dict[int, InFlight] = self.gate.calls
        self._tripped: dict[str, Trip] = self.gate.tripped
        #: (metastore, uri) -> why that URI of an HA set is passed over while its others answer.
        self._stalled: dict[tuple[str, str], Trip] = {}
        #: What is probed: (metastore, None) the whole metastore, (metastore, uri) one URI of a set.
        self._probing: set[tuple[str, str | None]] = set()
        #: -> monotonic start of its last probe (probes are rate-limited by it).
        self._probed: dict[tuple[str, str | None], float] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._wait = wait or self._wake.wait
        self._closed = False

    # -- the hot path: every backend call ---------------------------------------------------

    def enter(self, metastore: str, conn: Connection | None = None) -> int:
        """Register a call about to go to `metastore`, over `conn` if it has it already (as `uses`);
        raises BackendUnavailable at once while it is tripped."""
        token = self.gate.enter(metastore, conn, self._clock())  # the trip check and the registration, as one step
        if token.__class__ is not int:
            raise token.error(metastore)
        if not self.gate.watching:  # read after the call is registered: see _watchdog's exit
            self._start()
        return token

    @property
    def clock(self) -> Callable[[], float]:
        return self._clock

    def uses(self, token: int, conn: Connection) -> None:
        """The call `token` goes over `conn` (it may call again on a new one): a trip cuts it there.
        Raises BackendUnavailable if the metastore was tripped since the call entered."""
        call = self._calls[token]
        if call.conn is not conn:
            call.cut = False  # a cut connection was closed by this call's thread when it raised
        call.conn = conn
        # Read after conn is set, as _cut_calls sets the trip before it reads conn: one of the two
        # sees the other, so no call slips through a trip uncut.
        trip = self._tripped.get(call.metastore)
        if trip is not None:
            raise trip.error(call.metastore)

    def leave(self, token: int) -> None:
        call = self.gate.leave(token)
        if call is not None and call.cut and call.conn is not None:
            # A call cut as its answer came leaves a shut-down socket behind: its own thread, the
            # connection's owner, closes it so nothing uses it again.
            call.conn.close()

    def guard(self, metastore: str) -> Guard:
        """``with breaker.guard(name) as watched:`` around one backend call: `enter` before it, `leave`
        after, whatever happens (a tripped metastore raises at ``with``, before the call);
        `watched.uses(conn)` once it has its connection."""
        return Guard(self, metastore)

    # -- state ----------------------------------------------------------------------------

    @property
    def watching(self) -> bool:
        """Whether the watchdog thread runs (it starts with the first call, ends when idle or closed)."""
        return self.gate.watching

    def trip(self, metastore: str) -> Trip | None:
        """Why `metastore` is tripped, or None."""
        return self._tripped.get(metastore)

    def stalled(self, metastore: str, uri: str | None) -> bool:
        """Whether `uri` of HA set `metastore` is passed over (its others answer, it does not)."""
        return (metastore, uri) in self._stalled

    def answered(self, metastore: str) -> bool:
        """Any answer from `metastore` (a late call's too) proves it alive: let calls through again.

        True if it was tripped."""
        if metastore not in self._tripped:
            return False
        with self._lock:
            return self._tripped.pop(metastore, None) is not None

    def forget(self, metastore: str) -> None:
        """Drop what is known of `metastore` (its config changed or it was removed)."""
        with self._lock:
            self._tripped.pop(metastore, None)
            for known in (self._probed, self._stalled):
                for key in [k for k in known if k[0] == metastore]:
                    known.pop(key, None)

    # -- the watchdog -----------------------------------------------------------------------

    def tick(self) -> None:
        """One look at the calls in flight: start the probes that are due."""
        now = self._clock()
        after = self._probe_after_s()
        oldest: dict[tuple[str, str | None], float] = {}
        for call in self._calls.copy().values():  # copy(): one C call, safe while others add and remove
            key = (call.metastore, self._waits_on(call))
            if call.started < oldest.get(key, now):
                oldest[key] = call.started
        due = []
        with self._lock:
            for key, started in oldest.items():
                if now - started >= after and key[0] not in self._tripped and now - self._probed.get(key, -math.inf) >= after:
                    due.append((key, started))
            retried = [(m, None) for m in self._tripped] + list(self._stalled)
            due += [(key, None) for key in retried if now - self._probed.get(key, -math.inf) >= RETRY_S]
            due = [(key, s) for key, s in due if key not in self._probing]
            for key, _ in due:
                self._probing.add(key)
                self._probed[key] = now
        for key, started in due:
            self._spawn(key[0], lambda k=key, s=started: self._run_probe(k, s, after))

    def _waits_on(self, call: InFlight) -> str | None:
        """The URI of an HA set that `call` waits on (probed alone), or None: the metastore is probed as a whole."""
        uri = getattr(call.conn, "uri", None)
        return uri if uri is not None and len(self._uris(call.metastore)) > 1 else None

    def _ask(self, metastore: str, uri: str | None, timeout_s: float) -> BackendUnavailable | None:
        """The probe's failure, or None when it was answered (KeyError, other exceptions: raised)."""
        try:
            if uri is None:
                self._probe(metastore, timeout_s)
            else:
                self._probe(metastore, timeout_s, uri)
        except BackendUnavailable as e:
            return e
        return None

    def _run_probe(self, key: tuple[str, str | None], oldest_call: float | None, timeout_s: float) -> None:
        metastore, uri = key
        try:
            failure = self._ask(metastore, uri, timeout_s)
            others = None
            if failure is not None and uri is not None and oldest_call is not None:
                others = self._other_answering(metastore, uri, timeout_s)
        except KeyError:  # no longer configured: nothing to protect
            self.forget(metastore)
            return
        except Exception:  # a bug in the probe says nothing about the metastore
            log.exception("probing metastore '%s' failed", metastore)
            return
        finally:
            with self._lock:
                self._probing.discard(key)
        if uri is not None:
            self._uri_probed(metastore, uri, oldest_call, failure, others)
            return
        if failure is None:
            if self.answered(metastore):
                self._on_recover(metastore)
            return
        if oldest_call is None or metastore in self._tripped:
            return  # still tripped: the next probe follows RETRY_S after this one started
        self._trip(metastore, oldest_call, failure)

    def _other_answering(self, metastore: str, stalled: str, timeout_s: float) -> str | None:
        """Another URI of the set that answers a probe now, if one does (asked in the set's order)."""
        for uri in self._uris(metastore):
            if uri != stalled and self._ask(metastore, uri, timeout_s) is None:
                return uri
        return None

    def _uri_probed(self, metastore: str, uri: str, oldest_call: float | None, failure, answering: str | None) -> None:
        """What a probe of one URI of an HA set decides (the module doc)."""
        key = (metastore, uri)
        if failure is None:
            with self._lock:
                recovered = self._stalled.pop(key, None) is not None
            if recovered:
                log.warning("metastore '%s': %s answers again; it takes calls again", metastore, uri)
            if self.answered(metastore):  # it tripped while this URI was stalled: the set answers again
                self._on_recover(metastore)
            return
        if oldest_call is None:  # a stalled URI still silent: cut what still went to it (it connected as it stalled)
            trip = self._stalled.get(key)
            if trip is not None:
                self._cut_calls(metastore, trip, uri)
            return
        if metastore in self._tripped or key in self._stalled:
            return
        if answering is None:  # no URI of the set answers: the metastore as a whole
            self._trip(metastore, oldest_call, failure)
            return
        waited = self._clock() - oldest_call
        since = self._wall_clock() - waited
        reason = (
            f"{uri} not answering since {_when(since)} (a call had no answer for {waited:.1f} s, and a probe of "
            f"that URI failed: {failure.reason}; {answering} answered one); calls go to the set's other URIs until it answers again"
        )
        trip = Trip(uri, since, reason)
        with self._lock:
            self._stalled[key] = trip
        cut = self._cut_calls(metastore, trip, uri)
        log.warning("metastore '%s': %s (%d waiting call%s cut)", metastore, reason, cut, "s" if cut != 1 else "")
        self._start()  # keep probing it even when no call is in flight

    def _trip(self, metastore: str, oldest_call: float, failure: BackendUnavailable) -> None:
        waited = self._clock() - oldest_call
        since = self._wall_clock() - waited
        reason = (
            f"not answering since {_when(since)} "
            f"(a call had no answer for {waited:.1f} s, and a probe on a new connection failed: {failure.reason}); "
            f"its calls fail at once until it answers again"
        )
        trip = Trip(failure.uri, since, reason)
        with self._lock:
            self._tripped[metastore] = trip
        cut = self._cut_calls(metastore, trip)
        self._on_trip(metastore, f"{reason} ({cut} waiting call{'s' if cut != 1 else ''} failed)" if cut else reason)
        self._start()  # keep probing it even when no call is in flight

    def _cut_calls(self, metastore: str, trip: Trip, uri: str | None = None) -> int:
        """Fail the calls waiting on a tripped metastore (or on its stalled `uri`): each one's connection
        is cut, so its thread raises the trip's error (wire.Connection.cut). How many were cut."""
        cut = 0
        for call in self._calls.copy().values():
            conn = call.conn  # read after the trip is set: see uses()
            if call.metastore == metastore and conn is not None and (uri is None or conn.uri == uri):
                call.cut = True
                conn.cut(trip.uri, trip.reason)
                cut += 1
        return cut

    def _start(self) -> None:
        if not self._watch:
            return
        gate = self.gate
        with self._lock:
            if gate.watching or self._closed:
                return
            gate.watching = True
        threading.Thread(target=self._watchdog, daemon=True, name="hmsproxy-breaker").start()

    def _watchdog(self) -> None:
        idle_since = self._clock()
        while not self._closed:
            self._wait(min(TICK_S, self._probe_after_s() / 4))
            if self._closed:
                break
            try:
                self.tick()
            except Exception:  # keep watching whatever one tick ran into
                log.exception("breaker watchdog tick failed")
            if self._calls or self._tripped or self._stalled or self._probing:
                idle_since = self._clock()
            elif self._clock() - idle_since > IDLE_EXIT_S:
                with self._lock:
                    # enter() registers its call before it reads `watching`, so a call registered
                    # after this check finds it False and starts a new watchdog (the hit loop
                    # leaves such a call to Python).
                    if not (self._calls or self._tripped or self._stalled or self._probing):
                        self.gate.watching = False
                        return
        with self._lock:
            self.gate.watching = False

    def close(self) -> None:
        """Stop the watchdog (probes under way end by their own deadline)."""
        self._closed = True
        self._wake.set()


class Guard:
    """One call's registration with the breaker, as a context manager (`Breaker.guard`). A plain
    class, not contextlib's generator: it runs on every backend call."""

    __slots__ = ("_breaker", "_metastore", "_token")

    def __init__(self, breaker: Breaker, metastore: str):
        self._breaker = breaker
        self._metastore = metastore

    def __enter__(self) -> Guard:
        self._token = self._breaker.enter(self._metastore)
        return self

    def uses(self, conn: Connection) -> Connection:
        """Register `conn` as the connection this call goes over (Breaker.uses); returns it."""
        self._breaker.uses(self._token, conn)
        return conn

    def __exit__(self, *exc) -> None:
        self._breaker.leave(self._token)

"""Hedged reads: a read to a metastore with several URIs (an HA set) that is not answered within a
threshold is also sent to the next URI on a second connection; the first answer wins.

Which calls: reads (`MethodSpec.reads`) of a metastore whose config has `hedge:` and two URIs at
least (its read-only URIs when the call uses those). Never writes, never one-way calls, never the
transaction manager's calls (`TRANSACTION_CALLS`: a lock or heartbeat sent twice is two).

The threshold is a percentile (`hedge.percentile`, p95 by default) of the metastore's recent read
latencies (`LatencyWindow`, the last `WINDOW` answers), bounded by `min-ms` and `max-ms`; `max-ms`
until `MIN_SAMPLES` answers are known.

How a hedged read runs (`Hedging.call`), without a thread of its own in the common case:
the calling thread sends the read on the session's kept connection as always (the *primary*),
after putting its deadline in `_Timer`'s heap. An answer before the deadline: done, the entry is
dropped lazily. At the deadline the timer thread starts a *hedge* thread: a new connection to the
next URI (set_ugi as the session's), the same read (none when the next URIs are all stalled:
breaker.py). Whichever answers first wins, under the
race's lock. The loser's connection is never used again: a losing primary is shut down from the
hedge's thread (`ThriftConnection.abort`: the caller's blocked receive returns at once), taken out
of the session and closed by the caller, and the hedge's connection becomes the session's
connection for that metastore (later reads go to the instance that answered); a losing hedge is
shut down by the caller and closed by its thread. A stale answer can never be read by a later call.

Where hedging does not reach: the relay (pipeline/fastpath.py) declines a hedged metastore's
reads, because a relay writes the answer to the client's socket while it reads it and a loser
must not have written anything; they take the full path (decoded, then encoded for the client).
The metadata cache (cache/) answers what it keeps before a read gets here; its misses are hedged.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hmsproxy.config.model import HedgeConfig, MetastoreConfig
from hmsproxy.protocol import idl
from hmsproxy.routing.methods import METHOD_SPECS, TRANSACTION_CALLS
from hmsproxy.upstream.wire import BackendUnavailable, Connection

if TYPE_CHECKING:
    from hmsproxy.upstream.backends import Backends, Reopen
    from hmsproxy.upstream.breaker import Guard
    from hmsproxy.upstream.session import Session

log = logging.getLogger(__name__)

#: Recent read latencies kept per metastore.
WINDOW = 256
#: Below this many, the threshold is max-ms (too few answers to say what is slow).
MIN_SAMPLES = 20
#: The percentile is computed again after this many new answers (a sort of WINDOW numbers).
RECOMPUTE_EVERY = 16
#: How often a winning hedge tries again to shut down a primary that was still connecting.
ABORT_RETRY_S = 0.01


@dataclass
class HedgeStats:
    """What hmsproxy_hedged_total and hmsproxy_hedge_wins_total report for one metastore."""

    hedged: int = 0
    primary_wins: int = 0
    hedge_wins: int = 0
    #: The threshold last used, in seconds (a gauge: what "slow" means for this metastore now).
    threshold_s: float | None = None


class LatencyWindow:
    """The last WINDOW read latencies of one metastore, and their percentile (recomputed now and then)."""

    def __init__(self, size: int = WINDOW):
        self._samples: deque[float] = deque(maxlen=size)
        self._added = 0
        self._percentile: float | None = None
        self._cached: float | None = None

    def add(self, seconds: float) -> None:
        self._samples.append(seconds)
        self._added += 1
        if self._added % RECOMPUTE_EVERY == 0:
            self._cached = None

    def threshold_s(self, hedge: HedgeConfig) -> float:
        """The hedge deadline: hedge.percentile of the window, within [min_ms, max_ms]."""
        low, high = hedge.min_ms / 1000, hedge.max_ms / 1000
        if len(self._samples) < MIN_SAMPLES:
            return high
        if self._cached is None or self._percentile != hedge.percentile:
            ordered = sorted(self._samples)
            index = min(len(ordered) - 1, int(len(ordered) * hedge.percentile / 100))
            self._cached, self._percentile = ordered[index], hedge.percentile
        return min(high, max(low, self._cached))


class _Timer:
    """One thread that starts each race's hedge at its deadline. A read's deadline costs a heap push;
    the thread is woken only when a deadline is earlier than every one it waits for (deadlines mostly
    grow), and when it wakes it drops every finished race at the heap's head, so it sleeps until the
    first race still running: about one wake-up per threshold, not one per read."""

    def __init__(self):
        self._heap: list[tuple[float, int, _Race]] = []
        self._cond = threading.Condition(threading.Lock())
        self._seq = itertools.count()
        self._thread: threading.Thread | None = None
        self._closed = False

    def at(self, deadline: float, race: _Race) -> None:
        with self._cond:
            earliest = not self._heap or deadline < self._heap[0][0]
            heapq.heappush(self._heap, (deadline, next(self._seq), race))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="hmsproxy-hedge-timer", daemon=True)
                self._thread.start()
            elif earliest:
                self._cond.notify()

    def _run(self) -> None:
        heap = self._heap
        while True:
            due = []
            with self._cond:
                while not self._closed:
                    now = time.monotonic()
                    while heap and (heap[0][2].primary_done or heap[0][0] <= now):
                        race = heapq.heappop(heap)[2]
                        if not race.primary_done:
                            due.append(race)
                    if due:
                        break
                    self._cond.wait(heap[0][0] - now if heap else None)
                if self._closed:
                    return
            for race in due:
                try:
                    race.start_hedge()
                except Exception:  # one failure must not stop every later hedge
                    log.exception("starting a hedged read failed")

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._heap.clear()
            self._cond.notify()


class Hedging:
    """Hedged reads for every metastore of one Backends (its latency windows, counters and timer)."""

    def __init__(self, backends: Backends):
        self.backends = backends
        self.windows: dict[str, LatencyWindow] = {}
        self.stats: dict[str, HedgeStats] = {}
        self._lock = threading.Lock()
        self._timer = _Timer()

    def applies(self, metastore: MetastoreConfig, method: str, read_only: bool) -> bool:
        """Whether `method` on `metastore` is hedged (the module doc's "Which calls")."""
        if metastore.hedge is None or len(_uris(metastore, read_only)) < 2:
            return False
        spec = METHOD_SPECS.get(method)
        return spec is not None and spec.reads and not spec.oneway and method not in TRANSACTION_CALLS

    def _window(self, name: str) -> LatencyWindow:
        window = self.windows.get(name)
        return window if window is not None else self.windows.setdefault(name, LatencyWindow())

    def _stats(self, name: str) -> HedgeStats:
        stats = self.stats.get(name)
        return stats if stats is not None else self.stats.setdefault(name, HedgeStats())

    def call(self, session: Session, metastore: MetastoreConfig, method: str, args, read_only: bool, watched: Guard):
        """`method`'s `<method>_result` from whichever of the primary and (after the threshold) the hedge
        answers first. Raises the primary's BackendUnavailable when neither answers."""
        name = metastore.name
        window, stats = self._window(name), self._stats(name)
        threshold = window.threshold_s(metastore.hedge)
        stats.threshold_s = threshold
        race = _Race(self, session, metastore, method, args, read_only)
        started = time.monotonic()
        self._timer.at(started + threshold, race)
        result = error = None
        try:
            conn, reopen = session.connection_for(metastore, method, read_only, watched)
            result = self.backends.send(conn, method, args, race.unless_lost(reopen))
        except BackendUnavailable as e:
            error = e
        except BaseException:  # an answer all the same (TApplicationException), or not the network's fault
            race.primary_finished(True)
            race.cut_hedge()
            raise
        winner = race.primary_finished(error is None)
        if winner == "primary":
            window.add(time.monotonic() - started)
            if race.hedge_started:
                self.count(name, "primary_wins")
                race.cut_hedge()
            return result
        if race.hedge_started:
            race.hedge_done.wait()
        if race.winner == "hedge":
            session.replace_connection(metastore, read_only, race.hedge_conn)
            return race.hedge_result
        # Neither answered (a primary that did is the winner): the metastore is down as far as this read can tell.
        self.backends.mark_down(name, error.reason)
        raise error

    def count(self, name: str, what: str) -> None:
        """One more of HedgeStats' `what` (several threads count: callers, the timer, hedges)."""
        stats = self._stats(name)
        with self._lock:
            setattr(stats, what, getattr(stats, what) + 1)

    def close(self) -> None:
        self._timer.close()


class _Race:
    """One hedged read: which side won, and the hedge's connection and answer."""

    def __init__(self, hedging: Hedging, session: Session, metastore: MetastoreConfig, method: str, args, read_only: bool):
        self.hedging, self.session, self.metastore = hedging, session, metastore
        self.method, self.args, self.read_only = method, args, read_only
        self.lock = threading.Lock()
        self.winner: str | None = None  # "primary" or "hedge"
        self.primary_done = False
        self.hedge_started = False
        self.hedge_done: threading.Event | None = None  # made when the hedge starts (most reads never hedge)
        self.hedge_conn: Connection | None = None
        self.hedge_result = None

    def unless_lost(self, reopen: Reopen | None) -> Reopen | None:
        """`reopen` (a read's second try on a new connection: Session.connection_for's) unless the hedge has won
        meanwhile: a primary the hedge cut looks like a connection the metastore closed."""
        if reopen is None:
            return None

        def again(e: BackendUnavailable) -> Connection:
            if self.winner is not None:
                raise BackendUnavailable(self.metastore.name, "-", "the hedged read's other answer came first")
            return reopen(e)

        return again

    def primary_finished(self, answered: bool) -> str | None:
        """The caller is done with its connection; the winner (the primary if it answered first)."""
        with self.lock:
            self.primary_done = True
            if answered and self.winner is None:
                self.winner = "primary"
            return self.winner

    def start_hedge(self) -> None:
        """At the deadline (the timer's thread): start the hedge unless the primary has finished."""
        with self.lock:
            if self.primary_done:
                return
            self.hedge_started, self.hedge_done = True, threading.Event()
        self.hedging.count(self.metastore.name, "hedged")
        threading.Thread(target=self._hedge, name=f"hmsproxy-hedge-{self.metastore.name}", daemon=True).start()

    def _hedge(self) -> None:
        backends, session, name = self.hedging.backends, self.session, self.metastore.name
        uris = _uris(self.metastore, self.read_only)
        conn = result = None
        try:
            primary = session.kept_connection(self.metastore, self.read_only)
            others = _next_uris(uris, primary.uri if primary is not None else None)
            if all(backends.breaker.stalled(name, uri) for uri in others):  # hung: the hedge would only wait there too
                raise BackendUnavailable(name, ", ".join(others), "stalled (the circuit breaker's probe found it hung)")
            conn = self.hedge_conn = backends.connection_to(self.metastore, others)
            if self.winner is None:
                conn.open()
            if session.user is not None and self.winner is None:
                backends.send(conn, "set_ugi", idl.HmsProxy.set_ugi_args(user_name=session.user, group_names=session.groups))
            if self.winner is None:
                started = time.monotonic()
                result = backends.send(conn, self.method, self.args)
                self.hedging._window(name).add(time.monotonic() - started)
        except Exception as e:  # lost, cut by the caller, or the next URI failed too: the primary's outcome stands
            log.info("hedged %s to metastore '%s' got no answer: %s", self.method, name, e)
        won = False
        try:
            with self.lock:
                won = result is not None and self.winner is None
                if won:
                    self.winner, self.hedge_result = "hedge", result
            if won:
                conn.uris = tuple(uris)  # the session's connection now: in the metastore's order (only opening used it)
                self.hedging.count(name, "hedge_wins")
            elif conn is not None:
                conn.close()
        finally:
            self.hedge_done.set()  # the caller may wait for it: whatever happened above
        if won:
            self._cut_primary()

    def _cut_primary(self) -> None:
        """Shut the primary's connection down until its caller has stopped waiting on it (it may still be
        connecting when the hedge wins; a connection not yet open has no socket to shut)."""
        deadline = time.monotonic() + self.hedging.backends.config.server.backend_timeout_s
        while not self.primary_done and time.monotonic() < deadline:
            conn = self.session.kept_connection(self.metastore, self.read_only)
            if conn is not None and conn is not self.hedge_conn:
                _abort(conn)
            time.sleep(ABORT_RETRY_S)

    def cut_hedge(self) -> None:
        """The primary won: a hedge still waiting for its answer stops now (its thread closes the connection)."""
        conn = self.hedge_conn
        if conn is not None and self.hedge_done is not None and not self.hedge_done.is_set():
            _abort(conn)


def _abort(conn: Connection) -> None:
    abort = getattr(conn, "abort", None)  # ThriftConnection's; fakes answer at once and need none
    if abort is not None:
        abort()


def _uris(metastore: MetastoreConfig, read_only: bool) -> tuple[str, ...]:
    """The URIs a session's call uses (session.conn_key's choice)."""
    return tuple(metastore.read_only_uris if (read_only and metastore.read_only_uris) else metastore.uris)


def _next_uris(uris: tuple[str, ...], primary_uri: str | None) -> tuple[str, ...]:
    """The URIs after the primary's (wrapping round), the primary's own left out: the hedge asks another instance.
    Before the primary connected (None) it is on the first URI."""
    at = uris.index(primary_uri) if primary_uri in uris else 0
    return uris[at + 1 :] + uris[:at]

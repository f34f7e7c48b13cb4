"""Following a metastore's notification log, so writes made around the proxy (Hive CLI or Spark
pointed straight at the metastore, other proxies) drop what they changed from the cache.

One thread per cached metastore, on its own connection: every poll it asks for the current
event id and reads the events after the last one seen. The log can lose events (it is cleaned
after a while; a metastore restarted on a new database starts again): when the first event read
is not the one expected, or the current id went backwards, the whole cache is dropped. A
metastore that records no events (no DbNotificationListener) just never moves its id: its
entries then live until their TTL.
"""

from __future__ import annotations

import logging
import threading

from thriftpy2.thrift import TApplicationException

from hmsproxy.protocol import idl
from hmsproxy.upstream.cache.metadata import MetadataCache
from hmsproxy.upstream.cache.rules import EVERYTHING, event_scope
from hmsproxy.upstream.wire import BackendUnavailable, Connection

log = logging.getLogger(__name__)

#: Events read per call.
BATCH = 500


class NotificationFollower:
    def __init__(self, cache: MetadataCache, connect, interval_s: float):
        self.cache = cache
        self._connect = connect  # () -> a new Connection to the metastore
        self._interval = interval_s
        self._stop = threading.Event()
        self._conn: Connection | None = None
        self.last_event: int | None = None
        #: False once the metastore said it has no notification calls.
        self.supported = True
        self._thread = threading.Thread(target=self._run, name=f"hmsproxy-cache-follow-{cache.metastore}", daemon=True)

    def start(self) -> NotificationFollower:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._close()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.poll()
            except BackendUnavailable as e:  # down for now: entries live by their TTL, the breaker reports it
                log.debug("cache of '%s': notification log unreachable: %s", self.cache.metastore, e)
                self._close()
            except TApplicationException as e:
                if e.type == TApplicationException.UNKNOWN_METHOD:
                    log.warning("metastore '%s' has no notification log calls: its cache relies on the TTL", self.cache.metastore)
                    self.supported = False
                    return
                log.warning("cache of '%s': reading the notification log failed: %s", self.cache.metastore, e)
            except Exception:  # never let the thread die silently: the cache would go stale
                log.exception("cache of '%s': following the notification log failed", self.cache.metastore)
                self._close()
            self._stop.wait(self._interval)

    def poll(self) -> int:
        """Read what happened since the last poll; returns how many events were applied."""
        conn = self._connection()
        current = conn.call("get_current_notificationEventId", idl.HmsProxy.get_current_notificationEventId_args()).success.eventId
        if self.last_event is None:  # the log before the cache existed says nothing new
            self.last_event = current
            return 0
        if current < self.last_event:
            self._gap(f"the event id went back from {self.last_event} to {current}")
            self.last_event = current
            return 0
        applied = 0
        while self.last_event < current:
            request = idl.hive.NotificationEventRequest(lastEvent=self.last_event, maxEvents=BATCH)
            events = conn.call("get_next_notification", idl.HmsProxy.get_next_notification_args(rqst=request)).success.events or []
            if not events or events[0].eventId != self.last_event + 1:
                self._gap(f"expected event {self.last_event + 1}, the log starts at {events[0].eventId if events else 'nothing'}")
                self.last_event = current
                return applied
            for e in events:
                self.cache.invalidate(event_scope(e.dbName, e.tableName), "notification")
            self.last_event = events[-1].eventId
            applied += len(events)
        return applied

    def _gap(self, why: str) -> None:
        log.warning("cache of '%s': events were missed (%s): dropping every entry", self.cache.metastore, why)
        self.cache.invalidate(EVERYTHING, "gap")

    def _connection(self) -> Connection:
        if self._conn is None or not self._conn.is_open:
            self._conn = self._connect()
            self._conn.open()
        return self._conn

    def _close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()

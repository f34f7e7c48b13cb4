"""A follower of a metastore's notification log that does what Apache Impala's event processor does
(MetastoreEventsProcessor, from its source): ask the current event id; when it moved, read the
events after the last one synced with `get_next_notification` in batches of 1,000 up to it; check
that asking for `current - 1` with at most one event gives back `current` (Impala's sanity check
that the log it follows is the one whose id it read); a batch that comes back empty ends the poll,
the rest is read at the next one. It also holds the log to what Hive's client
holds it to: each id is the previous plus one, and the current id never goes back.
"""

from __future__ import annotations

from hmsproxy.protocol import idl

hive = idl.hive

#: Impala's EVENTS_BATCH_SIZE_PER_RPC.
BATCH = 1000
#: Upper bound of batches one poll reads (a test's loop is bounded).
MAX_BATCHES = 50


class FollowerError(AssertionError):
    """The log broke a promise a real follower relies on."""


class ImpalaStyleFollower:
    def __init__(self, client, last_synced: int | None = None):
        self.client = client
        #: The last event id synced; None until the first poll (Impala starts at the current id).
        self.last_synced = last_synced
        self.seen: list = []

    def poll(self) -> list:
        """The new events since the last poll (also added to `seen`)."""
        current = self.client.get_current_notificationEventId().eventId
        if self.last_synced is None:
            self.last_synced = current
            return []
        if current < self.last_synced:
            raise FollowerError(f"the current event id went back from {self.last_synced} to {current}")
        if current == self.last_synced:
            return []
        self._check_current(current)
        new = []
        for _ in range(MAX_BATCHES):
            if self.last_synced >= current:
                break
            request = hive.NotificationEventRequest(lastEvent=self.last_synced, maxEvents=BATCH)
            batch = self.client.get_next_notification(request).events
            if not batch:  # not yet available (Impala tries again at its next poll)
                break
            for event in batch:
                if event.eventId != self.last_synced + 1:
                    raise FollowerError(f"Notification events are missing: expected {self.last_synced + 1}, got {event.eventId}")
                self.last_synced = event.eventId
                new.append(event)
        else:
            raise FollowerError(f"more than {MAX_BATCHES} batches of events in one poll")
        self.seen += new
        return new

    def _check_current(self, current: int) -> None:
        request = hive.NotificationEventRequest(lastEvent=current - 1, maxEvents=1)
        events = self.client.get_next_notification(request).events
        if [e.eventId for e in events] != [current]:
            raise FollowerError(f"asked for the event after {current - 1}, got {[e.eventId for e in events]}, not {current}")

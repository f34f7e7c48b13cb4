"""The notifications feature: with `notifications.federate`, the proxy answers the notification log
calls from one merged log of every metastore (merging.py, serving.py), with Hive 4's filters and
counts (filters.py, labelling.py); without it the feature is idle and the calls go to the primary, as
before."""

from __future__ import annotations

import logging

from hmsproxy.config.model import Config
from hmsproxy.features.notifications.config import SECTION
from hmsproxy.features.notifications.filters import of_count_request, of_events_request
from hmsproxy.features.notifications.labelling import Labeller
from hmsproxy.features.notifications.merging import Merger
from hmsproxy.features.notifications.serving import next_events
from hmsproxy.features.notifications.settings_check import disagreements
from hmsproxy.features.notifications.store import NOTIFICATIONS_SCHEMA, NotificationLog
from hmsproxy.pipeline.call import Call
from hmsproxy.pipeline.platform import Feature, Platform
from hmsproxy.protocol import idl
from hmsproxy.upstream.session import Session

log = logging.getLogger(__name__)
hive = idl.hive
P = idl.HmsProxy

#: The calls this feature answers.
METHODS = frozenset({"get_current_notificationEventId", "get_next_notification", "get_notification_events_count"})


class Notifications(Feature):
    name = "notifications"
    methods = METHODS
    config_section = SECTION
    store_schema = NOTIFICATIONS_SCHEMA
    # memoizable_verdict stays False: each answer depends on the log at that moment, which grows
    # between identical calls.

    def __init__(self, platform: Platform):
        super().__init__(platform)
        self.federate = False
        self.log = NotificationLog(platform.store) if platform.store is not None else None
        self.merger = Merger(self.log) if self.log is not None else None
        self.labeller = Labeller(self.log) if self.log is not None else None

    def configure(self, config: Config) -> None:
        self.federate = bool(self.settings(config).federate) and self.log is not None

    def idle(self, hook: str) -> bool:
        return not self.federate

    def describe(self) -> list[str]:
        """`hmsproxy status`: where the merged log is, and each member setting that disagrees with the
        primary's answer to get_config_value (settings_check.py), also logged."""
        if not self.federate:
            return []
        session = Session(self.platform.backends, "hmsproxy")
        try:
            warnings = disagreements(session, self.platform.router())
        finally:
            session.close()
        for line in warnings:
            log.warning("%s", line)
        return [f"Notifications: merged log at event {self.log.current()}", *warnings]

    def on_request(self, call: Call):
        if not self.federate:  # a reload turned it off while this call was on its way
            return None
        # Pull first, so a change the client just made through the proxy is in the answer.
        self.merger.pull(call.session, call.router, self.platform.features.get("transactions"))
        call.backend = "*"
        if call.spec.name == "get_current_notificationEventId":
            return P.get_current_notificationEventId_result(success=hive.CurrentNotificationEventId(eventId=self.log.current()))
        rqst = call.args.rqst
        if call.spec.name == "get_notification_events_count":
            return P.get_notification_events_count_result(success=hive.NotificationEventsCountResponse(eventsCount=self._count(call, rqst)))
        where = of_events_request(call.router, rqst)
        if where is None:
            events = []
        else:
            if not where.empty:
                self.labeller.catch_up(call.session, call.router)
            events = next_events(self.log, call.session, call.router, rqst.lastEvent, rqst.maxEvents, where)
        return P.get_next_notification_result(success=hive.NotificationEventResponse(events=events))

    def _count(self, call: Call, rqst) -> int:
        """Hive's count: events after `fromEventId` of one database (up to `toEventId`, at most `limit`)."""
        where = of_count_request(call.router, rqst)
        if where is None:
            return 0
        self.labeller.catch_up(call.session, call.router)
        count = self.log.count(rqst.fromEventId, where)
        return min(count, rqst.limit) if rqst.limit is not None and rqst.limit >= 0 else count

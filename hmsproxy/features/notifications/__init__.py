"""Notifications (issue #40, first slice): one notification log for the whole federation.

The proxy merges the events of every metastore into one log with its own dense ids (store.py keeps
proxy id -> (metastore, that metastore's id) and each metastore's high-water mark; merging.py pulls
and appends), and answers `get_current_notificationEventId` and `get_next_notification` from it
(serving.py), with database names as the federation shows them, in the event and inside its JSON
message (messages.py); `get_notification_events_count` and Hive 4's request filters are answered
over the same log from each event's label in the store (filters.py; labelling.py labels events
merged before labels were kept). Off unless `notifications: {federate: true}` (config.py says why).

Rooms (docs/architecture.md, "A feature package"): feature.py, config.py, store.py, model.py.
docs/notifications.md describes the mapping, the names, the formats and what is not done.
"""

#: The feature class, in feature.py.
FEATURE = "hmsproxy.features.notifications.feature:Notifications"
#: Its jobs and client helpers, by module (named, never imported: features import neither).
JOBS: tuple[str, ...] = ()
CLIENTS: tuple[str, ...] = ()

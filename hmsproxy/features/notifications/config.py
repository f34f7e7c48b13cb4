"""The `notifications` section of hmsproxy's YAML (docs/notifications.md).

notifications:
  federate: true     # merge every metastore's notification log into one (default: false)

Off by default: turning it on changes the event ids every consumer sees (the primary's, then the
proxy's), which an upgrade must not do to a running Impala or REPL DUMP behind its back
(docs/notifications.md, "Off by default, and why"); off, the calls go to the primary as they always did.
"""

from __future__ import annotations

from dataclasses import dataclass

from hmsproxy.config import readers as r
from hmsproxy.config.keys import key
from hmsproxy.config.sections import keyed_section


@dataclass(frozen=True)
class NotificationsConfig:
    federate: bool = key(
        "federate", r.boolean, "answer the notification calls from one merged log of every metastore (else the primary's)", default=False
    )


def describe(settings: NotificationsConfig) -> list[str]:
    if not settings.federate:
        return ["Notifications: the primary's log (notifications.federate is off)"]
    return ["Notifications: one merged log of every metastore, with the proxy's own event ids"]


SECTION = keyed_section("notifications", NotificationsConfig, describe)

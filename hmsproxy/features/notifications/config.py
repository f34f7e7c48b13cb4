"""The `notifications` section of hmsproxy's YAML (docs/notifications.md).

notifications:
  federate: true     # merge every metastore's notification log into one (default: false)

Off by default: the merged log does not yet carry the member metastores' transaction (ACID) events
(docs/notifications.md, "Not done"). Turned on by default it would hand a consumer such as REPL DUMP
a log that looks complete and is not; off, the calls go to
the primary as they always did, which consumers already know how to live with.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hmsproxy.config.errors import Ctx, join_key
from hmsproxy.config.fields import present, read_bool, read_mapping, read_section
from hmsproxy.pipeline.platform import ConfigSection

SECTION_KEYS = ("federate",)


@dataclass(frozen=True)
class NotificationsConfig:
    #: Whether the proxy answers the notification calls from its merged log (else the primary does).
    federate: bool = False


def parse(ctx: Ctx, raw: Any) -> NotificationsConfig:
    path = "notifications"
    section = read_section(ctx, path, read_mapping(ctx, path, raw), SECTION_KEYS)
    if not present(section, "federate"):
        return NotificationsConfig()
    return NotificationsConfig(federate=read_bool(ctx, join_key(path, "federate"), section["federate"]))


def describe(settings: NotificationsConfig) -> list[str]:
    if not settings.federate:
        return ["Notifications: the primary's log (notifications.federate is off)"]
    return ["Notifications: one merged log of every metastore, with the proxy's own event ids"]


SECTION = ConfigSection("notifications", parse, NotificationsConfig(), describe)

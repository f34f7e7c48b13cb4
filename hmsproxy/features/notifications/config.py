"""The `notifications` section of hmsproxy's YAML (docs/notifications.md).

notifications:
  federate: true     # merge every metastore's notification log into one (default: false)

Off by default: turning it on changes the event ids every consumer sees (the primary's, then the
proxy's), which an upgrade must not do to a running Impala or REPL DUMP behind its back
(docs/notifications.md, "Off by default, and why"); off, the calls go to the primary as they always did.
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

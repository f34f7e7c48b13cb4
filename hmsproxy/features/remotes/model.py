"""What a remote is: a local name for a database or table that lives in another metastore.

Shared by the store (user-created remotes) and the config (the admin's static
ones), so both are served the same way.
"""

from __future__ import annotations

import datetime as dt
import re
import time
from dataclasses import dataclass, field

DEFAULT_FACTORY = "thrift"


@dataclass(frozen=True)
class RemoteDatabase:
    local_name: str
    remote_name: str
    factory: str = DEFAULT_FACTORY
    properties: dict[str, str] = field(default_factory=dict)
    owner: str | None = None
    created_at: float = field(default_factory=time.time)


@dataclass(frozen=True)
class RemoteTable:
    local_db: str
    local_name: str
    remote_db: str
    remote_name: str
    factory: str = DEFAULT_FACTORY
    properties: dict[str, str] = field(default_factory=dict)
    owner: str | None = None
    created_at: float = field(default_factory=time.time)


#: Property values shown as *** (DESCRIBE, refusals that quote a link's properties).
SECRET_KEY = re.compile(r"password|secret|token|credential", re.I)


def when(ts: float) -> str:
    """A record's time as DESCRIBE and SHOW print it."""
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def shown(key: str, value: str) -> str:
    """A property's value as it may be printed."""
    return "***" if SECRET_KEY.search(key) else value

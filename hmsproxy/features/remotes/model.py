"""What a remote is: a local name for a database or table that lives in another metastore.

Shared by the store (user-created remotes) and the config (the admin's static
ones), so both are served the same way.
"""

from __future__ import annotations

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

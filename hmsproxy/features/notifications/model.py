"""The words the merged log's parts share."""

from __future__ import annotations

from dataclasses import dataclass

#: Events asked of a metastore per call, and rows appended per store transaction (Impala's batch size).
BATCH = 1000


@dataclass(frozen=True)
class Merged:
    """One event of the merged log: the proxy's id and where the event really is."""

    proxy_id: int
    metastore: str
    backend_id: int


@dataclass(frozen=True)
class Pulled:
    """A page read from one metastore after its mark: the ids the federation shows, and the page's last id
    (the new mark: events hidden from clients move it too, so they are never read again)."""

    shown: tuple[int, ...]
    last: int

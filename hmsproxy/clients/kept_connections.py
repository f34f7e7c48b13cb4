"""Metastore connections kept between a process's reads (pruned reads, index lookups).

A read's fixed cost is mostly metastore round trips, so connections outlive one read, and
independent calls of one read go out together, each on a connection of its own (Thrift
connections are not thread-safe: one is used by one thread at a time).

    answer = kept(uris, user).run(lambda ms: ms.get_table("db", "t"))
    table, parts = kept(uris, user).together(lambda ms: ms.get_table("db", "t"), lambda ms: ms.partitions("db", "t"))
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

#: Idle connections kept per (URIs, user): as many as a read uses at once.
MAX_IDLE = 4

_LOCK = threading.Lock()
_KEPT: dict[tuple[str, str, str | None], KeptConnections] = {}
_WORKERS = ThreadPoolExecutor(max_workers=MAX_IDLE - 1, thread_name_prefix="hmsproxy-metastore")


def kept(uris: str, user: str, sasl_principal: str | None = None) -> KeptConnections:
    """The kept connections of this process to these metastore URIs as this user (with
    `sasl_principal`, the proxy's: as the caller's Kerberos ticket cache)."""
    with _LOCK:
        return _KEPT.setdefault((uris, user, sasl_principal), KeptConnections(uris, user, sasl_principal))


class KeptConnections:
    def __init__(self, uris: str, user: str, sasl_principal: str | None = None):
        self.uris, self.user, self.sasl_principal = uris, user, sasl_principal
        self._idle: list[Any] = []
        self._lock = threading.Lock()

    def run(self, work: Callable[[Any], Any]) -> Any:
        """`work(client)` on a kept connection; one gone stale (the proxy restarted) is replaced once:
        the calls only read."""
        from hmsproxy.upstream.wire import BackendUnavailable

        client = self._take()
        if client is not None:
            try:
                return self._run(client, work)
            except BackendUnavailable:
                pass
        return self._run(self._open(), work)

    def together(self, *works: Callable[[Any], Any]) -> list[Any]:
        """Each `work(client)` on a connection of its own, at the same time; their results in order.
        When some fail, the first failure (in order) is raised once all have ended."""
        if len(works) == 1:
            return [self.run(works[0])]
        futures = [_WORKERS.submit(self.run, w) for w in works[1:]]
        outcomes = [_outcome(lambda: self.run(works[0]))] + [_outcome(f.result) for f in futures]
        for ok, value in outcomes:
            if not ok:
                raise value
        return [value for _, value in outcomes]

    def _run(self, client: Any, work: Callable[[Any], Any]) -> Any:
        from hmsproxy.upstream.wire import BackendUnavailable

        try:
            result = work(client)
        except BackendUnavailable:
            client.close()
            raise
        except BaseException:  # an answer (no such table, …): the connection itself is fine
            self._give(client)
            raise
        self._give(client)
        return result

    def _open(self) -> Any:
        from hmsproxy.jobs.skew_layout import open_metastore

        return open_metastore(self.uris, user=self.user, sasl_principal=self.sasl_principal)

    def _take(self) -> Any | None:
        with self._lock:
            return self._idle.pop() if self._idle else None

    def _give(self, client: Any) -> None:
        with self._lock:
            if len(self._idle) < MAX_IDLE:
                self._idle.append(client)
                return
        client.close()


def deferred(work: Callable[[], Any]) -> Any:
    """`work()`'s answer, or the exception it raised, for `raised` to raise later: a call sent
    together with another whose answer says more (a missing table) waits for that one."""
    try:
        return work()
    except Exception as e:  # noqa: BLE001 - raised by `raised`, or read as "no answer"
        return e


def raised(answer: Any) -> Any:
    """A `deferred` answer, its exception raised."""
    if isinstance(answer, Exception):
        raise answer
    return answer


def _outcome(get: Callable[[], Any]) -> tuple[bool, Any]:
    try:
        return True, get()
    except BaseException as e:
        return False, e

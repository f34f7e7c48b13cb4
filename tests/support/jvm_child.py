"""Starting a server JVM a test session needs (s3proxy, the HDFS minicluster), or `unavailable`."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from hmsproxy.dev import maven
from hmsproxy.dev.server_jvm import ServerFailed, ServerJvm
from tests.support.required import unavailable

Fetched = TypeVar("Fetched")
Server = TypeVar("Server")


def start_or_unavailable(what: str, fetch: Callable[[], Fetched], start: Callable[[Fetched], Server]) -> Server:
    """`start(fetch())`; `unavailable` (skip, or fail in CI) when Maven can't fetch it or it does not start."""
    try:
        fetched = fetch()
    except maven.FetchError as exc:
        unavailable(f"cannot fetch {what} with Maven: {exc}")
    try:
        return start(fetched)
    except ServerFailed as exc:  # its log's last lines, for whoever reads a CI failure
        unavailable(f"{what} did not start: {exc}\n{exc.tail}")
    except (RuntimeError, OSError) as exc:
        unavailable(f"{what} did not start: {exc}")


#: The dev stack's server JVM (hmsproxy.dev.server_jvm), under the name these tests knew it by.
JvmChild = ServerJvm

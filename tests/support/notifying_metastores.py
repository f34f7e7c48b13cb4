"""Starting a real local metastore that records notification events, for the tests of the merged log."""

from __future__ import annotations

from hmsproxy.dev import maven
from hmsproxy.dev.metastore import LocalMetastore
from hmsproxy.dev.ports import free_port
from hmsproxy.dev.versions import hive_version
from tests.support.required import unavailable


def start_notifying(version: str, tmp_path_factory, started: list, *, tag: str = "notif") -> LocalMetastore:
    """A started metastore of `version` whose listener is on; `started` gets it before it starts, so the
    caller stops it even if the start fails half-way. Missing jars, Java or listener: unavailable()."""
    try:
        hive_version(version).prepare()
    except maven.FetchError as exc:
        unavailable(f"cannot fetch Hive {version} with Maven: {exc}")
    name = f"{tag}-{version}"
    ms = LocalMetastore(free_port(), tmp_path_factory.mktemp(name), hive_version=version, name=name)
    started.append(ms)
    try:
        ms.start(timeout_s=300)  # 4.2's first start makes its schema twice over (schema tool, then DataNucleus)
    except RuntimeError as exc:
        if str(exc).startswith("no Java"):  # hmsproxy.dev.jvm.java_executable: no JDK new enough
            unavailable(f"Hive {version}: {exc}")
        raise
    if not ms.notifications_enabled:
        unavailable(f"Hive {version} metastore runs without notifications: {ms.notifications_unavailable}")
    return ms

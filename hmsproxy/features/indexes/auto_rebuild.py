"""AUTO REBUILD: an index property saying `rebuild-index --watch` keeps the index fresh.

`CREATE INDEX … AUTO REBUILD` stores it, `ALTER INDEX … SET IDXPROPERTIES` sets or clears it, and
any client (the Hive CLI included) may send it in the index's parameters; the proxy refuses a value
other than true or false, so a watcher never has to guess what a typo meant.
"""

from __future__ import annotations

from collections.abc import Mapping

from hmsproxy.pipeline.errors import InvalidRequest

AUTO_REBUILD_KEY = "hmsproxy.index.auto-rebuild"
_VALUES = ("true", "false")


def is_auto_rebuild(parameters: Mapping[str, str] | None) -> bool:
    return (parameters or {}).get(AUTO_REBUILD_KEY, "").strip().lower() == "true"


def check_auto_rebuild(parameters: Mapping[str, str] | None, index: str) -> None:
    """InvalidRequest for an auto-rebuild value that is neither true nor false."""
    value = (parameters or {}).get(AUTO_REBUILD_KEY)
    if value is not None and value.strip().lower() not in _VALUES:
        raise InvalidRequest(f"hmsproxy: index {index}: {AUTO_REBUILD_KEY} is {value!r}; use 'true' or 'false'")

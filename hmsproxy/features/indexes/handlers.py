"""Index handlers, pluggable as Hive's HiveIndexHandler was (the seed's "Plugin Interface"): the proxy's side.

A handler says whether its index lives in an index table, checks an index definition against
its base table and completes the index table's definition (`analyze`, at CREATE INDEX, whoever
sends it) and cleans up whatever it keeps outside the metastore (`drop`). Building an index
partition from base files runs on Spark, never in the proxy: that side is
jobs/index_builders.py (`IndexBuilder.build`). COMPACT is built in; others are found by the
class name `AS '…'` gives, in the entry-point group `hmsproxy.index_handlers` (the entry
point's name is that class name, its value a class made with no arguments; a plug-in that
builds on Spark also derives from `IndexBuilder`).
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any

from hmsproxy.features.indexes import compact
from hmsproxy.pipeline.errors import InvalidRequest

ENTRY_POINT_GROUP = "hmsproxy.index_handlers"


class IndexHandler:
    """The interface, with the defaults a handler may keep (Hive's AbstractIndexHandler)."""

    #: The class name Hive's metadata records (Index.indexHandlerClass).
    class_name = ""

    def uses_index_table(self) -> bool:
        return True

    def analyze(self, base: Any, index: Any, index_table: Any | None) -> None:
        """Check the definition (InvalidRequest says what is wrong) and complete `index_table`."""

    def drop(self, index: Any) -> None:
        """The index is dropped (its index table with it): remove anything kept elsewhere."""


class CompactHandler(IndexHandler):
    """Hive's compact index: a row per (indexed values, file) with the row groups holding them."""

    class_name = compact.COMPACT

    def analyze(self, base: Any, index: Any, index_table: Any | None) -> None:
        if index_table is None:
            raise InvalidRequest("hmsproxy: a compact index keeps its rows in an index table; none was given")
        compact.complete_index_table(index_table)


def get_handler(name: str) -> IndexHandler:
    """The handler `AS '…'` names: COMPACT (by its short name or class), or an entry point."""
    given = (name or "").strip()
    if given.lower() in compact.HANDLER_NAMES:
        return CompactHandler()
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == given:
            try:
                handler = ep.load()()
            except Exception as e:  # a plug-in that doesn't load is the plug-in's fault, said as such
                raise InvalidRequest(f"hmsproxy: index handler {given!r} ({ep.value}) can't be loaded: {e}") from None
            handler.class_name = handler.class_name or given
            return handler
    raise InvalidRequest(
        f"hmsproxy: unknown index handler {given!r}: hmsproxy builds 'COMPACT' ({compact.COMPACT}); "
        f"others are plugged in through the entry-point group '{ENTRY_POINT_GROUP}'"
    )

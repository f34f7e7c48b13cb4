"""Index handlers' Spark side: building one index partition from base data files.

The proxy's side of a handler (features/indexes/handlers.py) checks definitions and cleans up; the
rebuild job asks `builder_for` the handler an index names how to build it. COMPACT is built in;
a plug-in handler builds by deriving from `IndexBuilder` as well.
"""

from __future__ import annotations

from typing import Any

from hmsproxy.features.indexes import compact
from hmsproxy.jobs.errors import JobError


class IndexBuilder:
    """The Spark side of an index handler."""

    def build(self, spark: Any, index: Any, files: list[str], location: str) -> int:
        """Write the index of `files` (base data files) into `location`; the number of index rows."""
        raise NotImplementedError


class CompactBuilder(IndexBuilder):
    """Hive's compact index: a row per (indexed values, file) with the row groups holding them."""

    def build(self, spark: Any, index: Any, files: list[str], location: str) -> int:
        from hmsproxy.jobs.rebuild_index import write_index

        return write_index(spark, index, files, location)


def builder_for(handler: Any) -> IndexBuilder:
    """How to build the indexes of `handler` (features/indexes/handlers.IndexHandler)."""
    if handler.class_name == compact.COMPACT:
        return CompactBuilder()
    if isinstance(handler, IndexBuilder):
        return handler
    raise JobError(f"index handler {handler.class_name} builds nothing on Spark (it is no IndexBuilder)")

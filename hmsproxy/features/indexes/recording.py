"""Index builds into the proxy's store, carried by the rebuild's own swap call.

The rebuild job adds or re-points an index partition (or an unpartitioned index table) with the
`*_with_environment_context` call, its EnvironmentContext holding the build (builds.py). The
partition's last build is forgotten before the call goes to the metastore and recorded once the
metastore accepted it: whatever fails in between leaves it "never built" (scanned by lookups),
never a build describing other files.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hmsproxy.features import identity
from hmsproxy.features.indexes.builds import BUILD_CONTEXT_KEY, IndexBuild
from hmsproxy.pipeline.call import Call, accepted_note
from hmsproxy.pipeline.errors import InvalidRequest

if TYPE_CHECKING:
    from hmsproxy.features.indexes.feature import Indexes

METHODS = frozenset(
    {"add_partition_with_environment_context", "alter_partition_with_environment_context", "alter_table_with_environment_context"}
)
NOTE = "index-build"


class BuildRecording:
    def __init__(self, feature: Indexes):
        self.feature = feature

    def on_routed(self, call: Call) -> None:
        context = call.args.environment_context
        text = ((context.properties if context is not None else None) or {}).get(BUILD_CONTEXT_KEY)
        if text is None or not call.table:
            return
        ref = identity.routed(call.route, call.table)
        record = self.feature.snapshot().by_index_table.get(ref)
        if record is None:
            raise InvalidRequest(f"hmsproxy: {call.client_db}.{call.table} is not an index table: an index build is recorded on one")
        try:
            build = IndexBuild.from_json(text)
        except ValueError as e:
            raise InvalidRequest(f"hmsproxy: {BUILD_CONTEXT_KEY}: {e}") from None
        self.feature.repository.forget_builds(record.base, record.name, [build.partition])
        self.feature.changed()
        call.notes[NOTE] = (record, build)

    def needs_result(self, call: Call) -> bool:
        return NOTE in call.notes

    def on_response(self, call: Call, result) -> None:
        note = accepted_note(call, NOTE, result)
        if note is None:
            return
        record, build = note
        self.feature.repository.record_build(record.base, record.name, build)
        self.feature.changed()

"""Index builds into the proxy's store, carried by the rebuild's own swap call.

The rebuild job adds or re-points an index partition (or an unpartitioned index table) with the
`*_with_environment_context` call, its EnvironmentContext holding the build (builds.py); a batch
of partitions is re-pointed by one `alter_partitions_with_environment_context` holding every
partition's build, forgotten and recorded in one store transaction each; a batch of new partitions
is added by one `add_partitions`, which has no EnvironmentContext, so each carries its build as the
partition parameter BUILD_CONTEXT_KEY, taken off here before the metastore sees it. The
partition's last build is forgotten before the call goes to the metastore and recorded once the
metastore accepted it: whatever fails in between leaves it "never built" (scanned by lookups),
never a build describing other files.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hmsproxy.features import identity
from hmsproxy.features.indexes.builds import BUILD_CONTEXT_KEY, BUILDS_CONTEXT_KEY, IndexBuild, builds_from_json
from hmsproxy.pipeline.call import Call, accepted_note
from hmsproxy.pipeline.errors import InvalidRequest

if TYPE_CHECKING:
    from hmsproxy.features.indexes.snapshot import IndexRecords

METHODS = frozenset(
    {
        "add_partition_with_environment_context",
        "add_partitions",
        "alter_partition_with_environment_context",
        "alter_partitions_with_environment_context",
        "alter_table_with_environment_context",
    }
)
NOTE = "index-build"


class BuildRecording:
    def __init__(self, records: IndexRecords):
        self._records = records

    def on_routed(self, call: Call) -> None:
        if call.method == "add_partitions":
            made = _carried_by_partitions(call.args.new_parts or [])
        else:
            context = call.args.environment_context
            properties = (context.properties if context is not None else None) or {}
            made = _builds(properties) if BUILD_CONTEXT_KEY in properties or BUILDS_CONTEXT_KEY in properties else []
        if not call.table or not made:
            return
        ref = identity.routed(call.route, call.table)
        record = self._records.snapshot().by_index_table.get(ref)
        if record is None:
            raise InvalidRequest(f"hmsproxy: {call.client_db}.{call.table} is not an index table: an index build is recorded on one")
        partitions = [b.partition for b in made]
        generation = self._records.repository.forget_builds(record.base, record.name, partitions)
        self._records.builds_changed(record, generation, forgotten=partitions)
        call.notes[NOTE] = (record, made)

    def needs_result(self, call: Call) -> bool:
        return NOTE in call.notes

    def on_response(self, call: Call, result) -> None:
        note = accepted_note(call, NOTE, result)
        if note is None:
            return
        record, made = note
        generation = self._records.repository.record_builds(record.base, record.name, made)
        self._records.builds_changed(record, generation, recorded=made)


def _builds(properties: dict[str, str]) -> list[IndexBuild]:
    """The builds the call's EnvironmentContext carries: one (BUILD_CONTEXT_KEY) or a list (BUILDS_CONTEXT_KEY)."""
    key = BUILD_CONTEXT_KEY if BUILD_CONTEXT_KEY in properties else BUILDS_CONTEXT_KEY
    try:
        if key == BUILD_CONTEXT_KEY:
            return [IndexBuild.from_json(properties[key])]
        return builds_from_json(properties[key])
    except ValueError as e:
        raise InvalidRequest(f"hmsproxy: {key}: {e}") from None


def _carried_by_partitions(parts: list) -> list[IndexBuild]:
    """The builds new partitions carry as their BUILD_CONTEXT_KEY parameter, taken off them (the
    metastore keeps no copy that could outlive the partition's files)."""
    made = []
    for p in parts:
        carried = (p.parameters or {}).pop(BUILD_CONTEXT_KEY, None) if p is not None else None
        if carried is not None:
            try:
                made.append(IndexBuild.from_json(carried))
            except ValueError as e:
                raise InvalidRequest(f"hmsproxy: {BUILD_CONTEXT_KEY}: {e}") from None
    return made

"""The Hive 2.3 CLI's own `ALTER INDEX … REBUILD`, refused before Hive writes anything.

Hive compiles that statement into a MapReduce job (CompactIndexHandler's INSERT OVERWRITE into
the index table) whose files would replace the proxy's build in the index partition's directory,
and whose last step (IndexMetadataChangeTask) then fails. Only its compile talks to the
metastore before any data moves, and its first calls are (DDLSemanticAnalyzer.getIndexBuilderMapRed):
`get_index_by_name`, then at once `get_table` of the index table, then `get_table` of the base
table; the next calls add index partitions (preparePartitions). No other statement sends these
three in that order: DROP INDEX follows get_index_by_name with drop_index_by_name, SET
IDXPROPERTIES with alter_index, and hmsproxy's own rebuild job reads the base table first
(jobs/rebuild_index.load_index). So the third, `get_table` of the base table, is refused with the
commands that do build, and Hive prints the message:

    FAILED: SemanticException … Unable to fetch table <base table>. hmsproxy: ALTER INDEX … REBUILD …

(Refusing the second call already would also refuse a client that reads an index and then its
table, as a tool that only looks does.) The sequence is followed per client connection:
get_index_by_name arms the connection's guard, each call the feature sees either is the next step
or disarms it. get_index_by_name drops the relay shortcuts (pipeline/shortcuts.changes_nothing),
so the get_table calls after it reach the feature rather than being relayed from a decision made
before.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hmsproxy.features import identity
from hmsproxy.features.identity import TableRef
from hmsproxy.features.indexes.model import IndexRecord
from hmsproxy.pipeline.call import Call
from hmsproxy.pipeline.errors import InvalidRequest

if TYPE_CHECKING:
    from hmsproxy.features.indexes.snapshot import IndexRecords

#: The call that, right after get_index_by_name, means Hive is compiling its own rebuild.
GUARDED_METHOD = "get_table"


@dataclass
class RebuildGuard:
    """One client connection's state: the index a Hive rebuild may be compiling, and how far it got."""

    armed: IndexRecord | None = None
    #: 1: get_index_by_name answered (its index table comes next); 2: so was that get_table (the base table's comes next).
    step: int = 0


def refusal(base: str, index: str) -> str:
    """What the Hive CLI shows instead of running its MapReduce build."""
    return (
        f"hmsproxy: ALTER INDEX {index} ON {base} REBUILD is not run by Hive through hmsproxy "
        "(its MapReduce job would overwrite the index with Hive's own files); nothing was written. "
        f"Build it with: hmsproxy job rebuild-index {base}.{index} [--partition k=v] "
        f"or hmsproxy sql -e \"ALTER INDEX {index} ON {base} [PARTITION (k='v')] REBUILD\""
    )


class HiveRebuildRefusal:
    """`guard(call)`: the RebuildGuard of the call's client connection (the feature's session state)."""

    def __init__(self, records: IndexRecords, guard: Callable[[Call], RebuildGuard]):
        self._records = records
        self._guard = guard

    def arm(self, call: Call) -> None:
        """get_index_by_name was answered: a Hive rebuild would ask for its index table next."""
        base = identity.routed(call.route, call.args.tbl_name)
        record = self._records.snapshot().get(base, call.args.index_name.lower())
        if record is not None and record.index_table is not None:
            guard = self._guard(call)
            guard.armed, guard.step = record, 1

    def check(self, call: Call) -> None:
        """Every call the feature sees: the next step of a Hive rebuild's compile, its last refused; else disarm."""
        guard = self._guard(call)
        record, step = guard.armed, guard.step
        guard.armed, guard.step = None, 0
        if record is None or call.method != GUARDED_METHOD or not call.table:
            return
        table = identity.routed(call.route, call.table)
        if step == 1 and table == record.index_table:
            guard.armed, guard.step = record, 2
        elif step == 2 and table == record.base:
            raise InvalidRequest(refusal(_client_name(call, record.base), record.name))


def _client_name(call: Call, base: TableRef) -> str:
    db = identity.client_db(call.router, base.metastore, base.db) or call.client_db
    return f"{db}.{base.table}"

"""Tables that change under an index, from any client: refused, never followed silently.

An index holds the values of the columns it covers, as they were typed when it was built; the
proxy answers lookups from it. So `alter_table` (every form) of a base table is refused when it
would drop, rename or retype a covered column or retype a partition key (index partitions are
named by the base table's partition values, and its index tables copy their types): the message
names the indexes and the `DROP INDEX` to run first. Anything else (adding columns, comments,
properties, statistics, Spark's whole-table rewrites) goes through. An index table's columns and
partition keys are the index's own, and so is its name (the index finds it by it): a client
changing them, or renaming it, is refused the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from hmsproxy.features import identity
from hmsproxy.features.columns import column_difference, named_types, type_key
from hmsproxy.features.identity import TableRef
from hmsproxy.features.indexes.model import IndexRecord
from hmsproxy.pipeline.call import Call
from hmsproxy.pipeline.errors import InvalidRequest, NotFound

if TYPE_CHECKING:
    from hmsproxy.features.indexes.snapshot import IndexRecords
    from hmsproxy.pipeline.internal_client import InternalClient


def covered_changes(record: IndexRecord, new_cols) -> list[str]:
    """What a table's new data columns do to the columns `record` covers, in words (empty: nothing)."""
    now = dict(named_types(new_cols))
    changes = []
    for name, type_name in record.columns:
        if name not in now:
            changes.append(f"{name} would be dropped or renamed")
        elif now[name] != type_key(type_name):
            changes.append(f"{name} would change type from {type_key(type_name)} to {now[name]}")
    return changes


def key_changes(old_keys, new_keys) -> list[str]:
    """Partition keys renamed, retyped, added or removed, in words (empty: the same)."""
    old, new = named_types(old_keys), named_types(new_keys)
    if [n for n, _ in old] != [n for n, _ in new]:
        return [f"its partition keys would change from ({_listed(old)}) to ({_listed(new)})"]
    return [f"partition key {n} would change type from {a} to {b}" for (n, a), (_, b) in zip(old, new) if a != b]


def _listed(columns: list[tuple[str, str]]) -> str:
    return ", ".join(f"{n} {t}" for n, t in columns)


class StructureGuard:
    def __init__(self, records: IndexRecords, client_for: Callable[[Call], InternalClient]):
        self._records = records
        self._client_for = client_for

    def check(self, call: Call) -> None:
        """Refuse an alter_table that changes what an index was built on (see the module doc)."""
        new = call.spec.altered_table(call.args) if call.spec.alters_table else None
        if new is None or new.sd is None or not call.table:
            return
        ref = identity.routed(call.route, call.table)
        snapshot = self._records.snapshot()
        index = snapshot.by_index_table.get(ref)
        if index is not None:
            self._check_index_table(call, ref, index, new)
        elif snapshot.of(ref):
            self._check_base(call, ref, snapshot.of(ref), new)

    def _check_base(self, call: Call, ref: TableRef, records: list[IndexRecord], new) -> None:
        changed = {r.name: covered_changes(r, new.sd.cols) for r in records}
        changed = {name: changes for name, changes in changed.items() if changes}
        keys = []
        if new.partitionKeys:  # one more call only for a partitioned table (else nothing to compare)
            current = self._current(call)
            keys = key_changes(current.partitionKeys, new.partitionKeys) if current is not None else []
        if keys:
            changed = {r.name: keys for r in records}
        if not changed:
            return
        base = f"{call.client_db}.{ref.table}"
        what = "; ".join(f"index {name}: {', '.join(changes)}" for name, changes in sorted(changed.items()))
        drops = "; ".join(f"DROP INDEX {name} ON {base}" for name in sorted(changed))
        raise InvalidRequest(
            f"hmsproxy: {base} has indexes on the columns this change alters ({what}): run {drops} first, then CREATE INDEX again"
        )

    def _check_index_table(self, call: Call, ref: TableRef, index: IndexRecord, new) -> None:
        renamed_to = f"{new.dbName or call.client_db}.{new.tableName}".lower()
        if new.tableName and renamed_to != f"{call.client_db}.{call.table}".lower():
            base = identity.client_name(call.router, index.base)
            raise InvalidRequest(
                f"hmsproxy: {call.client_db}.{ref.table} is the index table of index {index.name} on {base}, which finds it by "
                f"this name: it can't be renamed to {renamed_to}; DROP INDEX {index.name} ON {base} and CREATE INDEX … "
                "IN TABLE <name> to give the index table another name"
            )
        current = self._current(call)
        if current is None or current.sd is None:
            return
        columns = column_difference(new.sd.cols, current.sd.cols)
        changes = ([f"it would have other columns: it {columns}"] if columns else []) + key_changes(
            current.partitionKeys, new.partitionKeys
        )
        if not changes:
            return
        base = identity.client_name(call.router, index.base)
        raise InvalidRequest(
            f"hmsproxy: {call.client_db}.{ref.table} is the index table of index {index.name} on {base}, whose columns the "
            f"index sets ({'; '.join(changes)}): DROP INDEX {index.name} ON {base} and CREATE INDEX again to index other columns"
        )

    def _current(self, call: Call):
        with self._client_for(call) as client:
            try:
                return client.call("get_table", dbname=call.client_db, tbl_name=call.table)
            except NotFound:
                return None  # the metastore answers for a missing table itself

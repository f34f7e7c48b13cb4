"""Drop protection (seed: "materialize the dependencies both ways"), for calls from any client.

A change to a table others depend on — dropping or renaming it, changing its columns,
dropping a partition a published dependent partition covers, dropping its database — is
governed by each affected dependent table's `hmsproxy.dependent.on-change`: `restrict` refuses
the call (the message names the dependent tables and partitions), `notify` lets it through
and, once the metastore has done it, records what broke (SHOW DEPENDENCIES shows it) and
emits a lineage event. `propagate` is notify, except for a change of the columns: a compatible
one (schema_change.py) is applied to the dependent table's columns too, an incompatible one is
refused, naming why. Writes into a dependent table itself are refused: it is a view the
proxy writes, changed only by the statements.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from hmsproxy.features import identity
from hmsproxy.features.columns import column_difference
from hmsproxy.features.dependent import lineage, model
from hmsproxy.features.dependent.model import Column, DependentPartition, TableRef, columns_of
from hmsproxy.features.dependent.schema_change import propagation_refusal
from hmsproxy.features.dependent.snapshot import DependentSnapshot
from hmsproxy.features.dropped_partitions import METHODS as PARTITION_DROPS
from hmsproxy.features.dropped_partitions import dropped_values
from hmsproxy.pipeline.call import Call, accepted_note
from hmsproxy.pipeline.errors import AccessDenied, Conflict, InvalidRequest, NotFound

if TYPE_CHECKING:
    from hmsproxy.features.dependent.snapshot import DependentRecords
    from hmsproxy.pipeline.internal_client import InternalClient
    from hmsproxy.routing.router import Router

#: The call note holding a change the notify policy let through, recorded once it is done.
NOTE = "dependent-change"
#: How many dependent partitions a refusal names before "and N more".
NAMED = 5


@dataclass(frozen=True)
class Change:
    """A change to a depended-upon table, and the dependent partitions it affects."""

    action: str  # drop-table, rename-table, change-columns, drop-partition, drop-database
    what: str  # "dropping shop.events", for messages
    target: TableRef | None
    affected: tuple[DependentPartition, ...]
    dependents: tuple[TableRef, ...]  # the dependent tables whose policy decides
    problem: str  # what SHOW DEPENDENCIES says afterwards
    target_gone: bool = False
    renamed_to: TableRef | None = None
    dropped_database: tuple[str, str] | None = None
    columns: tuple[Column, ...] | None = None  # change-columns: the table's columns afterwards
    propagating: tuple[TableRef, ...] = ()  # the dependent tables whose columns follow (propagate policy)


class Protection:
    """`emit(event)`: sends a lineage event; `client_for(call)`: calls metastores as the call's client."""

    def __init__(
        self,
        records: DependentRecords,
        router: Callable[[], Router],
        emit: Callable[[dict], None],
        client_for: Callable[[Call], InternalClient],
    ):
        self._records = records
        self._router = router
        self._emit = emit
        self._client_for = client_for

    def on_routed(self, call: Call):
        snapshot = self._records.snapshot()
        if not snapshot.tables or call.route is None or not call.client_db:
            return None
        metastore, backend_db = identity.routed_db(call.route)
        if call.spec.drops_database:
            change = self._database_change(call, snapshot, (metastore, backend_db))
        else:
            table = self._table_name(call)
            if table is None:
                return None
            ref = TableRef(metastore, backend_db, table.lower())
            if ref in snapshot.tables:
                return self._write_into_dependent(call, snapshot, ref)
            if ref not in snapshot.dependents:
                return None
            change = self._table_change(call, snapshot, ref)
        if change is None:
            return None
        self._decide(call, snapshot, change)
        return None

    def on_response(self, call: Call, result) -> None:
        change = accepted_note(call, NOTE, result)
        if change is None:
            return  # nothing was changed, or the metastore refused it
        repo = self._records.repository
        marked = tuple(p for p in change.affected if p.table not in change.propagating)  # propagated: nothing broke
        if change.propagating:
            repo.set_columns(change.propagating, change.columns)
        if change.renamed_to is not None:
            repo.follow_rename(change.target, change.renamed_to, change.problem)
        elif marked:
            repo.mark(marked, change.problem, target_gone=change.target_gone)
        if change.dropped_database is not None:
            for ref in self._records.snapshot().tables:
                if (ref.metastore, ref.db) == change.dropped_database:
                    repo.drop_table(ref)
        self._records.refresh()
        router = self._router()
        inputs = (
            [lineage.Dataset(f"hive://{change.target.metastore}", identity.client_name(router, change.target))] if change.target else []
        )
        job = f"{call.method} {call.client_db}.{call.table or ''}".strip(". ")
        if change.propagating:
            outputs = [lineage.Dataset(f"hive://{d.metastore}", identity.client_name(router, d)) for d in change.propagating]
            self._emit(lineage.run_event(job, "propagate-columns", call.session.user, inputs, outputs))
        if marked or not change.propagating:
            outputs = [self._dataset(self._records.snapshot(), p) for p in marked]
            self._emit(lineage.run_event(job, change.action, call.session.user, inputs, outputs, change.problem))

    # -- what the call changes --------------------------------------------------------------

    @staticmethod
    def _table_name(call: Call) -> str | None:
        if call.spec.creates_table:
            new = call.spec.new_table(call.args)
            return new.tableName if new is not None else None
        return call.table if isinstance(call.table, str) else None

    def _write_into_dependent(self, call: Call, snapshot: DependentSnapshot, ref: TableRef):
        name = f"{call.client_db}.{ref.table}"
        if call.spec.creates_table:
            raise Conflict(f"hmsproxy: {name} exists already: it is a dependent table")
        if call.spec.drops_table:
            raise InvalidRequest(f"hmsproxy: {name} is a dependent table: drop it with DROP DEPENDENT TABLE {name} (hmsproxy sql)")
        new = call.spec.altered_table(call.args) if call.spec.alters_table else None
        policy = (new.parameters or {}).get(model.POLICY_KEY) if new is not None else None
        if policy is not None and policy != snapshot.tables[ref].policy and new.tableName.lower() == ref.table:
            # ALTER VIEW ... SET TBLPROPERTIES ('hmsproxy.dependent.on-change'=...) from Spark or Hive.
            if policy not in model.POLICIES:
                raise InvalidRequest(f"hmsproxy: {model.POLICY_KEY} must be one of {', '.join(model.POLICIES)}, got {policy!r}")
            self._records.repository.set_policy(ref, policy)
            self._records.refresh()
            return call.spec.result_cls()
        raise InvalidRequest(
            f"hmsproxy: {name} is a dependent table (a view of the partitions it publishes): {call.method} is refused; "
            "publish partitions with ALTER TABLE ... ADD PARTITION through hmsproxy sql"
        )

    def _table_change(self, call: Call, snapshot: DependentSnapshot, ref: TableRef) -> Change | None:
        name = f"{call.client_db}.{ref.table}"
        everything = tuple(
            p for d in snapshot.dependents[ref] for p in snapshot.partitions.get(d, ()) if p.target == ref and not p.target_gone
        )
        dependents = snapshot.dependents[ref]
        if call.spec.drops_table:
            return Change("drop-table", f"dropping {name}", ref, everything, dependents, f"{name} was dropped", target_gone=True)
        if call.spec.alters_table:
            new = call.spec.altered_table(call.args)
            if new is None:
                return None
            new_db = (new.dbName or call.client_db).lower()
            if new.tableName.lower() != ref.table or new_db != call.client_db.lower():
                renamed = identity.ref_of(call.router, new_db, new.tableName)
                return Change(
                    "rename-table",
                    f"renaming {name} to {new_db}.{new.tableName.lower()}",
                    ref,
                    everything,
                    dependents,
                    f"{name} was renamed to {new_db}.{new.tableName.lower()}",
                    renamed_to=renamed,
                )
            return self._column_change(call, ref, name, new, everything, dependents)
        if call.method in PARTITION_DROPS:
            dropped = dropped_values(call, lambda: self._client_for(call))
            return self._partition_change(ref, name, snapshot, dropped)
        return None

    def _column_change(self, call: Call, ref: TableRef, name: str, new, everything, dependents) -> Change | None:
        with self._client_for(call) as client:
            try:
                current = client.call("get_table", dbname=call.client_db, tbl_name=call.table)
            except NotFound:
                return None
        after, before = columns_of(new.sd.cols if new.sd else []), columns_of(current.sd.cols if current.sd else [])
        if after == before:
            return None
        difference = column_difference(after, before)
        if difference is None:  # comments alone: nothing breaks, and only the propagate policy copies them
            snapshot = self._records.snapshot()
            following = tuple(d for d in dependents if snapshot.tables[d].policy == model.PROPAGATE)
            if not following:
                return None
            affected = tuple(p for p in everything if p.table in following)
            return Change("change-columns", f"changing the comments of {name}", ref, affected, following, "", columns=after)
        return Change(
            "change-columns",
            f"changing the columns of {name} (it would have other columns: it {difference})",
            ref,
            everything,
            dependents,
            f"the columns of {name} changed: it {difference}",
            columns=after,
        )

    @staticmethod
    def _partition_change(ref: TableRef, name: str, snapshot: DependentSnapshot, dropped: list[tuple[str, ...]]) -> Change | None:
        affected = tuple(p for p in snapshot.partitions_on(ref) if any(v[: len(p.values)] == p.values for v in dropped))
        if not affected:
            return None
        spec = ", ".join("/".join(v) for v in dropped[:NAMED])
        dependents = tuple(sorted({p.table for p in affected}))
        return Change(
            "drop-partition",
            f"dropping partition(s) {spec} of {name}",
            ref,
            affected,
            dependents,
            f"a partition of {name} was dropped ({spec})",
        )

    def _database_change(self, call: Call, snapshot: DependentSnapshot, key: tuple[str, str]) -> Change | None:
        inside = lambda ref: (ref.metastore, ref.db) == key  # noqa: E731
        targets = [t for t in snapshot.dependents if inside(t)]
        outside = tuple(sorted({d for t in targets for d in snapshot.dependents[t] if not inside(d)}))
        affected = tuple(p for d in outside for p in snapshot.partitions.get(d, ()) if inside(p.target) and not p.target_gone)
        own = any(inside(ref) for ref in snapshot.tables)
        if not outside and not own:
            return None
        return Change(
            "drop-database",
            f"dropping database {call.client_db}",
            None,
            affected,
            outside,
            f"database {call.client_db} was dropped",
            target_gone=True,
            dropped_database=key,
        )

    # -- the verdict ------------------------------------------------------------------------

    def _decide(self, call: Call, snapshot: DependentSnapshot, change: Change) -> None:
        restricting = [d for d in change.dependents if snapshot.tables[d].policy == model.RESTRICT]
        if restricting:
            router = call.router
            held = [p for p in change.affected if p.table in restricting]
            parts = [f"{identity.client_name(router, p.table)}@{snapshot.tables[p.table].spec_name(p.values)}" for p in held]
            listed = ", ".join(parts[:NAMED]) + (f" and {len(parts) - NAMED} more" if len(parts) > NAMED else "")
            tables = ", ".join(identity.client_name(router, d) for d in restricting)
            raise AccessDenied(
                f"hmsproxy: {change.what} is refused: dependent table(s) {tables} depend on it"
                + (f" (published partitions {listed})" if listed else " (for the partitions they add next)")
                + f" and their {model.POLICY_KEY} is {model.RESTRICT}; drop or re-point those partitions first, "
                f"or set {model.POLICY_KEY}=notify on them"
            )
        if change.columns is not None:
            following = tuple(d for d in change.dependents if snapshot.tables[d].policy == model.PROPAGATE)
            for d in following:
                why = self._propagation_refusal(call, snapshot, d, change)
                if why is not None:
                    raise AccessDenied(
                        f"hmsproxy: {change.what} is refused: dependent table {identity.client_name(call.router, d)} follows it "
                        f"({model.POLICY_KEY}={model.PROPAGATE}) but {why}; set {model.POLICY_KEY}=notify on it to let the change "
                        "through without propagating it"
                    )
            change = replace(change, propagating=following)
        call.notes[NOTE] = change

    @staticmethod
    def _propagation_refusal(call: Call, snapshot: DependentSnapshot, ref: TableRef, change: Change) -> str | None:
        """Why `change` can't be applied to dependent table `ref` (None: it can)."""
        dep = snapshot.tables[ref]
        others = {dep.target} | {p.target for p in snapshot.partitions.get(ref, ()) if not p.target_gone}
        others.discard(change.target)
        if others:  # its view reads the same columns from each: the others would lack the new ones
            names = ", ".join(sorted(identity.client_name(call.router, t) for t in others))
            return f"it also depends on {names}, which would not have the new columns"
        return propagation_refusal(identity.client_name(call.router, change.target), dep.columns, change.columns)

    def _dataset(self, snapshot: DependentSnapshot, p: DependentPartition) -> lineage.Dataset:
        dep = snapshot.tables.get(p.table)
        spec = dep.spec_name(p.values) if dep is not None else "/".join(p.values)
        return lineage.Dataset(f"hive://{p.table.metastore}", identity.client_name(self._router(), p.table), spec)

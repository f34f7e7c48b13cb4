"""What the dependent-table statements do: check against the metastores (as the user, through
the proxy), then change the records in the store; lineage events for what was published."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from hmsproxy.ddl.executor import StatementContext, status
from hmsproxy.ddl.results import ResultSet
from hmsproxy.ddl.statements import NOT_HMSPROXY_OBJECT
from hmsproxy.features import identity
from hmsproxy.features.columns import column_difference, type_key
from hmsproxy.features.dependent import lineage, model
from hmsproxy.features.dependent import statements as st
from hmsproxy.features.dependent.model import DependentPartition, DependentTable, TableRef, columns_of
from hmsproxy.pipeline.errors import Conflict, InvalidRequest, NotFound, ProxyError
from hmsproxy.routing.methods import METHOD_SPECS
from hmsproxy.store import AlreadyExists

if TYPE_CHECKING:
    from hmsproxy.features.dependent.snapshot import DependentRecords
    from hmsproxy.pipeline.platform import Feature
    from hmsproxy.routing.router import Router

VIEW = "VIRTUAL_VIEW"
DEPENDENCY_COLUMNS = ["partition", "depends_on", "covers", "location", "state"]
DEPENDENT_COLUMNS = ["dependent_table", "partition", "covers", "state"]
NEW_PARTITIONS = "(new partitions)"
#: Up to this many partitions in one statement are checked with a call each; more, with one listing.
COVERED_CALLS = 4


class Runners:
    """`emit(event)`: sends a lineage event; `access()`: the access feature (None without one)."""

    def __init__(
        self,
        records: DependentRecords,
        router: Callable[[], Router],
        emit: Callable[[dict], None],
        access: Callable[[], Feature | None],
    ):
        self._records = records
        self._router = router
        self._emit = emit
        self._access = access

    def runners(self) -> dict:
        return {
            st.CreateDependentTable: self.create,
            st.DropDependentTable: self.drop,
            st.AddDependentPartitions: self.add_partitions,
            st.DropDependentPartitions: self.drop_partitions,
            st.DependsOn: self.depends_on,
            st.SetProperties: self.set_properties,
            st.ShowDependencies: self.show_dependencies,
            st.ShowDependents: self.show_dependents,
            st.ShowPartitions: self.show_partitions,
            st.Describe: self.describe,
        }

    # -- helpers ---------------------------------------------------------------------------

    def _name(self, ctx: StatementContext, name: st.Name) -> tuple[str, str]:
        return name[0] or ctx.database, name[1]

    def _dependent(self, ctx: StatementContext, name: st.Name) -> tuple[str, DependentTable] | None:
        db, table = self._name(ctx, name)
        dep = self._records.snapshot().table(identity.ref_of(self._router(), db, table))
        if dep is not None:
            return db, dep
        return None

    def _require(self, ctx: StatementContext, name: st.Name, statement: str, *, hive_has_it: bool = False) -> tuple[str, DependentTable]:
        """The dependent table `name`; else NotFound, or for an ordinary table a refusal that says whose
        statement it is (`hive_has_it`: Spark and Hive have the same statement for ordinary tables)."""
        found = self._dependent(ctx, name)
        if found is not None:
            return found
        db, table = self._name(ctx, name)
        if ctx.client.exists("get_table", dbname=db, tbl_name=table):
            whose = NOT_HMSPROXY_OBJECT if hive_has_it else f"({statement} is for dependent tables)"
            raise InvalidRequest(f"hmsproxy: {db}.{table} is not a dependent table {whose}")
        raise NotFound(f"hmsproxy: dependent table {db}.{table} does not exist")

    def _check_writable(self, db: str) -> None:
        access = self._access()
        if access is not None:
            access.check(METHOD_SPECS["create_table"], self._router().route(db), db)

    def _target(self, ctx: StatementContext, name: st.Name, dependent: tuple[str, str]) -> tuple[str, str, object]:
        """The table to depend on, checked: it exists and is a table, not a view (a dependent table is one)."""
        db, table = self._name(ctx, name)
        if (db, table) == dependent:
            raise InvalidRequest(f"hmsproxy: {db}.{table} can't depend on itself")
        found = ctx.client.call("get_table", dbname=db, tbl_name=table)
        if (found.tableType or "").upper() == VIEW:
            what = "a dependent table" if (found.parameters or {}).get("hmsproxy.dependent") == "true" else "a view"
            raise InvalidRequest(
                f"hmsproxy: {db}.{table} is {what}: a dependent table depends on tables only (so dependencies can't form a cycle)"
            )
        return db, table, found

    @staticmethod
    def _check_partition_prefix(dep_name: str, target_name: str, target, columns: tuple[model.Column, ...]) -> None:
        keys = columns_of(target.partitionKeys)
        prefix = keys[: len(columns)]
        if [c.name for c in prefix] != [c.name for c in columns]:
            raise InvalidRequest(
                f"hmsproxy: {dep_name} is partitioned by ({', '.join(c.name for c in columns)}), which is not a prefix of "
                f"{target_name}'s partition columns ({', '.join(c.name for c in keys) or 'none'})"
            )
        for want, have in zip(columns, prefix):
            if want.type != have.type:
                raise InvalidRequest(
                    f"hmsproxy: partition column {want.name} is {want.type} in {dep_name} but {have.type} in {target_name}"
                )

    def _values(self, dep: DependentTable, db: str, spec: st.Spec) -> tuple[str, ...]:
        given = dict(spec)
        wanted = dep.partition_names
        if set(given) != set(wanted) or len(given) != len(spec):
            raise InvalidRequest(
                f"hmsproxy: partition ({', '.join(f'{k}={v}' for k, v in spec)}) of {db}.{dep.ref.table} must give exactly "
                f"its partition columns ({', '.join(wanted)}), the leading partition columns of what it depends on"
            )
        return tuple(given[c] for c in wanted)

    def _covered(self, ctx: StatementContext, target: TableRef, values: tuple[str, ...], *, limit: int = -1) -> list:
        """The target's partitions whose leading values are `values` (as the user sees them)."""
        db = identity.client_db(self._router(), target.metastore, target.db)
        if db is None:
            return []
        try:
            if values:
                found = ctx.client.call("get_partitions_ps", db_name=db, tbl_name=target.table, part_vals=list(values), max_parts=limit)
            else:
                found = ctx.client.call("get_partitions", db_name=db, tbl_name=target.table, max_parts=limit)
        except NotFound:
            return []
        return sorted(found or [], key=lambda p: p.values)

    def _covered_each(self, ctx: StatementContext, target: TableRef, specs: list[tuple[str, ...]]) -> dict[tuple[str, ...], list]:
        """`_covered` for several specs: beyond a few, one listing of the whole table beats a call per spec."""
        if len(specs) <= COVERED_CALLS:
            return {values: self._covered(ctx, target, values) for values in specs}
        everything = self._covered(ctx, target, ())
        found: dict[tuple[str, ...], list] = {values: [] for values in specs}
        width = len(specs[0])
        for p in everything:
            bucket = found.get(tuple(p.values[:width]))
            if bucket is not None:
                bucket.append(p)
        return found

    def _inputs(self, target: TableRef, keys: list[str], partitions: list) -> list[lineage.Dataset]:
        client = identity.client_name(self._router(), target)
        return [
            lineage.Dataset(f"hive://{target.metastore}", client, _spec_name(keys, p.values), p.sd.location if p.sd else None)
            for p in partitions
        ]

    def _inputs_of(self, ctx: StatementContext, target: TableRef, partitions: list) -> list[lineage.Dataset]:
        return self._inputs(target, self._keys(ctx, target), partitions) if partitions else []

    def _output(self, dep: DependentTable, values: tuple[str, ...] | None) -> lineage.Dataset:
        name = identity.client_name(self._router(), dep.ref)
        return lineage.Dataset(f"hive://{dep.ref.metastore}", name, dep.spec_name(values) if values is not None else None)

    # -- statements ---------------------------------------------------------------------------

    def create(self, s: st.CreateDependentTable, ctx: StatementContext) -> ResultSet:
        db, table = self._name(ctx, s.table)
        router = self._router()
        ref = identity.ref_of(router, db, table)
        self._check_writable(db)
        if self._records.snapshot().table(ref) is not None:
            if s.if_not_exists:
                return status(f"dependent table {db}.{table} exists already (IF NOT EXISTS): nothing done")
            raise Conflict(f"hmsproxy: dependent table {db}.{table} exists already")
        ctx.client.call("get_database", name=db)
        if ctx.client.exists("get_table", dbname=db, tbl_name=table):
            raise Conflict(f"hmsproxy: {db}.{table} exists already (a table or view of that name)")
        properties = dict(s.properties)
        unknown = sorted(set(properties) - {model.POLICY_KEY})
        if unknown:
            raise InvalidRequest(f"hmsproxy: a dependent table has no property {', '.join(unknown)} (known: {model.POLICY_KEY})")
        policy = _policy(properties.get(model.POLICY_KEY, model.RESTRICT))
        tdb, tname, target = self._target(ctx, s.depends_on, (db, table))
        keys = {c.name: c.type for c in columns_of(target.partitionKeys)}
        partition_columns = tuple(model.Column(n, type_key(t or keys.get(n, "string"))) for n, t in s.partition_columns)
        self._check_partition_prefix(f"{db}.{table}", f"{tdb}.{tname}", target, partition_columns)
        dep = DependentTable(ref, partition_columns, columns_of(target.sd.cols), identity.ref_of(router, tdb, tname), policy, ctx.user)
        try:
            self._records.repository.create_table(dep)
        except AlreadyExists as e:
            raise Conflict(f"hmsproxy: {e}") from None
        self._records.refresh()
        return status(f"created dependent table {db}.{table} partitioned by ({', '.join(dep.partition_names)}), depending on {tdb}.{tname}")

    def drop(self, s: st.DropDependentTable, ctx: StatementContext) -> ResultSet:
        found = self._dependent(ctx, s.table)
        db, table = self._name(ctx, s.table)
        if found is None:
            if s.if_exists:
                return status(f"no dependent table {db}.{table} (IF EXISTS): nothing done")
            return self._require(ctx, s.table, "DROP DEPENDENT TABLE")  # raises the right error
        _, dep = found
        self._check_writable(db)
        self._records.repository.drop_table(dep.ref)
        self._records.refresh()
        self._emit(lineage.run_event(s.source or "DROP DEPENDENT TABLE", "drop-table", ctx.user, [], [self._output(dep, None)]))
        return status(f"dropped dependent table {db}.{table}")

    def add_partitions(self, s: st.AddDependentPartitions, ctx: StatementContext) -> ResultSet:
        """All or nothing: every partition is checked before any is published (in one store transaction)."""
        db, dep = self._require(ctx, s.table, "ADD PARTITION", hive_has_it=True)
        self._check_writable(db)
        published = {p.values for p in self._records.snapshot().partitions.get(dep.ref, ())}
        target_name = identity.client_name(self._router(), dep.target)
        wanted: list[tuple[str, ...]] = []
        for spec in s.partitions:
            values = self._values(dep, db, spec)
            if values in published or values in wanted:
                if s.if_not_exists:
                    continue
                raise Conflict(f"hmsproxy: partition {dep.spec_name(values)} of {db}.{dep.ref.table} is published already")
            wanted.append(values)
        adding = self._covered_each(ctx, dep.target, wanted)
        for values, covered in adding.items():
            if not covered and not s.allow_empty:
                raise InvalidRequest(
                    f"hmsproxy: {target_name} has no partition {dep.spec_name(values)} yet, so publishing it would publish nothing "
                    "(add ALLOW EMPTY to publish it anyway)"
                )
        try:
            self._records.repository.add_partitions([DependentPartition(dep.ref, values, dep.target) for values in adding])
        except AlreadyExists:  # another statement published one of them meanwhile
            raise Conflict(f"hmsproxy: a partition of {db}.{dep.ref.table} was published meanwhile: nothing published") from None
        self._records.refresh()
        keys = self._keys(ctx, dep.target) if any(adding.values()) else []
        for values, covered in adding.items():
            inputs = self._inputs(dep.target, keys, covered)
            self._emit(lineage.run_event(s.source or "ADD PARTITION", "publish", ctx.user, inputs, [self._output(dep, values)]))
        done = [f"{dep.spec_name(values)} ({len(covered)} partition(s) of {target_name})" for values, covered in adding.items()]
        return status(f"published in {db}.{dep.ref.table}: " + (", ".join(done) if done else "nothing new (IF NOT EXISTS)"))

    def drop_partitions(self, s: st.DropDependentPartitions, ctx: StatementContext) -> ResultSet:
        db, dep = self._require(ctx, s.table, "DROP PARTITION", hive_has_it=True)
        self._check_writable(db)
        current = {p.values: p for p in self._records.snapshot().partitions.get(dep.ref, ())}
        dropped = []
        for spec in s.partitions:
            values = self._values(dep, db, spec)
            p = current.get(values)
            if p is None:
                if s.if_exists:
                    continue
                raise NotFound(f"hmsproxy: partition {dep.spec_name(values)} of {db}.{dep.ref.table} is not published")
            covered = self._covered(ctx, p.target, values)
            self._records.repository.drop_partition(dep.ref, values)
            self._records.refresh()
            self._emit(
                lineage.run_event(
                    s.source or "DROP PARTITION",
                    "unpublish",
                    ctx.user,
                    self._inputs_of(ctx, p.target, covered),
                    [self._output(dep, values)],
                )
            )
            dropped.append(dep.spec_name(values))
        return status(f"dropped from {db}.{dep.ref.table}: " + (", ".join(dropped) if dropped else "nothing (IF EXISTS)"))

    def depends_on(self, s: st.DependsOn, ctx: StatementContext) -> ResultSet:
        db, dep = self._require(ctx, s.table, "DEPENDS ON")
        self._check_writable(db)
        router = self._router()
        tdb, tname, target = self._target(ctx, s.depends_on, (db, dep.ref.table))
        self._check_partition_prefix(f"{db}.{dep.ref.table}", f"{tdb}.{tname}", target, dep.partition_columns)
        difference = column_difference(columns_of(target.sd.cols), dep.columns)
        if difference is not None:
            raise InvalidRequest(f"hmsproxy: {tdb}.{tname} must have the data columns of {db}.{dep.ref.table}, but it {difference}")
        new = identity.ref_of(router, tdb, tname)
        if s.partition is None:
            self._records.repository.set_table_target(dep.ref, new, dep.columns)
            self._records.refresh()
            return status(f"partitions added to {db}.{dep.ref.table} from now on depend on {tdb}.{tname}")
        values = self._values(dep, db, s.partition)
        name = dep.spec_name(values)
        if values not in {p.values for p in self._records.snapshot().partitions.get(dep.ref, ())}:
            raise NotFound(f"hmsproxy: partition {name} of {db}.{dep.ref.table} is not published")
        covered = self._covered(ctx, new, values)
        if not covered and not s.allow_empty:
            raise InvalidRequest(
                f"hmsproxy: {tdb}.{tname} has no partition {name}, so {name} would be empty (add ALLOW EMPTY to re-point it anyway)"
            )
        self._records.repository.set_partition_target(dep.ref, values, new)
        self._records.refresh()
        self._emit(
            lineage.run_event(
                s.source or "DEPENDS ON", "re-point", ctx.user, self._inputs_of(ctx, new, covered), [self._output(dep, values)]
            )
        )
        return status(f"partition {name} of {db}.{dep.ref.table} now depends on {tdb}.{tname} ({len(covered)} partition(s))")

    def set_properties(self, s: st.SetProperties, ctx: StatementContext) -> ResultSet:
        found = self._dependent(ctx, s.table)
        db, table = self._name(ctx, s.table)
        properties = dict(s.properties)
        if found is None:
            self._require(ctx, s.table, "SET TBLPROPERTIES", hive_has_it=True)  # raises: not a dependent table, or none at all
        _, dep = found
        unknown = sorted(set(properties) - {model.POLICY_KEY})
        if unknown:
            raise InvalidRequest(f"hmsproxy: a dependent table has no property {', '.join(unknown)} (known: {model.POLICY_KEY})")
        self._check_writable(db)
        policy = _policy(properties[model.POLICY_KEY])
        self._records.repository.set_policy(dep.ref, policy)
        self._records.refresh()
        return status(f"{db}.{table}: {model.POLICY_KEY} = {policy}")

    def show_partitions(self, s: st.ShowPartitions, ctx: StatementContext) -> ResultSet:
        """The published partitions, as every client's get_partition_names(_ps) has them (partitions.py)."""
        db, dep = self._require(ctx, s.table, "SHOW PARTITIONS", hive_has_it=True)
        if s.partition is None:
            names = ctx.client.call("get_partition_names", db_name=db, tbl_name=dep.ref.table, max_parts=-1)
        else:
            given = dict(s.partition)
            unknown = sorted(set(given) - set(dep.partition_names))
            if unknown:
                raise InvalidRequest(f"hmsproxy: {db}.{dep.ref.table} has no partition column {', '.join(unknown)}")
            values = [given.get(c, "") for c in dep.partition_names]
            names = ctx.client.call("get_partition_names_ps", db_name=db, tbl_name=dep.ref.table, part_vals=values, max_parts=-1)
        return ResultSet(["partition"], [[n] for n in names])

    def describe(self, s: st.Describe, ctx: StatementContext) -> ResultSet:
        """Hive's DESCRIBE layout (col_name, data_type, comment), then each published partition with
        each partition of its source it reads now (SHOW DEPENDENCIES' rows, locations left out)."""
        db, dep = self._require(ctx, s.table, "DESCRIBE", hive_has_it=True)
        blank = ["", "", ""]
        rows = [[c.name, c.type, c.comment or ""] for c in (*dep.columns, *dep.partition_columns)]
        rows += [blank, ["# Partition Information", "", ""], ["# col_name", "data_type", "comment"]]
        rows += [[c.name, c.type, c.comment or ""] for c in dep.partition_columns]
        rows += [blank, ["# Published partitions", "reads", "state"]]
        for r in self.show_dependencies(st.ShowDependencies(s.table), ctx).rows:
            partition, source, covers, _location, state = r
            rows.append([partition, f"{source}@{covers}" if covers else source, state])
        return ResultSet(["col_name", "data_type", "comment"], rows)

    def show_dependencies(self, s: st.ShowDependencies, ctx: StatementContext) -> ResultSet:
        db, dep = self._require(ctx, s.table, "SHOW DEPENDENCIES")
        router = self._router()
        partitions = self._records.snapshot().partitions.get(dep.ref, ())
        rows = []
        if s.partition is None:
            rows.append([NEW_PARTITIONS, identity.client_name(router, dep.target), "", "", f"{model.POLICY_KEY}={dep.policy}"])
        else:
            values = self._values(dep, db, s.partition)
            partitions = tuple(p for p in partitions if p.values == values)
            if not partitions:
                raise NotFound(f"hmsproxy: partition {dep.spec_name(values)} of {db}.{dep.ref.table} is not published")
        served: dict[TableRef, list] = {}
        for p in partitions:
            if not p.target_gone:
                served.setdefault(p.target, []).append(p.values)
        # Per table depended upon: one listing (or a call per partition, for a few) and its partition keys once.
        covered = {t: self._covered_each(ctx, t, specs) for t, specs in served.items()}
        keys = {t: self._keys(ctx, t) for t, found in covered.items() if any(found.values())}
        for p in partitions:
            name, target = dep.spec_name(p.values), identity.client_name(router, p.target)
            if p.target_gone:
                rows.append([name, target, "", "", f"not served: {p.problem}"])
                continue
            found = covered[p.target][p.values]
            state = _state(p, found)
            if not found:
                rows.append([name, target, "", "", state])
                continue
            rows += [[name, target, _spec_name(keys[p.target], c.values), (c.sd.location if c.sd else "") or "", state] for c in found]
        return ResultSet(list(DEPENDENCY_COLUMNS), rows)

    def _keys(self, ctx: StatementContext, target: TableRef) -> list[str]:
        db = identity.client_db(self._router(), target.metastore, target.db)
        table = ctx.client.call("get_table", dbname=db, tbl_name=target.table)
        return [k.name for k in table.partitionKeys or []]

    def show_dependents(self, s: st.ShowDependents, ctx: StatementContext) -> ResultSet:
        db, table = self._name(ctx, s.table)
        router = self._router()
        ref = identity.ref_of(router, db, table)
        snapshot = self._records.snapshot()
        rows = []
        for dref in snapshot.dependents.get(ref, ()):
            dep = snapshot.tables[dref]
            dname = identity.client_name(router, dref)
            if dep.target == ref:
                rows.append([dname, NEW_PARTITIONS, "", f"{model.POLICY_KEY}={dep.policy}"])
            published = [p for p in snapshot.partitions.get(dref, ()) if p.target == ref and not p.target_gone]
            covered, unchecked = self._covered_if_known(ctx, ref, [p.values for p in published])
            for p in published:
                name = dep.spec_name(p.values)
                if unchecked is not None:
                    rows.append([dname, name, name, p.problem or unchecked])
                    continue
                found = covered[p.values]
                rows.append([dname, name, name if found else "", _state(p, found)])
        return ResultSet(list(DEPENDENT_COLUMNS), rows)

    def _covered_if_known(self, ctx: StatementContext, target: TableRef, specs: list[tuple[str, ...]]) -> tuple[dict, str | None]:
        """(`_covered_each`, None), or ({}, why not) when the metastore can't answer: SHOW DEPENDENTS
        lists the proxy's own records, which it shows without the metastore (their state unchecked)."""
        if not specs:
            return {}, None
        try:
            return self._covered_each(ctx, target, specs), None
        except ProxyError as e:
            return {}, f"unchecked: {str(e).removeprefix('hmsproxy: ')}"


def _state(p: DependentPartition, found: list) -> str:
    """A published partition's state, the same in SHOW DEPENDENCIES and SHOW DEPENDENTS: its record's
    problem, else whether it reads anything now (`found`: the partitions it covers). An ALLOW EMPTY
    partition whose partitions don't exist (yet) is "empty", not "ok": it serves no rows, which is
    what its readers need to know."""
    return p.problem or ("ok" if found else "empty")


def _spec_name(keys: list[str], values) -> str:
    return "/".join(f"{k}={v}" for k, v in zip(keys, values))


def _policy(value: str) -> str:
    policy = value.strip().lower()
    if policy not in model.POLICIES:
        raise InvalidRequest(f"hmsproxy: {model.POLICY_KEY} must be one of {', '.join(model.POLICIES)}, got {value!r}")
    return policy

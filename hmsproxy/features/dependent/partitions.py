"""A dependent table's partitions, answered from the records: its published partitions.

A dependent table is a view only this proxy knows (view.py), so its partition reads must not go on to
the metastore, which has no such table. Each read of its partitions (names, objects, by values, by
filter, by names, one partition) is answered here in the shape Hive gives a partitioned view's
partitions; the reads that can't be answered from values alone (statistics, a serialized
expression, partition specs) are refused with the method's declared exception, saying what the
table is and which calls list its partitions.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote

from hmsproxy.features import identity
from hmsproxy.features.dependent import view
from hmsproxy.features.dependent.model import DependentPartition, DependentTable
from hmsproxy.files.partition_names import partition_name
from hmsproxy.pipeline.call import Call
from hmsproxy.pipeline.errors import InvalidRequest, NotFound
from hmsproxy.protocol import idl, partition_filter
from hmsproxy.routing.methods import METHOD_SPECS
from hmsproxy.routing.naming import split_catalog

hive = idl.hive

#: Every read of one table's partitions the IDL has: each is answered or refused for a dependent table.
READS = frozenset(n for n, s in METHOD_SPECS.items() if s.reads and s.table and "partition" in n)


@dataclass(frozen=True)
class Published:
    """One dependent table's served partitions as one call's client sees them."""

    call: Call
    table: DependentTable
    partitions: tuple[DependentPartition, ...]

    @property
    def name(self) -> str:
        return f"{split_catalog(self.call.client_db)[1]}.{self.table.ref.table}"

    def partition_name(self, p: DependentPartition) -> str:
        return partition_name(list(self.table.partition_names), dict(zip(self.table.partition_names, p.values)))

    def by_values(self, values) -> list[DependentPartition]:
        """Hive's `part_vals`: leading values, an empty one matching any value."""
        values = list(values or [])
        if len(values) > len(self.table.partition_names):
            raise InvalidRequest(f"hmsproxy: {self.name} has {len(self.table.partition_names)} partition column(s), not {len(values)}")
        return [p for p in self.partitions if all(v in ("", p.values[i]) for i, v in enumerate(values))]

    def one(self, values) -> DependentPartition:
        values = tuple(values or ())
        for p in self.partitions:
            if p.values == values:
                return p
        shown = "/".join(f"{k}={v}" for k, v in zip(self.table.partition_names, values))
        raise NotFound(f"hmsproxy: {self.name} is a dependent table with no published partition {shown or '(none given)'}")

    def by_filter(self, text: str | None) -> list[DependentPartition]:
        columns = {c.name: c.type for c in self.table.partition_columns}
        try:
            keep = partition_filter.parse(text or "", columns)
        except partition_filter.FilterError as e:
            raise InvalidRequest(f"hmsproxy: filter on dependent table {self.name}: {e}") from None
        return [p for p in self.partitions if keep(dict(zip(self.table.partition_names, p.values)))]

    def by_names(self, names) -> list[DependentPartition]:
        wanted = set(names or ())
        return [p for p in self.partitions if self.partition_name(p) in wanted]

    def by_name(self, name: str) -> DependentPartition:
        pairs = [part.split("=", 1) for part in (name or "").split("/")]
        return self.one([unquote(v) for _, v in pairs] if all(len(p) == 2 for p in pairs) else [name])

    def names(self, partitions, max_parts=None) -> list[str]:
        return [self.partition_name(p) for p in _limited(partitions, max_parts)]

    def objects(self, partitions, max_parts=None) -> list:
        return [self.partition(p) for p in _limited(partitions, max_parts)]

    def partition(self, p: DependentPartition):
        """As Hive keeps a partitioned view's partition: no location of its own (the view has none);
        the storage descriptor is the view's, which Hive's own metastore needs to be there."""
        catalog, db = split_catalog(self.call.client_db)
        router = self.call.router
        return hive.Partition(
            values=list(p.values),
            dbName=db,
            tableName=self.table.ref.table,
            createTime=int(p.published_at),
            lastAccessTime=0,
            sd=view.storage(self.table.columns),
            parameters={
                view.MARK: "true",
                f"{view.MARK}.depends-on": identity.client_name(router, p.target),
                f"{view.MARK}.state": p.problem or "ok",
            },
            privileges=None,
            catName=catalog,
        )


def _limited(partitions, max_parts):
    partitions = list(partitions)
    return partitions if max_parts is None or max_parts < 0 else partitions[:max_parts]


def _answer(published: Published, name: str, a):
    """The success value of read `name` with arguments `a`; None for a read not answered."""
    p = published
    req = getattr(a, "req", None) or getattr(a, "request", None)
    if name == "get_partition_names":
        return p.names(p.partitions, a.max_parts)
    if name == "get_partition_names_ps":
        return p.names(p.by_values(a.part_vals), a.max_parts)
    if name in ("get_partitions", "get_partitions_with_auth"):
        return p.objects(p.partitions, a.max_parts)
    if name in ("get_partitions_ps", "get_partitions_ps_with_auth"):
        return p.objects(p.by_values(a.part_vals), a.max_parts)
    if name == "get_partitions_ps_with_auth_req":
        return hive.GetPartitionsPsWithAuthResponse(partitions=p.objects(p.by_values(req.partVals), req.maxParts))
    if name == "get_partitions_by_filter":
        return p.objects(p.by_filter(a.filter), a.max_parts)
    if name == "get_partitions_by_filter_req":
        return p.objects(p.by_filter(req.filter), req.maxParts)
    if name == "get_num_partitions_by_filter":
        return len(p.by_filter(a.filter))
    if name == "get_partitions_by_names":
        return p.objects(p.by_names(a.names))
    if name == "get_partitions_by_names_req":
        return hive.GetPartitionsByNamesResult(partitions=p.objects(p.by_names(req.names)))
    if name in ("get_partition", "get_partition_with_auth"):
        return p.partition(p.one(a.part_vals))
    if name == "get_partition_req":
        return hive.GetPartitionResponse(partition=p.partition(p.one(req.partVals)))
    if name == "get_partition_by_name":
        return p.partition(p.by_name(a.part_name))
    return None


def answer(call: Call, table: DependentTable, partitions: tuple[DependentPartition, ...]):
    """The `<method>_result` of a read of `table`'s partitions, or a refusal (InvalidRequest)."""
    published = Published(call, table, tuple(p for p in partitions if not p.target_gone))
    success = _answer(published, call.spec.name, call.args)
    if success is None:
        target = identity.client_name(call.router, table.target)
        raise InvalidRequest(
            f"hmsproxy: {published.name} is a dependent table (a view hmsproxy serves over {target}): {call.spec.name} "
            "is not answered for it; get_partition_names, get_partitions and get_partitions_by_filter list its published partitions"
        )
    result = call.spec.result_cls()
    result.success = success
    call.backend = "hmsproxy"
    return result


def on_routed(call: Call, snapshot):
    """Answer (or refuse) a partition read when it names a dependent table; None otherwise."""
    if not snapshot.tables or call.route is None or not isinstance(call.table, str):
        return None
    ref = identity.routed(call.route, call.table)
    table = snapshot.tables.get(ref)
    if table is None:
        return None
    return answer(call, table, snapshot.partitions.get(ref, ()))

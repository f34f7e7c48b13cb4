"""Which partitions a partition-dropping call drops, for features that must follow them
(dependent tables' protection, indexes' index partitions). Asked before the call reaches the
metastore: afterwards an expression no longer names anything."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import unquote

from hmsproxy.pipeline.call import Call
from hmsproxy.pipeline.internal_client import InternalClient
from hmsproxy.protocol import idl

_NAMED_BY_VALUES = {
    "drop_partition": lambda a: [a.part_vals],
    "drop_partition_with_environment_context": lambda a: [a.part_vals],
    "drop_partition_by_name": lambda a: [partition_values(a.part_name)],
    "drop_partition_by_name_with_environment_context": lambda a: [partition_values(a.part_name)],
}
METHODS = frozenset({*_NAMED_BY_VALUES, "drop_partitions_req"})


def partition_values(name: str) -> tuple[str, ...]:
    """The values of a partition name such as ds=1/hr=%2F (Hive escapes special characters as %XX)."""
    return tuple(unquote(kv.split("=", 1)[1]) for kv in name.split("/"))


def dropped_values(call: Call, open_client: Callable[[], InternalClient]) -> list[tuple[str, ...]]:
    """The values of each partition `call` drops; for a drop_partitions_req by expression, a client
    from `open_client()` (as the caller) asks the metastore which partitions it means."""
    by_values = _NAMED_BY_VALUES.get(call.method)
    if by_values is not None:
        return [tuple(v) for v in by_values(call.args)]
    if call.method != "drop_partitions_req":
        return []
    parts = call.args.req.parts
    if parts is None:
        return []
    if parts.names:
        return [partition_values(n) for n in parts.names]
    values = []
    if not parts.exprs:
        return values
    with open_client() as client:
        for e in parts.exprs:
            req = idl.hive.PartitionsByExprRequest(dbName=call.client_db, tblName=call.table, expr=e.expr, maxParts=-1)
            answer = client.call("get_partitions_by_expr", req=req)
            values += [tuple(p.values) for p in answer.partitions or []]
    return values

"""The method classes `limits.method-classes` names: each call belongs to exactly one.

- statements: hmsproxy's own statements (`hmsproxy_execute`, `hmsproxy_execute_script`);
- listings: calls answering a list of databases, tables, partitions or functions, whose answers
  grow with the metastore (`get_partitions*`, `get_partition_names*`, `get_tables*`,
  `get_all_*`, `get_table_meta`, ...): the calls that load a metastore most;
- writes: calls that change metadata (`MethodSpec.writes`) and transaction calls (open, commit,
  abort, heartbeat, locks);
- reads: every other call (`get_table`, `get_database`, fb303's status calls, `set_ugi`, ...).
"""

from __future__ import annotations

from hmsproxy.routing.methods import METHOD_SPECS, TRANSACTION_CALLS, MethodSpec

CLASSES = ("reads", "writes", "listings", "statements")

STATEMENT_METHODS = frozenset({"hmsproxy_execute", "hmsproxy_execute_script"})
LISTING_PREFIXES = (
    "get_all_",
    "get_databases",
    "get_tables",
    "get_table_meta",
    "get_table_names_by_filter",
    "get_table_objects_by_name",
    "get_partitions",
    "get_partition_names",
    "fetch_partition_names",
    "get_functions",
)


def class_of(spec: MethodSpec) -> str:
    name = spec.name
    if name in STATEMENT_METHODS:
        return "statements"
    if name.startswith(LISTING_PREFIXES):
        return "listings"
    if spec.writes or (name in TRANSACTION_CALLS and not name.startswith("show_")):
        return "writes"
    return "reads"


#: Every method's class, decided once.
CLASS_OF: dict[str, str] = {name: class_of(spec) for name, spec in METHOD_SPECS.items()}
